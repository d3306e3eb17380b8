import type { Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import { isUuid, type Schema } from '../../storage/index.js';
import { type KeyResolver, publishableKeyRefused, secretKeyExposed } from '../keys/index.js';
import {
  checkOrigin,
  getTenant,
  isAllowedOrigin,
  schemeProblem,
  type Tenant,
} from '../tenants/index.js';

/** What a caller asked for when it sent the browser to the hosted page. */
export interface HostedRequest {
  tenant: Tenant;
  publishableKey: string;
  redirectUrl: URL;
  state: string | undefined;
  codeChallenge: string | undefined;
  /**
   * An OpenID Provider's sign-in (docs/design.md §14): the uid of the tenant provider's
   * interaction. The browser signs in on the hosted pages and goes back to
   * `redirectUrl`, the interaction's route on this server, with no token in the URL.
   */
  interaction?: string;
  /**
   * Where the page's forms may lead in the end (CSP form-action, which Chrome applies to
   * the redirects after a POST): the caller's origin; for an OpenID Provider's sign-in also
   * the app's redirect URI (its origin, or its scheme for a native app's private scheme).
   */
  formTo: string[];
}

/** The shape of node-oidc-provider's interaction uids (nanoid, 21 url-safe characters). */
const INTERACTION_UID = /^[A-Za-z0-9_-]{10,64}$/;

/** The route of an OpenID Provider's interaction (docs/design.md §14). */
export const interactionPath = (tenantId: string, uid: string) =>
  `/t/${tenantId}/interaction/${uid}`;

/**
 * The hosted request of an OpenID Provider's sign-in: `tenant_id` and `interaction` (the
 * provider's own cookie binds the interaction to the browser that started it).
 */
async function interactionRequest(
  deps: { database: { db: Kysely<Schema> }; authUrl: string },
  tenantId: string | undefined,
  uid: string,
): Promise<HostedRequest> {
  const expired = 'This sign-in has expired. Go back to the application and sign in again.';
  if (!tenantId || !isUuid(tenantId) || !INTERACTION_UID.test(uid))
    throw new Refusal('This sign-in link is not valid.');
  const tenant = await getTenant(deps.database.db, tenantId).catch((error: unknown) => {
    if (error instanceof LatchkeyError && error.code === 'not_found')
      throw new Refusal('This sign-in link is not valid.');
    throw error;
  });
  const row = await deps.database.db
    .selectFrom('oauth_artifacts')
    .select(['payload', 'expires_at'])
    .where('tenant_id', '=', tenant.id)
    .where('model', '=', 'Interaction')
    .where('id', '=', uid)
    .executeTakeFirst();
  if (!row || (row.expires_at !== null && row.expires_at <= Date.now()))
    throw new Refusal(expired, tenant);
  const params = (JSON.parse(row.payload) as { params?: { redirect_uri?: unknown } }).params;
  const back = typeof params?.redirect_uri === 'string' ? URL.parse(params.redirect_uri) : null;
  const redirectUrl = new URL(`${deps.authUrl}${interactionPath(tenant.id, uid)}`);
  const formTo = [redirectUrl.origin];
  // The app's redirect URI was matched exactly against its registration by the provider.
  if (back) formTo.push(back.origin === 'null' ? back.protocol : back.origin);
  return {
    tenant,
    publishableKey: '',
    redirectUrl,
    state: undefined,
    codeChallenge: undefined,
    interaction: uid,
    formTo,
  };
}

export class Refusal extends Error {
  override name = 'Refusal';
  constructor(
    message: string,
    /** The tenant of the link, once its key is known: its name is shown. */
    readonly tenant?: Tenant,
    /** A development tenant's origin that is not allowed yet: the page says how to allow it. */
    readonly originToAllow?: string,
  ) {
    super(message);
  }
}

/** Checks pk and redirect_url as docs/design.md §4.3 says; refusals are pages, never redirects. */
export async function checkHostedRequest(
  deps: { keys: KeyResolver; database: { db: Kysely<Schema> }; authUrl: string },
  query: Record<string, unknown>,
): Promise<HostedRequest> {
  const str = (name: string) =>
    typeof query[name] === 'string' ? (query[name] as string) : undefined;
  const interaction = str('interaction');
  if (interaction !== undefined) return interactionRequest(deps, str('tenant_id'), interaction);
  const pk = str('pk');
  if (!pk) throw new Refusal('This sign-in link has no publishable key (pk).');
  if (pk.startsWith('sk_')) {
    const secret = await deps.keys.resolve(pk);
    throw new Refusal(
      secretKeyExposed(
        secret?.key.kind === 'secret' ? secret : undefined,
        'The key in this link (pk)',
      ),
      secret?.tenant,
    );
  }
  const found = await deps.keys.resolvePublishable(pk);
  if (!found) {
    throw new Refusal(
      publishableKeyRefused(pk, 'This sign-in link has an unknown or revoked publishable key (pk)'),
    );
  }
  const tenant = found.tenant;
  const refuse = (message: string) => new Refusal(message, tenant);
  const dev = tenant.environment === 'development';
  const schemes = dev
    ? 'an https:// URL, or http://localhost (or 127.0.0.1) on this development tenant'
    : 'an https:// URL';
  const raw = str('redirect_url');
  if (!raw) throw refuse('This sign-in link does not say where to return (redirect_url).');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse(`The return address (redirect_url) must be an absolute URL: ${schemes}.`);
  }
  if (raw.length > defaults.hosted.redirectUrlMaxLength)
    throw refuse('The return address is too long.');
  if (url.username || url.password || raw.includes('#')) {
    throw refuse('The return address may not carry credentials or a fragment.');
  }
  if (schemeProblem(url, tenant.environment)) {
    throw refuse(`The return address (redirect_url) must be ${schemes}.`);
  }
  if (!isAllowedOrigin(tenant, url.origin)) {
    throw new Refusal(
      `${url.origin} is not an allowed origin of ${tenant.name}, so this page cannot return there.`,
      tenant,
      // The page prints the command that allows it: only for an origin that rule would take.
      dev && checkOrigin(url.origin, tenant.environment) === null ? url.origin : undefined,
    );
  }
  const state = str('state');
  if (state !== undefined && state.length > defaults.hosted.stateMaxLength)
    throw refuse('The state parameter is too long.');
  const codeChallenge = str('code_challenge');
  if (codeChallenge !== undefined) {
    if (str('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(codeChallenge)) {
      throw refuse('code_challenge must be a base64url SHA-256 (code_challenge_method=S256).');
    }
  }
  return {
    tenant,
    publishableKey: pk,
    redirectUrl: url,
    state,
    codeChallenge,
    formTo: [url.origin],
  };
}

/**
 * Whether a click on the caller's own page started this request: browsers send that page's
 * origin as the Referer of a cross-origin navigation (the default strict-origin-when-cross-
 * origin policy), and no other site can make them send it. The browser library's provider
 * buttons go straight to the provider this way (docs/design.md §10.3), protected as RFC 9700
 * section 2.1 says: the exact allowed origin, PKCE S256 and `state` keep the code for that page.
 */
export function startedOnCallerPage(request: HostedRequest, referer: string | undefined): boolean {
  if (!referer) return false;
  try {
    return new URL(referer).origin === request.redirectUrl.origin;
  } catch {
    return false;
  }
}

/** The query string that carries a hosted request from page to page. */
export function hostedQuery(request: HostedRequest): string {
  if (request.interaction !== undefined)
    return new URLSearchParams({
      tenant_id: request.tenant.id,
      interaction: request.interaction,
    }).toString();
  const q = new URLSearchParams({
    pk: request.publishableKey,
    redirect_url: request.redirectUrl.href,
  });
  if (request.state !== undefined) q.set('state', request.state);
  if (request.codeChallenge !== undefined) {
    q.set('code_challenge', request.codeChallenge);
    q.set('code_challenge_method', 'S256');
  }
  return q.toString();
}
