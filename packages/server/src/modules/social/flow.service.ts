import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import type { Kysely } from 'kysely';
import * as oauth from 'oauth4webapi';
import { defaults, socialDefaults } from '../../config/defaults.js';
import type { SecretBox } from '../../crypto/secret-box.js';
import type { Schema } from '../../storage/index.js';
import { addressBucket, type RateLimitService } from '../rate-limit/index.js';
import type { Tenant } from '../tenants/index.js';
import { type LinkDeps, SocialRefusal } from './link.service.js';
import {
  type Endpoints,
  PROVIDERS,
  type Profile,
  type ProviderCredentials,
  type ProviderId,
} from './providers/index.js';
import { inDevelopmentMode, providerCredentials } from './settings.service.js';

const timeout = () => AbortSignal.timeout(socialDefaults.providerTimeoutMs);
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();
function keySet(uri: string) {
  let set = keySets.get(uri);
  if (!set) {
    set = createRemoteJWKSet(new URL(uri), { timeoutDuration: socialDefaults.providerTimeoutMs });
    keySets.set(uri, set);
  }
  return set;
}

/** The claims of the ID token in a token response, unverified: only to pick the issuer. */
async function unverifiedIdToken(response: Response): Promise<Record<string, unknown>> {
  try {
    const body = (await response.clone().json()) as { id_token?: unknown };
    return typeof body.id_token === 'string' ? decodeJwt(body.id_token) : {};
  } catch {
    return {};
  }
}

