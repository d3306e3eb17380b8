import { defaults } from '../../config/defaults.js';
import { type KeyResolver, publishableKeyRefused, secretKeyExposed } from '../keys/index.js';
import { checkOrigin, isAllowedOrigin, schemeProblem, type Tenant } from '../tenants/index.js';

/** What a caller asked for when it sent the browser to the hosted page. */
export interface HostedRequest {
  tenant: Tenant;
  publishableKey: string;
  redirectUrl: URL;
  state: string | undefined;
  codeChallenge: string | undefined;
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
  deps: { keys: KeyResolver },
  query: Record<string, unknown>,
): Promise<HostedRequest> {
  const str = (name: string) =>
    typeof query[name] === 'string' ? (query[name] as string) : undefined;
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
  return { tenant, publishableKey: pk, redirectUrl: url, state, codeChallenge };
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
