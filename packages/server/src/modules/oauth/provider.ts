import { hkdfSync } from 'node:crypto';
import type { Kysely } from 'kysely';
import Provider, { type Configuration, errors } from 'oidc-provider';
import { defaults } from '../../config/defaults.js';
import type { Publisher, Schema } from '../../storage/index.js';
import { audienceOf, issuerOf, type SigningKeys } from '../sessions/index.js';
import type { Tenant } from '../tenants/index.js';
import { accountFinder, tokenClaims } from './account.js';
import { ArtifactAdapter } from './adapter.js';
import { appSecretMatches, clientMetadataOf } from './apps.service.js';

export interface ProviderDeps {
  db: Kysely<Schema>;
  /** Where ended sessions are announced (introspection caches them). */
  bus: Publisher;
  /** The public URL of the service (`PUBLIC_URL`): issuers are `{authUrl}/t/{tenant id}`. */
  authUrl: string;
  signingKeys: SigningKeys;
  /** The master secret: the provider's cookie-signing key is derived from it, per tenant. */
  secret: string;
}

/** HKDF (RFC 5869) of the master secret, one key per tenant, for Keygrip-signed cookies. */
const cookieKey = (secret: string, tenantId: string) =>
  Buffer.from(
    hkdfSync('sha256', secret, 'latchkey', `latchkey oidc cookies v1 ${tenantId}`, 32),
  ).toString('base64url');

const GRANT_TYPE_REFUSED = 'requested grant type is not allowed for this client';

/** The endpoints of docs/design.md §14, under the issuer `{auth_url}/t/{id}`. */
const ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  userinfo: '/oauth/userinfo',
  revocation: '/oauth/revoke',
  end_session: '/oauth/end-session',
  registration: '/oauth/register',
  jwks: '/.well-known/jwks.json',
};

/**
 * The OpenID Provider of one tenant (docs/design.md §14), node-oidc-provider configured
 * for Latchkey: the tenant's signing key, its apps as clients, its records in
 * `oauth_artifacts`; access tokens are RFC 9068 JWTs for the tenant's audience, signed with
 * the key that signs its other tokens. Everything node-oidc-provider would otherwise default
 * (and announce on stdout) is set.
 */
