import { isIP } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { getUser, verifyCredentials } from '../../modules/users/index.js';
import { authOf, rateLimitTenant, requireSecretKey } from '../auth.js';
import type { AppContext } from '../context.js';
import { problems } from '../schemas.js';
import { TokenResponse } from './models.js';

const SignInBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
const RefreshBody = Type.Object(
  { refreshToken: Type.String({ minLength: 1, maxLength: 512 }) },
  { additionalProperties: false },
);

export function sessionRoutes(app: FastifyInstance, ctx: AppContext) {
  const steps = [requireSecretKey(ctx, 'sessions:write'), rateLimitTenant(ctx)];

  app.post(
    '/v1/auth/sign-in',
    {
      schema: {
        summary: 'Sign a user in with e-mail and password; starts a session',
        description:
          'A wrong password and an unknown e-mail get the same 401 invalid_credentials. Repeated failures are slowed, then refused with 429 (README, "Sign-in failures").',
        tags: ['sessions'],
        security: [{ secretKey: [] }],
        body: SignInBody,
        response: { 200: TokenResponse, ...problems(400, 401, 403, 413, 415, 422, 429) },
      },
      onRequest: steps,
    },
    async (request) => {
      const { tenant } = authOf(request);
      const body = request.body as Static<typeof SignInBody>;
      const deps = {
        db: ctx.database.db,
        hasher: ctx.hasher,
        limiter: ctx.limiter,
        policy: ctx.signInPolicy,
      };
      // The caller is the customer's server: the end user's address comes only from the
      // caller, in Latchkey-Client-IP. Without it failures are counted per account only,
      // never per the caller's own address (that would lock out a whole tenant).
      const claimed = request.headers['latchkey-client-ip'];
      const clientIp =
        typeof claimed === 'string' && isIP(claimed.trim()) ? claimed.trim() : undefined;
      const user = await verifyCredentials(deps, tenant, { ...body, ip: clientIp });
      const tokens = await ctx.sessions.start(tenant, user, {
        ip: clientIp ?? request.ip,
        userAgent: request.headers['user-agent'],
      });
      return { ...tokens, user };
    },
  );

  app.post(
    '/v1/auth/token',
    {
      schema: {
        summary: 'Exchange a refresh token for new tokens (the refresh token rotates)',
        description:
          'Presenting a refresh token again more than 5 s after its rotation revokes its whole session; within those seconds (two tabs at once) it gets a new pair.',
        tags: ['sessions'],
        security: [{ secretKey: [] }],
        body: RefreshBody,
        response: { 200: TokenResponse, ...problems(400, 401, 403, 413, 415, 422, 429) },
      },
      onRequest: steps,
    },
    async (request) => {
      const { tenant } = authOf(request);
      const { refreshToken } = request.body as Static<typeof RefreshBody>;
      return ctx.sessions.refresh(tenant, refreshToken, (id) =>
        getUser(ctx.database.db, tenant.id, id),
      );
    },
  );

  app.post(
    '/v1/auth/sign-out',
    {
      schema: {
        summary: 'End the session of a refresh token',
        description: 'Answers 204 whether or not the token was known (RFC 7009 section 2.2).',
        tags: ['sessions'],
        security: [{ secretKey: [] }],
        body: RefreshBody,
        response: { 204: Type.Null(), ...problems(400, 401, 403, 413, 415, 422, 429) },
      },
      onRequest: steps,
    },
    async (request, reply) => {
      const { tenant } = authOf(request);
      const { refreshToken } = request.body as Static<typeof RefreshBody>;
      await ctx.sessions.signOut(tenant.id, refreshToken);
      return reply.code(204).send();
    },
  );
}
