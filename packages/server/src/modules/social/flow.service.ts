import { createRemoteJWKSet, decodeJwt, importPKCS8, jwtVerify, SignJWT } from 'jose';
import type { Kysely } from 'kysely';
import * as oauth from 'oauth4webapi';
import type { SecretBox } from '../../crypto/secret-box.js';
import type { Schema } from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import { SocialRefusal } from './link.service.js';
import { facebookProfile, githubProfile, profileFromIdToken } from './profiles.js';
import { type Endpoints, PROVIDERS, type Profile, type ProviderId } from './providers/index.js';
import { providerCredentials } from './settings.service.js';

const FLOW_LIFETIME_MS = 10 * 60_000;
/** A provider that hangs gets a "could not be reached" page, not a stuck browser. */
const timeout = () => AbortSignal.timeout(10_000);
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();
function keySet(uri: string) {
  let set = keySets.get(uri);
  if (!set) {
    set = createRemoteJWKSet(new URL(uri), { timeoutDuration: 10_000 });
    keySets.set(uri, set);
  }
  return set;
}
/** Microsoft's directory of personal accounts. */
const MS_CONSUMERS = '9188040d-6c67-4c5b-b112-36a304b66dad';

/** The token's directory must be one the tenant's audience admits, whatever the endpoints. */
function admitsDirectory(audience: string | null, tid: unknown): boolean {
  if (typeof tid !== 'string' || !GUID.test(tid)) return false;
  if (!audience || audience === 'common') return true;
  if (audience === 'consumers') return tid === MS_CONSUMERS;
  if (audience === 'organizations') return tid !== MS_CONSUMERS;
  return tid === audience;
}
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MS_MULTI = /\/(common|organizations|consumers)\/v2\.0\/?$/;
const MS_TEMPLATE = (url: URL) => url.href.replace(MS_MULTI, '/{tenantid}/v2.0');

/**
 * Microsoft: a token's issuer is the user's own directory. With a multi-tenant template
 * (`…/{tenantid}/v2.0`) the expected issuer is the template filled with the token's own
 * `tid`, which must be a GUID; oauth4webapi then checks `iss` against exactly that.
 */
async function issuerForToken(
  as: oauth.AuthorizationServer,
  response: Response,
): Promise<oauth.AuthorizationServer> {
  if (!as.issuer.includes('{tenantid}')) return as;
  const body = (await response
    .clone()
    .json()
    .catch(() => ({}))) as { id_token?: unknown };
  const tid = typeof body.id_token === 'string' ? decodeJwt(body.id_token).tid : undefined;
  if (typeof tid !== 'string' || !GUID.test(tid))
    throw new Error('Microsoft ID token without a directory (tid)');
  return { ...as, issuer: as.issuer.replace('{tenantid}', tid) };
}

