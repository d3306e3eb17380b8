import { createHash, hkdfSync } from 'node:crypto';
import type { Kysely } from 'kysely';
import Provider, {
  type Configuration,
  errors,
  interactionPolicy,
  type KoaContextWithOIDC,
} from 'oidc-provider';
import { defaults } from '../../config/defaults.js';
import type { Publisher, Schema } from '../../storage/index.js';
import { interactionPath } from '../hosted/hosted-request.js';
import { randomBase62 } from '../keys/index.js';
import { audienceOf, issuerOf, type SigningKeys } from '../sessions/index.js';
import type { Tenant } from '../tenants/index.js';
import { accountFinder, tokenClaims } from './account.js';
import { ArtifactAdapter } from './adapter.js';
import { appSecretMatches, clientMetadataOf, ID_PREFIX } from './apps.service.js';
import { registerApp } from './registration.js';

export interface ProviderDeps {
  db: Kysely<Schema>;
  /** Where ended sessions are announced (introspection caches them). */
  bus: Publisher;
  /** The public URL of the service (`PUBLIC_URL`): issuers are `{authUrl}/t/{tenant id}`. */
  authUrl: string;
  signingKeys: SigningKeys;
  /** The master secret: the provider's cookie-signing key is derived from it, per tenant. */
  secret: string;
  /** Introspection (RFC 7662) and how its callers authenticate, announced in discovery. */
  introspection?: { url: string; authMethods: readonly string[] };
  /** The hosted pages' side, once mounted in the server (http/routes/oauth.ts). */
  hosted?: HostedSide;
}

/** What the provider shows a browser, in the tenant's look. */
export type ProviderPage =
  | { kind: 'logout'; form: string; clientName: string | undefined }
  | { kind: 'logged-out' }
  | { kind: 'error'; error: string; description: string | undefined };

/**
 * The hosted pages as the provider sees them: the browser's Latchkey sign-in is the truth
 * of who is signed in (signing out on the hosted pages ends the provider's session too).
 */
export interface HostedSide {
  /**
   * The user of the browser's live hosted session, second factor done where one is due,
   * or undefined.
   */
  userOf(tenant: Tenant, ctx: KoaContextWithOIDC): Promise<string | undefined>;
  /** RP-initiated logout: ends the browser's hosted session as well. */
  signOut(tenant: Tenant, ctx: KoaContextWithOIDC): Promise<void>;
  /** Sets the answer (`ctx.body`, type, headers) of a page the provider shows. */
  render(tenant: Tenant, ctx: KoaContextWithOIDC, page: ProviderPage): void;
}

/** The headers of a page node-oidc-provider wrote itself, from what the page holds. */
function libraryPageHeaders(page: string, issuer: string): Record<string, string> {
  const scripts = [...page.matchAll(/<script(?:\s[^>]*)?>([\s\S]*?)<\/script>/g)].map(
    (match) =>
      `'sha256-${createHash('sha256')
        .update(match[1] ?? '')
        .digest('base64')}'`,
  );
  const targets = new Set<string>();
  for (const match of page.matchAll(/<form[^>]*\saction="([^"]*)"/g)) {
    const url = URL.parse((match[1] ?? '').replaceAll('&amp;', '&'), issuer);
    if (url && url.origin !== new URL(issuer).origin)
      targets.add(url.origin === 'null' ? url.protocol : url.origin);
  }
  return {
    'content-security-policy': [
      "default-src 'none'",
      scripts.length ? `script-src ${scripts.join(' ')}` : undefined,
      `form-action 'self' ${[...targets].join(' ')}`.trim(),
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ]
      .filter(Boolean)
      .join('; '),
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  };
}

/** The field our logout page adds to the library's form: the user chose to sign out here. */
export const HOSTED_SIGN_OUT = { name: 'latchkey_sign_out', value: 'hosted' } as const;

/** What a self-registered app (RFC 7591) may not ask for, and why. */
const NOT_REGISTRABLE: Record<string, string> = {
  // Each makes the server fetch a URL the registrant chose.
  sector_identifier_uri: 'pairwise subjects are not offered',
  jwks_uri: 'private_key_jwt is not offered',
  request_uris: 'request objects are not offered',
  // After logout the browser would go where the registrant says, unchecked (open redirect).
  post_logout_redirect_uris: 'registered apps are not sent anywhere after sign-out',
  latchkey_first_party: 'an operator makes first-party apps',
  latchkey_pkce_optional: 'registered apps always use PKCE',
};

function refuseRegistered(metadata: Record<string, unknown>): void {
  for (const [key, why] of Object.entries(NOT_REGISTRABLE)) {
    const value = metadata[key];
    // An app read back from `apps` says false and [] (registration.ts never stores more).
    if (value !== undefined && value !== false && !(Array.isArray(value) && value.length === 0))
      throw new errors.InvalidClientMetadata(`${key} is not accepted: ${why}`);
  }
  if (JSON.stringify(metadata).length > defaults.oauth.registrationMaxBytes)
    throw new errors.InvalidClientMetadata(
      `the registration is over ${defaults.oauth.registrationMaxBytes} bytes`,
    );
}

/**
 * The login prompt of node-oidc-provider, plus: the browser's hosted session must still be
 * live and the provider session's user (signing out of the hosted pages signs out here).
 */
