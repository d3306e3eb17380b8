import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import { returningUserOf } from '../../modules/hosted/index.js';
import { introspect } from '../../modules/introspection/index.js';
import {
  HOSTED_SIGN_OUT,
  type HostedSide,
  type ProviderPage,
} from '../../modules/oauth/provider.js';
import { addressBucket, rateLimited } from '../../modules/rate-limit/index.js';
import { endBrowserSession } from '../../modules/sessions/index.js';
import { shownLogo, type Tenant } from '../../modules/tenants/index.js';
import { getUser } from '../../modules/users/index.js';
import type { Schema } from '../../storage/index.js';
import { logoutPage, messagePage } from '../../views/hosted.js';
import { trusted } from '../../views/html.js';
import { bearerToken } from '../bearer.js';
import type { AppContext } from '../context.js';
import { browserCookie } from '../hosted/cookies.js';
import { isSecure } from '../pages/cookies.js';
import { contentSecurityPolicy } from '../pages/respond.js';
import { PUBLIC_DOCUMENT_CACHE, TenantParams, tenantOfPath } from './well-known.js';

/** Where each route goes in the tenant's provider, whose issuer is `{auth_url}/t/{id}`. */
interface Endpoint {
  url: string;
  methods: ('GET' | 'POST')[];
  operationId: string;
  summary: string;
  /** The path in the provider; by default the URL without `/t/{id}`. */
  path?: string;
  /** Browsers may call it from other origins (the provider answers the preflight). */
  cors?: boolean;
}

const ENDPOINTS: Endpoint[] = [
  {
    url: '/t/:tenantId/.well-known/openid-configuration',
    methods: ['GET'],
    operationId: 'getOpenIdConfiguration',
    summary: "The tenant's OpenID Provider metadata (OpenID Connect Discovery 1.0)",
    cors: true,
  },
  {
    url: '/.well-known/oauth-authorization-server/t/:tenantId',
    methods: ['GET'],
    operationId: 'getAuthorizationServerMetadata',
    summary: "The tenant's authorization server metadata (RFC 8414)",
    path: '/.well-known/openid-configuration',
    cors: true,
  },
  {
    url: '/t/:tenantId/oauth/authorize',
    methods: ['GET', 'POST'],
    operationId: 'oauthAuthorize',
    summary: 'Authorization endpoint (authorization code with PKCE S256)',
  },
  {
    url: '/t/:tenantId/oauth/authorize/:uid',
    methods: ['GET'],
    operationId: 'oauthAuthorizeResume',
    summary: 'Where a finished sign-in resumes its authorization request',
  },
  {
    url: '/t/:tenantId/oauth/token',
    methods: ['POST'],
    operationId: 'oauthToken',
    summary:
      'Token endpoint: authorization_code, refresh_token (rotated), client_credentials (m2m apps)',
    cors: true,
  },
  {
    url: '/t/:tenantId/oauth/revoke',
    methods: ['POST'],
    operationId: 'oauthRevoke',
    summary: 'Token revocation (RFC 7009): a refresh token ends its grant and session',
    cors: true,
  },
  {
    url: '/t/:tenantId/oauth/register',
    methods: ['POST'],
    operationId: 'oauthRegister',
    summary:
      'Dynamic client registration (RFC 7591), when the tenant turns it on (`--dynamic-registration on`)',
    cors: true,
  },
  {
    url: '/t/:tenantId/oauth/end-session',
    methods: ['GET', 'POST'],
    operationId: 'oauthEndSession',
    summary: 'RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0)',
  },
  {
    url: '/t/:tenantId/oauth/end-session/confirm',
    methods: ['POST'],
    operationId: 'oauthEndSessionConfirm',
    summary: "The logout page's answer",
  },
  {
    url: '/t/:tenantId/oauth/end-session/success',
    methods: ['GET'],
    operationId: 'oauthEndSessionSuccess',
    summary: 'Signed out, when the app gave no post_logout_redirect_uri',
  },
];

const describe = (endpoint: Endpoint, method: string) => ({
  operationId:
    endpoint.methods.length > 1 ? `${endpoint.operationId}${method}` : endpoint.operationId,
  summary: endpoint.summary,
  description:
    'Served by the tenant\'s OpenID Provider (node-oidc-provider; docs/design.md §14). OAuth errors are `{ "error", "error_description" }` (RFC 6749 section 5.2), not problem documents.',
  tags: ['oauth'],
  security: [],
  params: endpoint.url.includes(':uid')
    ? Type.Object({
        tenantId: TenantParams.properties.tenantId,
        uid: Type.String({ maxLength: 64 }),
      })
    : TenantParams,
});

/**
 * Makes a request one the tenant's provider reads as addressed to its issuer: Host and
 * scheme from PUBLIC_URL (its endpoint URLs and cookies are the issuer's even when the
 * request came in as 127.0.0.1 or through a proxy), the client's address as Fastify
 * resolved it. Any X-Forwarded-* the client sent is replaced.
 */
