import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import { redeemCode } from '../../modules/hosted/index.js';
import { introspect } from '../../modules/introspection/index.js';
import {
  addressBucket,
  planWindows,
  rateLimited,
  rateLimitHeaders,
} from '../../modules/rate-limit/index.js';
import { enabledProviders } from '../../modules/social/index.js';
import { isAllowedOrigin, shownLogo } from '../../modules/tenants/index.js';
import { browserProfile } from '../../modules/users/index.js';
import { requirePublishableKey } from '../auth.js';
import { bearerToken } from '../bearer.js';
import { sendCacheable } from '../cacheable.js';
import { type AppContext, hostedDeps } from '../context.js';
import { problems } from '../schemas.js';

const ConfigResponse = Type.Object({
  tenantId: Type.String(),
  name: Type.String(),
  environment: Type.String(),
  branding: Type.Object({
    logoUrl: Type.Union([Type.String(), Type.Null()]),
    primaryColor: Type.Union([Type.String(), Type.Null()]),
  }),
  providers: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      /** `development`: Latchkey's own page stands in for the provider (development tenants). */
      mode: Type.Union([Type.Literal('development'), Type.Literal('live')]),
    }),
  ),
  passwordEnabled: Type.Boolean(),
  signInUrl: Type.String(),
});

const TokenBody = Type.Object(
  {
    grant_type: Type.Union([Type.Literal('authorization_code'), Type.Literal('refresh_token')]),
    code: Type.Optional(Type.String({ maxLength: defaults.fields.codeMaxLength })),
    code_verifier: Type.Optional(Type.String({ maxLength: defaults.fields.codeMaxLength })),
    refresh_token: Type.Optional(Type.String({ maxLength: defaults.fields.tokenMaxLength })),
  },
  { additionalProperties: false },
);

const SignOutBody = Type.Object(
  { refresh_token: Type.String({ maxLength: 512 }) },
  { additionalProperties: false },
);

const ClientTokens = Type.Object({
  accessToken: Type.String(),
  tokenType: Type.Literal('Bearer'),
  expiresIn: Type.Integer(),
  refreshToken: Type.String(),
  sessionId: Type.String(),
});

const ClientUser = Type.Object({
  id: Type.String(),
  email: Type.String(),
  emailVerified: Type.Boolean(),
  name: Type.Union([Type.String(), Type.Null()]),
  picture: Type.Union([Type.String(), Type.Null()]),
  publicMetadata: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Type.String({ format: 'date-time' }),
});

/** The challenge of GET /v1/client/user (RFC 6750 section 3). */
const ACCESS_TOKEN_CHALLENGE = 'Bearer realm="latchkey", error="invalid_token"';