export interface FlowDeps extends LinkDeps {
  box: SecretBox;
  limiter: RateLimitService;
  authUrl: string;
  /** LATCHKEY_PROVIDER_ENDPOINTS: server configuration only, never a tenant's. */
  providerEndpoints: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

const discovered = new Map<string, { as: oauth.AuthorizationServer; until: number }>();
const insecure = (url: string | undefined) =>
  url?.startsWith('http:') ? { [oauth.allowInsecureRequests]: true } : {};

export const callbackUrl = (authUrl: string, provider: ProviderId) =>
  `${authUrl}/oauth/${provider}/callback`;

function endpointsFor(deps: FlowDeps, provider: ProviderId, creds: ProviderCredentials): Endpoints {
  return {
    ...PROVIDERS[provider].defaults({ audience: creds.audience }),
    ...deps.providerEndpoints[provider],
  };
}

async function authorizationServer(
  deps: FlowDeps,
  provider: ProviderId,
  creds: ProviderCredentials,
) {
  const definition = PROVIDERS[provider];
  const e = endpointsFor(deps, provider, creds);
  if (definition.kind === 'oauth2') {
    const as: oauth.AuthorizationServer = {
      issuer: e.issuer ?? `https://${provider}.invalid`,
      authorization_endpoint: e.authorizationEndpoint,
      token_endpoint: e.tokenEndpoint,
    };
    return { as, endpoints: e };
  }
  const issuer = e.issuer as string;
  let entry = discovered.get(issuer);
  if (!entry || entry.until < Date.now()) {
    const url = new URL(issuer);
    const response = await oauth.discoveryRequest(url, {
      algorithm: 'oidc',
      signal: timeout(),
      ...insecure(issuer),
    });
    const as = await oauth.processDiscoveryResponse(definition.discoveryIssuer(url), response);
    entry = { as, until: Date.now() + socialDefaults.discoverySeconds * 1000 };
    discovered.set(issuer, entry);
  }
  const as: oauth.AuthorizationServer = {
    ...entry.as,
    ...(e.authorizationEndpoint ? { authorization_endpoint: e.authorizationEndpoint } : {}),
    ...(e.tokenEndpoint ? { token_endpoint: e.tokenEndpoint } : {}),
    ...(e.jwksUri ? { jwks_uri: e.jwksUri } : {}),
  };
  return { as, endpoints: e };
}

/** An admin's test flow may use a saved provider that is not enabled yet; no other flow. */
async function credentials(
  deps: FlowDeps,
  tenant: Tenant,
  provider: ProviderId,
  test = false,
): Promise<ProviderCredentials> {
  const creds = await providerCredentials(deps.db, deps.box, tenant.id, provider, {
    disabledToo: test,
  });
  if (!creds)
    throw new SocialRefusal(
      test
        ? `Save the ${PROVIDERS[provider].name} credentials before testing them.`
        : `Sign-in with ${PROVIDERS[provider].name} is turned off for this application.`,
    );
  return creds;
}

/** The origin of the provider's authorization endpoint (for a page's form-action). */
export async function authorizationOrigin(
  deps: FlowDeps,
  tenant: Tenant,
  provider: ProviderId,
  test = false,
): Promise<string> {
  // Development mode: the "provider" is our own page.
  if (await inDevelopmentMode(deps.db, tenant, provider)) return new URL(deps.authUrl).origin;
  const creds = await credentials(deps, tenant, provider, test);
  try {
    const { as } = await authorizationServer(deps, provider, creds);
    return new URL(as.authorization_endpoint as string).origin;
  } catch {
    throw new SocialRefusal(
      `${PROVIDERS[provider].name} cannot be reached right now. Try again in a moment.`,
    );
  }
}

/** Where a development-mode flow sends the browser: our own page instead of the provider. */
export const developmentPageUrl = (authUrl: string, provider: ProviderId, state: string) =>
  `${authUrl}/oauth/${provider}/development?state=${encodeURIComponent(state)}`;

/**
 * Starts a flow: PKCE, state, nonce; returns where to send the browser and the state.
 * A provider in development mode (development tenants only) sends it to our own page.
 * Each start writes a row, so one client address may start only so many per window.
 * With `testBy` (an admin's id) it is that admin's "Test sign-in", marked so in the row.
 */
export async function startFlow(
  deps: FlowDeps,
  tenant: Tenant,
  provider: ProviderId,
  input: { hostedQuery: string; ip: string; testBy?: string },
): Promise<{ url: string; state: string }> {
  const { quota, windowSeconds } = socialDefaults.startsPerAddress;
  const allowed = await deps.limiter.consume(`oauth-start:${addressBucket(input.ip)}`, [
    { name: 'oauth-start', quota, seconds: windowSeconds },
  ]);
  if (!allowed.allowed)
    throw new SocialRefusal('Too many sign-in attempts from this address; try again later.');
  const development = await inDevelopmentMode(deps.db, tenant, provider);
  let creds: ProviderCredentials | undefined;
  let as: oauth.AuthorizationServer | undefined;
  if (!development) {
    creds = await credentials(deps, tenant, provider, input.testBy !== undefined);
    try {
      ({ as } = await authorizationServer(deps, provider, creds));
    } catch {
      throw new SocialRefusal(
        `${PROVIDERS[provider].name} cannot be reached right now. Try again in a moment.`,
      );
    }
  }
  await deps.db
    .deleteFrom('oauth_flows')
    .where('expires_at', '<', Date.now() - socialDefaults.abandonedFlowSeconds * 1000)
    .execute();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const verifier = oauth.generateRandomCodeVerifier();
  const now = Date.now();
  await deps.db
    .insertInto('oauth_flows')
    .values({
      state,
      tenant_id: tenant.id,
      provider,
      nonce,
      code_verifier: verifier,
      hosted_query: input.hostedQuery,
      created_at: now,
      expires_at: now + socialDefaults.flowLifetimeSeconds * 1000,
      used_at: null,
      admin_id: input.testBy ?? null,
    })
    .execute();
  if (!as || !creds) return { url: developmentPageUrl(deps.authUrl, provider, state), state };
  const definition = PROVIDERS[provider];
  const url = new URL(as.authorization_endpoint as string);
  url.searchParams.set('client_id', creds.clientId);
  url.searchParams.set('redirect_uri', callbackUrl(deps.authUrl, provider));
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', definition.scope);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  if (definition.kind === 'oidc') url.searchParams.set('nonce', nonce);
  // OAuth 2.0 Multiple Response Type Encoding Practices, section 2.1: query is the default.
  if (definition.responseMode !== 'query')
    url.searchParams.set('response_mode', definition.responseMode);
  for (const [name, value] of Object.entries(definition.authorizationParameters))
    url.searchParams.set(name, value);
  return { url: url.href, state };
}

/** Claims the flow a callback belongs to, once; refusals for every way it can be wrong. */
export async function claimFlow(
  deps: FlowDeps,
  provider: ProviderId,
  state: string | null,
  boundState: string | undefined,
) {
  if (!state) throw new SocialRefusal('This sign-in attempt carries no state. Start again.');
  const flow = await deps.db
    .selectFrom('oauth_flows')
    .selectAll()
    .where('state', '=', state)
    .executeTakeFirst();
  if (!flow) throw new SocialRefusal('This sign-in attempt is unknown. Start again.');
  const refuse = (message: string) => new SocialRefusal(message, flow.hosted_query);
  if (flow.provider !== provider)
    throw refuse('This answer belongs to another provider. Start again.');
  if (boundState !== state)
    throw refuse('This sign-in attempt was started in another browser. Start again.');
  const claimed = await deps.db
    .updateTable('oauth_flows')
    .set({ used_at: Date.now() })
    .where('state', '=', state)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) !== 1)
    throw refuse('This sign-in attempt was used already. Start again.');
  if (flow.expires_at <= Date.now())
    throw refuse('This sign-in attempt took too long. Start again.');
  return flow;
}