export function asIssuerRequest(request: FastifyRequest, publicUrl: string): IncomingMessage {
  const url = new URL(publicUrl);
  const headers = request.raw.headers;
  headers['x-forwarded-host'] = url.host;
  headers['x-forwarded-proto'] = url.protocol.slice(0, -1);
  headers['x-forwarded-for'] = request.ip;
  return request.raw;
}

/**
 * The OpenID Provider of each tenant (docs/design.md §14), mounted under its issuer
 * `{auth_url}/t/{id}`: node-oidc-provider answers these routes itself (its own body
 * parsing, errors and CORS), and our userinfo answers from the access token.
 */
export function oauthRoutes(app: FastifyInstance, ctx: AppContext) {
  const db = ctx.database.db;
  const tenantOf = (tenantId: string) => tenantOfPath(db, tenantId);

  async function serve(
    request: FastifyRequest<{ Params: { tenantId: string } }>,
    reply: FastifyReply,
    endpoint: Endpoint,
  ) {
    const tenant = await tenantOf(request.params.tenantId);
    if (endpoint.operationId === 'oauthRegister') {
      if (!tenant.dynamicRegistration)
        throw new LatchkeyError(
          'not_found',
          `Dynamic registration is off for this tenant (latchkey tenant update ${tenant.id} --dynamic-registration on)`,
        );
      // Anyone may register: a few an hour from one address.
      const decision = await ctx.limiter.consume(`register:${addressBucket(request.ip)}`, [
        { name: 'registrations', quota: defaults.oauth.registrationsPerHour, seconds: 3_600 },
      ]);
      if (!decision.allowed) {
        ctx.metrics.rateLimited.inc({ scope: 'address' });
        throw rateLimited(decision, 'Too many app registrations from this address');
      }
    }
    const provider = await ctx.oauthProviders.get(tenant);
    const raw = asIssuerRequest(request, ctx.config.publicUrl) as IncomingMessage & {
      originalUrl?: string;
    };
    const url = raw.url ?? '/';
    const query = url.includes('?') ? url.slice(url.indexOf('?')) : '';
    // node-oidc-provider takes its mount path from originalUrl less url: the issuer's path.
    raw.url = endpoint.path
      ? `${endpoint.path}${query}`
      : url.slice(`/t/${request.params.tenantId}`.length);
    raw.originalUrl = `/t/${tenant.id}${raw.url}`;
    reply.hijack();
    // The headers every answer has (app.ts); the provider sets its own cache-control.
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) reply.raw.setHeader(name, value);
    if (endpoint.url.includes('/.well-known/'))
      reply.raw.setHeader('cache-control', PUBLIC_DOCUMENT_CACHE);
    await provider.callback()(raw, reply.raw);
  }

  app.register(async (scope) => {
    // node-oidc-provider reads its own bodies (form or JSON, 56 KB at most).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    for (const endpoint of ENDPOINTS) {
      for (const method of endpoint.methods)
        scope.route<{ Params: { tenantId: string } }>({
          method,
          url: endpoint.url,
          schema: describe(endpoint, method),
          handler: (request, reply) => serve(request, reply, endpoint),
        });
      if (endpoint.cors)
        scope.route<{ Params: { tenantId: string } }>({
          method: 'OPTIONS',
          url: endpoint.url,
          schema: { hide: true },
          handler: (request, reply) => serve(request, reply, endpoint),
        });
    }
  });

  userinfoRoutes(app, ctx, tenantOf);
}

/** What a scope of the access token lets userinfo answer (OpenID Connect Core section 5.4). */
const SCOPE_CLAIMS = {
  email: ['email', 'email_verified'],
  profile: ['name'],
} as const;