export async function createTenantProvider(deps: ProviderDeps, tenant: Tenant): Promise<Provider> {
  const { db } = deps;
  const audience = audienceOf(deps.authUrl, tenant);
  const sessionSeconds = Math.floor(defaults.sessions.lifetimeMs / 1_000);
  const configuration: Configuration = {
    adapter: (model) =>
      model === 'Client'
        ? {
            find: (id) => clientMetadataOf(db, tenant.id, id),
            // Apps are made by operators (apps.service.ts); dynamic registration is off.
            upsert: async () => {
              throw new errors.InvalidClientMetadata('dynamic registration is off');
            },
            destroy: async () => {},
            findByUid: async () => undefined,
            findByUserCode: async () => undefined,
            consume: async () => {},
            revokeByGrantId: async () => {},
          }
        : new ArtifactAdapter(deps, tenant.id, model),
    jwks: { keys: [await deps.signingKeys.activeJwk(tenant.id)] },
    cookies: {
      keys: [cookieKey(deps.secret, tenant.id)],
      // Per tenant: with one name, one tenant's provider would overwrite another's session.
      names: {
        session: `lk_op_${tenant.id}`,
        interaction: `lk_opi_${tenant.id}`,
        resume: `lk_opr_${tenant.id}`,
      },
      long: { httpOnly: true, sameSite: 'lax' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    routes: ROUTES,
    responseTypes: ['code'],
    scopes: ['openid', 'profile', 'email', 'offline_access'],
    claims: {
      openid: ['sub', 'auth_time', 'amr'],
      email: ['email', 'email_verified'],
      profile: ['name', 'picture'],
    },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    enabledJWA: { idTokenSigningAlgValues: ['RS256'] },
    clientDefaults: { id_token_signed_response_alg: 'RS256' },
    pkce: { required: () => true },
    allowOmittingSingleRegisteredRedirectUri: false,
    rotateRefreshToken: true,
    features: {
      devInteractions: { enabled: false },
      // DPoP-bound access tokens would not pass our Bearer verifiers (introspection, SDKs).
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      // Our own userinfo answers (its JWT access tokens carry an `aud`).
      userinfo: { enabled: false },
      introspection: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      registration: { enabled: false },
      clientCredentials: { enabled: true },
      revocation: {
        enabled: true,
        allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? audience,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, resource) => {
          if (resource !== audience) throw new errors.InvalidTarget();
          return {
            audience: resource,
            scope: 'openid profile email',
            accessTokenTTL: tenant.accessTokenTtl,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    // Sign-in happens on Latchkey's pages, reached from this route (outside /oauth/).
    interactions: { url: (_ctx, interaction) => `/t/${tenant.id}/interaction/${interaction.uid}` },
    findAccount: accountFinder(db, tenant),
    // The claims of docs/design.md §5's access tokens, and the Latchkey session they belong to.
    extraTokenClaims: tokenClaims(db, tenant),
    extraClientMetadata: { properties: ['latchkey_first_party'] },
    // First-party apps (made by an operator) skip consent: their grant covers what they ask.
    loadExistingGrant: async (ctx) => {
      const { oidc } = ctx;
      const id =
        oidc.result?.consent?.grantId ?? oidc.session?.grantIdFor(oidc.client?.clientId ?? '');
      const existing = id ? await oidc.provider.Grant.find(id) : undefined;
      if (!oidc.client?.latchkey_first_party || !oidc.session?.accountId) return existing;
      const grant =
        existing ??
        new oidc.provider.Grant({
          accountId: oidc.session.accountId,
          clientId: oidc.client.clientId,
        });
      grant.addOIDCScope([...oidc.requestParamOIDCScopes].join(' '));
      for (const [indicator, server] of Object.entries(oidc.resourceServers ?? {}))
        grant.addResourceScope(
          indicator,
          [...oidc.requestParamScopes].filter((s) => server.scopes.has(s)).join(' '),
        );
      await grant.save();
      return grant;
    },
    // First-party apps get a refresh token as the hosted flow's clients do; others ask for
    // offline_access (OpenID Connect Core section 11).
    issueRefreshToken: async (_ctx, client, code) =>
      client.grantTypeAllowed('refresh_token') &&
      (code.scopes.has('offline_access') || client.latchkey_first_party === true),
    formats: {
      customizers: {
        // Introspection answers `scope` as a string: a client-credentials token has none.
        jwt: async (_ctx, _token, jwt) => {
          jwt.payload.scope ??= '';
        },
      },
    },
    // A browser may call the token endpoint from the origin of one of the app's redirect URIs.
    clientBasedCORS: (_ctx, origin, client) =>
      (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin),
    renderError: async (ctx, out) => {
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = `${out.error}: ${out.error_description ?? ''}\n`;
    },
    ttl: {
      AccessToken: tenant.accessTokenTtl,
      ClientCredentials: tenant.accessTokenTtl,
      AuthorizationCode: 60,
      IdToken: tenant.accessTokenTtl,
      Interaction: 3_600,
      Session: Math.floor(defaults.hosted.browserSessionMs / 1_000),
      Grant: sessionSeconds,
      // No sliding: a refresh token chain ends when its first token would have (30 days).
      RefreshToken: (_ctx, token) =>
        Math.max((token.iiat ?? token.iat) + sessionSeconds - Math.floor(Date.now() / 1_000), 1),
    },
  };
  const provider = new Provider(issuerOf(deps.authUrl, tenant.id), configuration);
  // RFC 6749 section 5.2: a client asking for a grant type it may not use is
  // `unauthorized_client`; node-oidc-provider answers `invalid_request` (actions/token.js).
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { error?: string; error_description?: string } | undefined;
    if (
      ctx.oidc?.route === 'token' &&
      body?.error === 'invalid_request' &&
      body.error_description === GRANT_TYPE_REFUSED
    )
      ctx.body = { ...body, error: 'unauthorized_client' };
  });
  Object.defineProperty(provider.Client.prototype, 'compareClientSecret', {
    value: function (this: { clientId: string }, presented: string) {
      return appSecretMatches(db, tenant.id, this.clientId, presented);
    },
  });
  return provider;
}