/** Finishes a claimed flow: validates the answer, redeems the code, reads the profile. */
export async function finishFlow(
  deps: FlowDeps,
  tenant: Tenant,
  provider: ProviderId,
  flow: { state: string; nonce: string; code_verifier: string; admin_id: string | null },
  params: URLSearchParams,
  log: (error: unknown) => void,
): Promise<Profile> {
  const definition = PROVIDERS[provider];
  const name = definition.name;
  const error = params.get('error');
  if (error === 'access_denied' || error === 'user_cancelled_authorize') {
    throw new SocialRefusal(`You cancelled signing in with ${name}.`);
  }
  if (error) throw new SocialRefusal(`${name} could not sign you in (${error.slice(0, 60)}).`);
  const creds = await credentials(deps, tenant, provider, flow.admin_id !== null);
  try {
    const { as, endpoints } = await authorizationServer(deps, provider, creds);
    const client: oauth.Client = { client_id: creds.clientId };
    const auth = await definition.clientAuthentication(creds, as.issuer);
    const options = { signal: timeout(), ...insecure(as.token_endpoint) };
    // RFC 9207: when the provider names itself in the answer, it must be the expected one.
    const callback = oauth.validateAuthResponse(as, client, params, flow.state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth,
      callback,
      callbackUrl(deps.authUrl, provider),
      flow.code_verifier,
      options,
    );
    if (definition.kind === 'oidc') {
      const issuer = definition.tokenIssuer(as.issuer, await unverifiedIdToken(response));
      const result = await oauth.processAuthorizationCodeResponse(
        { ...as, issuer },
        client,
        response,
        { expectedNonce: flow.nonce, requireIdToken: true },
      );
      const claims = oauth.getValidatedIdTokenClaims(result) as oauth.IDToken;
      // The signature too, with the provider's published keys (oauth4webapi leaves it to TLS).
      await jwtVerify(result.id_token as string, keySet(as.jwks_uri as string), {
        issuer: claims.iss,
        audience: creds.clientId,
      });
      const refusal = definition.refusal(claims, creds);
      if (refusal) throw new SocialRefusal(refusal);
      return definition.profile(claims, params);
    }
    const result = await oauth.processAuthorizationCodeResponse(as, client, response);
    const apiBase = endpoints.apiBase as string;
    const get = async (path: string) => {
      const res = await fetch(`${apiBase}${path}`, {
        signal: timeout(),
        headers: {
          authorization: `Bearer ${result.access_token}`,
          accept: 'application/json',
          'user-agent': 'Latchkey',
        },
      });
      if (!res.ok) throw new Error(`${provider} ${path} answered ${res.status}`);
      return res.json() as Promise<unknown>;
    };
    return await definition.profile(as.issuer, get);
  } catch (problem) {
    if (problem instanceof SocialRefusal) throw problem;
    log(problem);
    throw new SocialRefusal(
      `${name} could not be reached, or answered something we could not use. Try again.`,
    );
  }
}

/** Keeps what an admin's "Test sign-in" found, for the admin's next page to show. */
export async function saveTestResult(db: Kysely<Schema>, state: string, result: unknown) {
  await db
    .updateTable('oauth_flows')
    .set({ test_result: JSON.stringify(result) })
    .where('state', '=', state)
    .execute();
}

/** What this admin's test of this tenant's provider found, or undefined. */
export async function findTestResult(
  db: Kysely<Schema>,
  test: { state: string; tenantId: string; provider: ProviderId; adminId: string },
): Promise<unknown> {
  const flow = await db
    .selectFrom('oauth_flows')
    .select(['test_result'])
    .where('state', '=', test.state.slice(0, defaults.hosted.stateMaxLength))
    .where('tenant_id', '=', test.tenantId)
    .where('provider', '=', test.provider)
    .where('admin_id', '=', test.adminId)
    .executeTakeFirst();
  return flow?.test_result ? JSON.parse(flow.test_result) : undefined;
}