function loginPolicy(tenant: Tenant, hosted: HostedSide | undefined) {
  const policy = interactionPolicy.base();
  // node-oidc-provider's consent policy stands as it is: a native app, first-party or not,
  // has the user confirm every sign-in (RFC 8252 section 8.6: a loopback port or a private
  // scheme proves nothing of which program is listening).
  const login = policy.get('login');
  if (!hosted || !login) return policy;
  login.checks.add(
    new interactionPolicy.Check(
      'hosted_session',
      'the sign-in on the hosted pages has ended',
      // What prompt=none answers (the checks the library makes itself get it too).
      'login_required',
      async (ctx) => {
        const { oidc } = ctx;
        if (!oidc.session?.accountId || oidc.result?.login)
          return interactionPolicy.Check.NO_NEED_TO_PROMPT;
        return (await hosted.userOf(tenant, ctx)) === oidc.session.accountId
          ? interactionPolicy.Check.NO_NEED_TO_PROMPT
          : interactionPolicy.Check.REQUEST_PROMPT;
      },
    ),
  );
  return policy;
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
            // Apps are made by operators (apps.service.ts), or register (RFC 7591) when the
            // tenant lets them.
            upsert: async (id, metadata) => {
              if (!tenant.dynamicRegistration)
                throw new errors.InvalidClientMetadata('dynamic registration is off');
              await registerApp(db, tenant, id, metadata);
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
      profile: ['name'],
    },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    enabledJWA: { idTokenSigningAlgValues: ['RS256'] },
    clientDefaults: { id_token_signed_response_alg: 'RS256' },
    // S256 of every public client, and of a confidential one unless it opted out.
    pkce: {
      required: (_ctx, client) =>
        client.clientAuthMethod === 'none' || client.latchkey_pkce_optional !== true,
    },
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
      rpInitiatedLogout: deps.hosted
        ? {
            enabled: true,
            logoutSource: async (ctx, form) =>
              deps.hosted?.render(tenant, ctx, {
                kind: 'logout',
                form,
                clientName: ctx.oidc.client?.clientName,
              }),
            postLogoutSuccessSource: async (ctx) =>
              deps.hosted?.render(tenant, ctx, { kind: 'logged-out' }),
          }
        : { enabled: false },
      registration: tenant.dynamicRegistration
        ? {
            enabled: true,
            initialAccessToken: false,
            idFactory: () => ID_PREFIX + randomBase62(24),
            // 256 bits, as operators' apps get; kept as its SHA-256 (registration.ts).
            secretFactory: () => randomBase62(43),
            issueRegistrationAccessToken: false,
          }
        : { enabled: false },
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
    interactions: {
      url: (_ctx, interaction) => interactionPath(tenant.id, interaction.uid),
      policy: loginPolicy(tenant, deps.hosted),
    },
    // What discovery adds to the provider's own (docs/design.md §14): our userinfo and
    // introspection (RFC 7662, which also takes the tenant's secret keys).
    discovery: {
      userinfo_endpoint: `${issuerOf(deps.authUrl, tenant.id)}${ROUTES.userinfo}`,
      ...(deps.introspection
        ? {
            introspection_endpoint: deps.introspection.url,
            introspection_endpoint_auth_methods_supported: [...deps.introspection.authMethods],
          }
        : {}),
    },
    findAccount: accountFinder(db, tenant),
    // The claims of docs/design.md §5's access tokens, and the Latchkey session they belong to.
    extraTokenClaims: tokenClaims(db, tenant),
    extraClientMetadata: {
      properties: ['latchkey_first_party', 'latchkey_pkce_optional'],
      // Runs while a registration's metadata is read, before the library fetches any URL
      // of it (sector_identifier_uri): what a self-registered app may not ask for.
      validator: (ctx, key, _value, metadata) => {
        if (key !== 'latchkey_first_party' || ctx?.oidc?.route !== 'registration') return;
        refuseRegistered(metadata);
      },
    },
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
      if (deps.hosted)
        return deps.hosted.render(tenant, ctx, {
          kind: 'error',
          error: out.error,
          description: out.error_description,
        });
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
  // Requests reach it as `asIssuerRequest` (http/routes/oauth.ts) makes them: X-Forwarded-*
  // set by us from PUBLIC_URL, never the client's, so that its URLs and Secure cookies are
  // the issuer's whatever Host the request came in with.
  provider.proxy = true;
  // The library's own pages (form_post answers, the forms it posts by itself) get the
  // headers of ours: a CSP that lets only their own inline script run and their forms go
  // where they say, never framed, no Referer.
  provider.use(async (ctx, next) => {
    await next();
    if (!ctx.response.is('html') || ctx.response.get('content-security-policy')) return;
    if (typeof ctx.body !== 'string') return;
    ctx.set(libraryPageHeaders(ctx.body, issuerOf(deps.authUrl, tenant.id)));
  });
  // RP-initiated logout that the user confirmed on our page ends the hosted session too.
  // Only there: the library also posts this form by itself (no provider session, or an
  // account switch), which must not end a hosted sign-in (a cross-site link would).
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.oidc?.body;
    if (
      ctx.oidc?.route === 'end_session_confirm' &&
      body?.logout &&
      body[HOSTED_SIGN_OUT.name] === HOSTED_SIGN_OUT.value &&
      deps.hosted
    )
      await deps.hosted.signOut(tenant, ctx as KoaContextWithOIDC);
  });
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
