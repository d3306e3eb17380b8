import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import { signIn, verifySignIn } from '../../modules/sessions/index.js';
import { authOf, rateLimitTenant, requireSecretKey } from '../auth.js';
import { type AppContext, accountDeps } from '../context.js';
import { replayedBody, settledBy } from '../fast-path.js';
import { problems } from '../schemas.js';
import { claimedClientIp } from '../sign-in-fast-path.js';
import { TokenResponse } from './models.js';

const SignInBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: defaults.email.maxLength }),
    password: Type.String({ minLength: 1, maxLength: defaults.password.maxLength }),
  },
  { additionalProperties: false },
);
const VerifyBody = Type.Object(
  {
    mfaToken: Type.String({ minLength: 1, maxLength: defaults.fields.tokenMaxLength }),
    code: Type.String({
      minLength: 1,
      maxLength: 32,
      description: "An authenticator app's 6 digits, or a recovery code",
    }),
  },
  { additionalProperties: false },
);
const RefreshBody = Type.Object(
  { refreshToken: Type.String({ minLength: 1, maxLength: defaults.fields.tokenMaxLength }) },
  { additionalProperties: false },
);

export function sessionRoutes(server: FastifyInstance, ctx: AppContext) {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const deps = accountDeps(ctx);
  const steps = [requireSecretKey(ctx, 'sessions:write'), rateLimitTenant(ctx)];

  app.post(
    '/v1/auth/sign-in',
    {
      schema: {
        operationId: 'signIn',
        summary: 'Sign a user in with e-mail and password; starts a session',
        description:
          'A wrong password and an unknown e-mail get the same 401 invalid_credentials. Repeated failures are slowed, then refused with 429 (README, "Sign-in failures"). A user with a second factor gets 403 mfa_required with mfaToken and factors: finish at POST /v1/auth/sign-in/verify. Under the required policy a user without one gets 403 mfa_setup_required with userId.',
        tags: ['sessions'],
        security: [{ secretKey: [] }],
        body: SignInBody,
        response: { 200: TokenResponse, ...problems(400, 401, 403, 413, 415, 422, 429) },
      },
      onRequest: steps,
      // A body the fast path read before handing the request over is parsed from memory.
      preParsing: (request, _reply, payload, done) =>
        done(null, replayedBody(request.raw) ?? payload),
    },
    async (request) => {
      const { tenant } = authOf(request);
      // The fast path (http/sign-in-fast-path.ts) signed this one in already, and was refused.
      const settled = settledBy(request.raw);
      if (settled) throw settled.error;
      // The caller is the customer's server: the end user's address comes only from the
      // caller, in Latchkey-Client-IP. Without it failures are counted per account only,
      // never per the caller's own address (that would lock out a whole tenant).
      const clientIp = claimedClientIp(request.headers['latchkey-client-ip']);
      return signIn(deps, tenant, {
        ...request.body,
        ip: clientIp,
        sessionIp: clientIp ?? request.ip,
        userAgent: request.headers['user-agent'],
      });
    },
  );

  app.post(
    '/v1/auth/sign-in/verify',
    {
      schema: {
        operationId: 'verifySignIn',
        summary: 'Finish a sign-in with its second factor: the mfaToken and a code',
        description:
          'The mfaToken of a 403 mfa_required works once, for 5 minutes, on its tenant. A wrong code is 401 invalid_code; 5 wrong codes end the mfaToken (429), and the account allows 10 per 15 minutes over all its sign-ins.',
        tags: ['sessions'],
        security: [{ secretKey: [] }],
        body: VerifyBody,
        response: { 200: TokenResponse, ...problems(400, 401, 403, 413, 415, 422, 429) },
      },
      onRequest: steps,
    },
    async (request) => {
      const clientIp = claimedClientIp(request.headers['latchkey-client-ip']);
      return verifySignIn(deps, authOf(request).tenant, {
        ...request.body,
        ip: clientIp ?? request.ip,
        userAgent: request.headers['user-agent'],
      });
    },
  );

  app.post(
    '/v1/auth/token',
    {
      schema: {
        operationId: 'refreshTokens',
        summary: 'Exchange a refresh token for new tokens (the refresh token rotates)',
        description:
          'Presenting a refresh token again more than 5 s after its rotation revokes its whole session; within those seconds (two tabs at once) it gets a new pair.',
        tags: ['sessions'],
        security: [{ secretKey: [] }],
        body: RefreshBody,
        response: { 200: TokenResponse, ...problems(400, 401, 403, 413, 415, 422, 429) },
      },
      onRequest: steps,
      // A body the fast path read before handing the request over is parsed from memory.
      preParsing: (request, _reply, payload, done) =>
        done(null, replayedBody(request.raw) ?? payload),
    },
    async (request) => {
      return ctx.sessions.refresh(authOf(request).tenant, request.body.refreshToken, 'server');
    },
  );

  app.post(
    '/v1/auth/sign-out',
    {
      schema: {
        operationId: 'signOut',
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
      await ctx.sessions.signOut(authOf(request).tenant.id, request.body.refreshToken);
      return reply.code(204).send(null);
    },
  );
}