const UserInfo = Type.Object(
  {
    sub: Type.String(),
    email: Type.Optional(Type.String()),
    email_verified: Type.Optional(Type.Boolean()),
    name: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
const OAuthError = Type.Object({ error: Type.String(), error_description: Type.String() });

/**
 * Userinfo (OpenID Connect Core section 5.3), ours rather than node-oidc-provider's: its
 * access tokens are §5's JWTs, checked the way introspection checks them (signature,
 * tenant, live session, enabled user), so a revoked session stops here at once.
 */
function userinfoRoutes(
  server: FastifyInstance,
  ctx: AppContext,
  tenantOf: (id: string) => Promise<Tenant>,
) {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const refuse = (reply: FastifyReply, status: 401 | 403, error: string, description: string) =>
    reply
      .code(status)
      .header('www-authenticate', `Bearer error="${error}", error_description="${description}"`)
      .send({ error, error_description: description });
  const answer = async (
    request: FastifyRequest<{ Params: { tenantId: string } }>,
    reply: FastifyReply,
  ) => {
    // Bearer tokens, never cookies: any origin may ask (the browser holds the token).
    reply.header('access-control-allow-origin', '*');
    const tenant = await tenantOf(request.params.tenantId);
    const token = bearerToken(request.headers.authorization);
    if (!token) return refuse(reply, 401, 'invalid_token', 'An access token is required');
    const claims = await introspect(ctx, tenant, token);
    // A user's token (an m2m app's has no user: nobody to describe).
    if (!claims.active || !('email' in claims))
      return refuse(reply, 401, 'invalid_token', 'The access token is not active');
    const scopes = new Set(claims.scope.split(' '));
    if (!scopes.has('openid'))
      return refuse(reply, 403, 'insufficient_scope', 'The access token lacks the openid scope');
    const user = await getUser(ctx.database.db, tenant.id, claims.sub);
    const all = {
      email: user.email,
      email_verified: user.emailVerified,
      ...(user.name ? { name: user.name } : {}),
    } as Record<string, unknown>;
    const body: Record<string, unknown> = { sub: user.id };
    for (const [scope, names] of Object.entries(SCOPE_CLAIMS))
      if (scopes.has(scope)) for (const name of names) if (name in all) body[name] = all[name];
    return reply.send(body);
  };
  const schema = (method: string) => ({
    operationId: `oauthUserinfo${method}`,
    summary: "The signed-in user's claims (OpenID Connect Core section 5.3)",
    description:
      'Bearer access token of the tenant, with the `openid` scope; the claims its scopes allow (`email`, `profile`). Errors are RFC 6750 (`WWW-Authenticate`).',
    tags: ['oauth'],
    security: [{ accessToken: [] }],
    params: TenantParams,
    response: { 200: UserInfo, 401: OAuthError, 403: OAuthError },
  });
  app.get('/t/:tenantId/oauth/userinfo', { schema: schema('Get') }, answer);
  app.post('/t/:tenantId/oauth/userinfo', { schema: schema('Post') }, answer);
  app.options('/t/:tenantId/oauth/userinfo', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .code(204)
      .header('access-control-allow-origin', '*')
      .header('access-control-allow-methods', 'GET, POST')
      .header('access-control-allow-headers', 'authorization')
      .header('access-control-max-age', '600')
      .send(),
  );
}

/**
 * The hosted pages as each tenant's provider sees them (modules/oauth/provider.ts): the
 * browser's hosted session, RP-initiated logout ending it, and the provider's pages in
 * the tenant's look under the hosted pages' CSP.
 */
export function hostedSide(deps: { db: Kysely<Schema>; authUrl: string }): HostedSide {
  const cookieOf = (
    tenant: Tenant,
    ctx: { cookies: { get(name: string, o: { signed: boolean }): string | undefined } },
  ) => ctx.cookies.get(browserCookie(deps.authUrl, tenant.id), { signed: false });
  return {
    async userOf(tenant, ctx) {
      return (await returningUserOf(deps, tenant, cookieOf(tenant, ctx)))?.id;
    },
    async signOut(tenant, ctx) {
      const value = cookieOf(tenant, ctx);
      if (!value) return;
      await endBrowserSession(deps.db, value);
      const secure = isSecure(deps.authUrl) ? '; Secure' : '';
      ctx.append(
        'set-cookie',
        `${browserCookie(deps.authUrl, tenant.id)}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure}`,
      );
    },
    render(tenant, ctx, page: ProviderPage) {
      const nonce = randomBytes(16).toString('base64');
      const pageCtx = { tenant, nonce };
      const formTo: string[] = [];
      let body: string;
      if (page.kind === 'logout') {
        const back = ctx.oidc.params?.post_logout_redirect_uri;
        const url = typeof back === 'string' ? URL.parse(back) : null;
        if (url) formTo.push(url.origin === 'null' ? url.protocol : url.origin);
        body = logoutPage({
          ctx: pageCtx,
          form: trusted(page.form),
          app: page.clientName,
          signOutField: HOSTED_SIGN_OUT,
        }).toString();
      } else if (page.kind === 'logged-out') {
        // "Stay signed in" ends only the app's grant: node-oidc-provider then names the
        // app (client_id) here, and the browser's sign-in to the tenant goes on.
        const stayed = typeof ctx.oidc.params?.client_id === 'string';
        const app = ctx.oidc.client?.clientName ?? 'The application';
        body = (
          stayed
            ? messagePage(
                pageCtx,
                'Still signed in',
                `${app} is signed out. You are still signed in to ${tenant.name} on this browser.`,
              )
            : messagePage(
                pageCtx,
                'Signed out',
                `You are signed out of ${tenant.name} on this browser.`,
              )
        ).toString();
      } else {
        // The library's words (they name the parameter at fault), what to do, and the code.
        const said = page.description ?? page.error;
        body = messagePage(
          pageCtx,
          'This sign-in cannot go on',
          `The application's request was refused: ${said}. Go back to the application and try again; if this keeps happening, tell its developers (error: ${page.error}).`,
          undefined,
          'error',
        ).toString();
      }
      const logo = shownLogo(tenant);
      ctx.type = 'text/html; charset=utf-8';
      ctx.set({
        'content-security-policy': contentSecurityPolicy(nonce, {
          formTo,
          img: logo ? new URL(logo).origin : undefined,
          referrer: 'no-referrer',
        }),
        'referrer-policy': 'no-referrer',
        'x-frame-options': 'DENY',
        'cross-origin-opener-policy': 'same-origin',
        'cache-control': 'no-store',
      });
      ctx.body = body;
    },
  };
}