export interface FlowDeps {
  db: Kysely<Schema>;
  box: SecretBox;
  authUrl: string;
  /** LATCHKEY_PROVIDER_ENDPOINTS: server configuration only, never a tenant's. */
  providerEndpoints: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

type Credentials = NonNullable<Awaited<ReturnType<typeof providerCredentials>>>;

const discovered = new Map<string, { as: oauth.AuthorizationServer; until: number }>();
const insecure = (url: string | undefined) =>
  url?.startsWith('http:') ? { [oauth.allowInsecureRequests]: true } : {};

export const callbackUrl = (authUrl: string, provider: ProviderId) =>
  `${authUrl}/oauth/${provider}/callback`;

function endpointsFor(deps: FlowDeps, provider: ProviderId, creds: Credentials): Endpoints {
  return {
    ...PROVIDERS[provider].defaults({ audience: creds.audience }),
    ...deps.providerEndpoints[provider],
  };
}

async function authorizationServer(deps: FlowDeps, provider: ProviderId, creds: Credentials) {
  const e = endpointsFor(deps, provider, creds);
  if (PROVIDERS[provider].kind === 'oauth2') {
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
    // Microsoft's common, organizations and consumers documents name a `{tenantid}` template
    // as their issuer; URL encoding of the braces is the same on both sides of the check.
    const expected =
      provider === 'microsoft' && MS_MULTI.test(issuer) ? new URL(MS_TEMPLATE(url)) : url;
    const as = await oauth.processDiscoveryResponse(expected, response);
    entry = { as, until: Date.now() + 10 * 60_000 };
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

/** Apple: the client secret is an ES256 JWT signed with the team's key (five minutes). */
async function clientSecret(
  provider: ProviderId,
  creds: Credentials,
  as: oauth.AuthorizationServer,
) {
  if (provider !== 'apple') return creds.secret;
  const key = await importPKCS8(creds.secret, 'ES256');
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: creds.keyId ?? '' })
    .setIssuer(creds.teamId ?? '')
    .setSubject(creds.clientId)
    .setAudience(as.issuer)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(key);
}

async function credentials(
  deps: FlowDeps,
  tenant: Tenant,
  provider: ProviderId,
): Promise<Credentials> {
  const creds = await providerCredentials(deps.db, deps.box, tenant.id, provider);
  if (!creds)
    throw new SocialRefusal(
      `Sign-in with ${PROVIDERS[provider].name} is turned off for this application.`,
    );
  return creds;
}

/** The origin of the provider's authorization endpoint (for a page's form-action). */
export async function authorizationOrigin(
  deps: FlowDeps,
  tenant: Tenant,
  provider: ProviderId,
): Promise<string> {
  const creds = await credentials(deps, tenant, provider);
  try {
    const { as } = await authorizationServer(deps, provider, creds);
    return new URL(as.authorization_endpoint as string).origin;
  } catch {
    throw new SocialRefusal(
      `${PROVIDERS[provider].name} cannot be reached right now. Try again in a moment.`,
    );
  }
}

/** Starts a flow: PKCE, state, nonce; returns where to send the browser and the state. */
export async function startFlow(
  deps: FlowDeps,
  tenant: Tenant,
  provider: ProviderId,
  hostedQuery: string,
): Promise<{ url: string; state: string }> {
  const creds = await credentials(deps, tenant, provider);
  let as: oauth.AuthorizationServer;
  try {
    ({ as } = await authorizationServer(deps, provider, creds));
  } catch {
    throw new SocialRefusal(
      `${PROVIDERS[provider].name} cannot be reached right now. Try again in a moment.`,
    );
  }
  // Attempts never finished (closed tabs, link prefetchers) are dropped after a day.
  await deps.db
    .deleteFrom('oauth_flows')
    .where('expires_at', '<', Date.now() - 24 * 60 * 60_000)
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
      hosted_query: hostedQuery,
      created_at: now,
      expires_at: now + FLOW_LIFETIME_MS,
      used_at: null,
    })
    .execute();
  const url = new URL(as.authorization_endpoint as string);
  url.searchParams.set('client_id', creds.clientId);
  url.searchParams.set('redirect_uri', callbackUrl(deps.authUrl, provider));
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', PROVIDERS[provider].scope);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  if (PROVIDERS[provider].kind === 'oidc') url.searchParams.set('nonce', nonce);
  if (provider === 'apple') url.searchParams.set('response_mode', 'form_post');
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
  flow: { state: string; nonce: string; code_verifier: string },
  params: URLSearchParams,
  log: (error: unknown) => void,
): Promise<Profile> {
  const name = PROVIDERS[provider].name;
  const error = params.get('error');
  if (error === 'access_denied' || error === 'user_cancelled_authorize') {
    throw new SocialRefusal(`You cancelled signing in with ${name}.`);
  }
  if (error) throw new SocialRefusal(`${name} could not sign you in (${error.slice(0, 60)}).`);
  const creds = await credentials(deps, tenant, provider);
  try {
    const { as, endpoints } = await authorizationServer(deps, provider, creds);
    const client: oauth.Client = { client_id: creds.clientId };
    const auth = oauth.ClientSecretPost(await clientSecret(provider, creds, as));
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
    if (PROVIDERS[provider].kind === 'oidc') {
      const result = await oauth.processAuthorizationCodeResponse(
        await issuerForToken(as, response),
        client,
        response,
        {
          expectedNonce: flow.nonce,
          requireIdToken: true,
        },
      );
      const claims = oauth.getValidatedIdTokenClaims(result) as oauth.IDToken;
      // The signature too, with the provider's published keys (oauth4webapi leaves it to TLS).
      await jwtVerify(result.id_token as string, keySet(as.jwks_uri as string), {
        issuer: claims.iss,
        audience: creds.clientId,
      });
      if (provider === 'microsoft' && !admitsDirectory(creds.audience, claims.tid)) {
        throw new SocialRefusal(
          'This Microsoft account belongs to a directory this application does not admit.',
        );
      }
      return profileFromIdToken(provider, claims, { appleUser: params.get('user') ?? undefined });
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
    return provider === 'github'
      ? await githubProfile(as.issuer, get)
      : await facebookProfile(as.issuer, get);
  } catch (problem) {
    if (problem instanceof SocialRefusal) throw problem;
    log(problem);
    throw new SocialRefusal(
      `${name} could not be reached, or answered something we could not use. Try again.`,
    );
  }
}