/** Browser endpoints: publishable key only, CORS for the tenant's allowed origins. */
export function clientRoutes(server: FastifyInstance, ctx: AppContext) {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const deps = hostedDeps(ctx);
  app.get(
    '/public/config',
    {
      schema: {
        operationId: 'getPublicConfig',
        security: [{ publishableKey: [] }],
        summary: "The tenant's public configuration, for the browser libraries",
        tags: ['client'],
        querystring: Type.Object({
          pk: Type.Optional(Type.String({ maxLength: defaults.fields.keyMaxLength })),
        }),
        response: { 200: ConfigResponse, 304: Type.Null(), ...problems(401, 403) },
      },
    },
    async (request, reply) => {
      const { tenant, publishableKey } = await requirePublishableKey(ctx, request);
      const body = {
        tenantId: tenant.id,
        name: tenant.name,
        environment: tenant.environment,
        // The logo the tenant's environment allows, as the hosted page shows it.
        branding: { ...tenant.branding, logoUrl: shownLogo(tenant) },
        providers: await enabledProviders(ctx.database.db, tenant),
        passwordEnabled: tenant.passwordEnabled,
        signInUrl: `${ctx.authUrl}/sign-in?pk=${encodeURIComponent(publishableKey)}`,
      };
      // The answer depends on the key, wherever it came from.
      reply.header('vary', 'x-latchkey-publishable-key, authorization');
      return sendCacheable(
        request,
        reply,
        body,
        `public, max-age=${defaults.client.configMaxAgeSeconds}`,
      );
    },
  );

  function cors(reply: FastifyReply, origin: string | undefined) {
    if (origin) reply.header('access-control-allow-origin', origin).header('vary', 'origin');
  }

  for (const [path, method, headers] of [
    ['/v1/client/token', 'POST', 'content-type'],
    ['/v1/client/sign-out', 'POST', 'content-type'],
    ['/v1/client/user', 'GET', 'authorization'],
  ]) {
    app.options(path as string, { schema: { hide: true } }, async (request, reply) => {
      // Preflights carry no key, so any origin may ask; the request itself is checked below.
      cors(reply, request.headers.origin);
      return reply
        .header('access-control-allow-methods', method as string)
        .header('access-control-allow-headers', `${headers}, x-latchkey-publishable-key`)
        .header('access-control-max-age', String(defaults.client.preflightMaxAgeSeconds))
        .code(204)
        .send();
    });
  }

  // The config is public: any page may read it, also with the key in a header.
  app.options('/public/config', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .header('access-control-allow-origin', '*')
      .header('access-control-allow-methods', 'GET')
      .header('access-control-allow-headers', 'x-latchkey-publishable-key, if-none-match')
      .header('access-control-max-age', String(defaults.client.preflightMaxAgeSeconds))
      .code(204)
      .send(),
  );

  /** The steps of every browser call: publishable key, allowed Origin, CORS, limit. */
  async function browserCall(request: FastifyRequest, reply: FastifyReply) {
    const origin = request.headers.origin;
    // The sending page may read what comes back, refusals included (a 401 for its key, a 403
    // for its origin): they hold nothing but what the page sent, nothing is done or issued
    // before them, and without credentials no cookie rides along. So the library can say
    // "allow it: latchkey tenant update …" instead of a bare network error. Everything past
    // these checks is answered to allowed origins only.
    cors(reply, origin);
    const found = await requirePublishableKey(ctx, request);
    // Browsers send Origin on every cross-origin POST (Fetch standard, "serializing a
    // request origin"); a request without one is no browser's and gets nothing here.
    if (origin === undefined) {
      throw new LatchkeyError('forbidden', 'Send the Origin of the page (browsers do)');
    }
    if (!isAllowedOrigin(found.tenant, origin)) {
      throw new LatchkeyError('forbidden', `${origin} is not an allowed origin of this tenant`);
    }
    // Browsers share a public key: count them per address, apart from the tenant's
    // secret-key budget, so that nobody holding the pk can use that up.
    const decision = await ctx.limiter.consumePlan(
      `client:${found.tenant.id}:${addressBucket(request.ip)}`,
      planWindows(found.tenant.limits),
    );
    reply.headers(rateLimitHeaders(decision));
    if (!decision.allowed) throw rateLimited(decision, 'Too many requests from this address');
    return { tenant: found.tenant, origin };
  }

  app.post(
    '/v1/client/token',
    {
      schema: {
        operationId: 'exchangeClientToken',
        security: [{ publishableKey: [] }],
        summary: 'Browser token endpoint: redeem a PKCE sign-in code, or rotate a refresh token',
        description:
          'grant_type=authorization_code with code and code_verifier (RFC 7636, S256), or grant_type=refresh_token. Publishable key; the Origin must be an allowed origin of the tenant.',
        tags: ['client'],
        body: TokenBody,
        response: { 200: ClientTokens, ...problems(400, 401, 403, 415, 422, 429) },
      },
    },
    async (request, reply) => {
      const { tenant, origin } = await browserCall(request, reply);
      const body = request.body;
      if (body.grant_type === 'authorization_code') {
        if (!body.code || !body.code_verifier)
          throw new LatchkeyError('invalid_request', 'Send code and code_verifier');
        const tokens = await redeemCode(deps, tenant, {
          code: body.code,
          codeVerifier: body.code_verifier,
          origin,
        });
        if (!tokens)
          throw new LatchkeyError(
            'invalid_grant',
            'The code is not valid, was used already, has expired, or does not match the verifier',
          );
        return tokens;
      }
      if (!body.refresh_token) throw new LatchkeyError('invalid_request', 'Send refresh_token');
      return ctx.sessions.refresh(tenant, body.refresh_token, 'browser');
    },
  );

  app.post(
    '/v1/client/sign-out',
    {
      schema: {
        operationId: 'clientSignOut',
        security: [{ publishableKey: [] }],
        summary: 'Browser sign-out: end the session of a refresh token',
        description:
          'Publishable key; the Origin must be an allowed origin of the tenant. The access tokens of the session introspect inactive at once. Answers 204 whether or not the token was known (RFC 7009 section 2.2); a refresh token issued to a server (POST /v1/auth/sign-in) is refused with 400 invalid_grant and stays valid.',
        tags: ['client'],
        body: SignOutBody,
        response: { 204: Type.Null(), ...problems(400, 401, 403, 415, 422, 429) },
      },
    },
    async (request, reply) => {
      const { tenant } = await browserCall(request, reply);
      const { refresh_token } = request.body;
      await ctx.sessions.signOut(tenant.id, refresh_token, 'browser');
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/client/user',
    {
      schema: {
        operationId: 'getClientUser',
        security: [{ publishableKey: [], accessToken: [] }],
        summary: "The signed-in user's profile, for the browser",
        description:
          "Publishable key (X-Latchkey-Publishable-Key) and the user's access token (Authorization: Bearer); the Origin must be an allowed origin of the tenant. An access token that introspects inactive (expired, revoked, of another tenant, its user disabled or deleted) is refused with 401. Of the user's metadata only its `public` member (when an object) is shown, as publicMetadata. `picture` is the https picture URL of the user's most recently used provider identity that has one, else null.",
        tags: ['client'],
        response: { 200: ClientUser, ...problems(401, 403, 429) },
      },
    },
    async (request, reply) => {
      const { tenant } = await browserCall(request, reply);
      const token = bearerToken(request.headers.authorization);
      const claims = token === undefined ? undefined : await introspect(ctx, tenant, token);
      if (!claims?.active) {
        throw new LatchkeyError(
          'unauthorized',
          token === undefined
            ? "Send the user's access token as Authorization: Bearer …"
            : 'The access token is not valid, has expired or its session has ended; sign in again',
          { headers: { 'www-authenticate': ACCESS_TOKEN_CHALLENGE } },
        );
      }
      const profile = await browserProfile(ctx.database.db, tenant.id, claims.sub);
      // Deleted since its session was read: the token is no longer anyone's.
      if (!profile) {
        throw new LatchkeyError('unauthorized', 'The access token is not valid; sign in again', {
          headers: { 'www-authenticate': ACCESS_TOKEN_CHALLENGE },
        });
      }
      return profile;
    },
  );
}
