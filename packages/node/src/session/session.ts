import { decodeJwt, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';
import { cachedJwks } from '../jwks.js';
import {
  type LatchkeySessionConfig,
  parseUrl,
  type ResolvedSessionConfig,
  resolveSessionConfig,
} from './config.js';
import {
  type CookieSource,
  clearChunked,
  clearCookie,
  cookieHeaderOf,
  cookieHeaderWith,
  readChunked,
  readCookies,
  setCookie,
  writeChunked,
} from './cookies.js';
import {
  callbackProblem,
  isGrantEnded,
  ProviderClient,
  randomCodeVerifier,
  randomNonce,
  randomState,
  type TokenSet,
} from './provider.js';
import { Sealer } from './seal.js';

/** The signed-in person, from the session's access token (checked against the tenant's keys). */
export interface Session {
  /** The user's id (`sub`). */
  userId: string;
  /** The Latchkey session's id (`sid`); revoking it in Latchkey ends this cookie session at its next refresh. */
  sessionId: string;
  email: string;
  /** Every claim of the verified access token (RFC 9068 and docs/design.md §5). */
  claims: JWTPayload;
  /** The access token, to call your API with; never put it in a URL or a log. */
  accessToken: string;
  /** When the access token expires, in seconds since the epoch. */
  expiresAt: number;
  /** The access token (fresh: `getSession()` refreshed it if it was about to expire). */
  getToken(): Promise<string>;
}

export interface SessionResult {
  session: Session | null;
  /** Set-Cookie values to send with the response (a refreshed or a cleared session). */
  setCookie: string[];
  /**
   * When the session cookie changed: the request's `Cookie` header as it would be with the
   * new cookie, for a middleware to pass on to the rest of this request (Next.js server
   * components then read the refreshed session instead of refreshing again).
   */
  cookieHeader?: string | undefined;
}

export interface LatchkeySession {
  /** Answers sign-in, callback and sign-out under `basePath`; undefined for any other path. */
  handle(request: Request): Promise<Response | undefined>;
  /** The session of the request's cookie, refreshed when about to expire. */
  getSession(source: CookieSource): Promise<SessionResult>;
  /** An absolute URL of the sign-in route that comes back to `returnTo` (a same-origin path). */
  signInUrl(returnTo?: string): string;
  /** The resolved configuration (basePath, cookie name, app origin). */
  readonly config: ResolvedSessionConfig;
}

/** What the session cookie holds, sealed (seal.ts). */
interface StoredSession {
  sid: string;
  at: string;
  rt?: string | undefined;
}

/** What the sign-in transaction cookie holds until the callback. */
interface Transaction {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
}

const TRANSACTION_SECONDS = 600;
/** The longest `returnTo` kept; a longer one comes back to `/`. */
const RETURN_TO_MAX = 1_024;
/**
 * A refresh's result is kept this long for requests still carrying the refresh token it
 * used (sent before the browser had the new cookie, or whose response was lost): they share
 * it instead of presenting a rotated refresh token, which the provider takes as a replay
 * after its 5 s grace and answers by revoking the grant (docs/design.md §14).
 */
const RECENT_REFRESH_MS = 60_000;
/** At most this many sessions' refreshes are remembered (the oldest are dropped first). */
const MAX_REMEMBERED = 10_000;

interface Stored {
  kind: 'ok';
  stored: StoredSession;
  sealed: string;
  claims: JWTPayload;
}
type RefreshOutcome = Stored | { kind: 'ended' } | { kind: 'failed' };

/** docs/design.md §15: the cookie session shared by `@latchkey/nextjs` and the Node middleware. */
export function createLatchkeySession(input: LatchkeySessionConfig): LatchkeySession {
  const config = resolveSessionConfig(input);
  const provider = new ProviderClient(config);
  // Keys bound to this issuer, app and cookie: apps that share a cookie secret cannot open
  // each other's cookies.
  const sealer = new Sealer(
    config.cookieSecret,
    config.now,
    `${config.issuer.href} ${config.clientId} ${config.cookieName}`,
  );
  const redirectUri = `${config.appOrigin}${config.basePath}/callback`;
  const cookieOptions = { secure: config.secure, maxAge: config.maxAgeSeconds };
  const txPrefix = `${config.cookieName}_tx_`;
  // Sent only to the callback: sign-ins left unfinished never weigh on the app's requests.
  const callbackPath = `${config.basePath}/callback`;
  const flights = new Map<string, { rt: string; outcome: Promise<RefreshOutcome>; at: number }>();
  let jwks: JWTVerifyGetKey | undefined;

  const nowSeconds = () => config.now() / 1000;

  async function verify(accessToken: string): Promise<JWTPayload> {
    if (!jwks) jwks = cachedJwks(provider.jwksUri(await provider.metadata()), config.fetch);
    const { payload } = await jwtVerify(accessToken, jwks, {
      algorithms: ['RS256'],
      typ: 'at+jwt',
      issuer: config.issuer.href,
      audience: config.audience,
      requiredClaims: ['exp', 'sub', 'sid'],
      clockTolerance: config.clockToleranceSeconds,
      currentDate: new Date(config.now()),
    });
    // Another app's session (two apps of a tenant under one cookie secret) is not this one's.
    if (payload.client_id !== config.clientId)
      throw new errors.JWTClaimValidationFailed('client_id', payload, 'client_id');
    return payload;
  }

  function toSession(stored: StoredSession, claims: JWTPayload): Session {
    return {
      userId: String(claims.sub),
      sessionId: String(claims.sid),
      email: typeof claims.email === 'string' ? claims.email : '',
      claims,
      accessToken: stored.at,
      expiresAt: Number(claims.exp),
      getToken: async () => stored.at,
    };
  }

  async function store(tokens: TokenSet, previous?: StoredSession): Promise<Stored> {
    let claims: JWTPayload;
    try {
      claims = await verify(tokens.accessToken);
    } catch (error) {
      // Straight from the token endpoint (TLS, client authentication): when only the keys are
      // out of reach the tokens are kept, since the refresh token they replace is spent.
      if (!isKeyProblem(error)) throw error;
      config.onError(error);
      claims = decodeJwt(tokens.accessToken);
    }
    const stored: StoredSession = {
      sid: String(claims.sid),
      at: tokens.accessToken,
      rt: tokens.refreshToken ?? previous?.rt,
    };
    return {
      kind: 'ok',
      stored,
      claims,
      sealed: await sealer.seal({ ...stored }, 'session', config.maxAgeSeconds),
    };
  }

  /** One refresh per session at a time in this process (docs/design.md §15). */
  function refreshOnce(stored: StoredSession): Promise<RefreshOutcome> {
    const refreshToken = stored.rt as string;
    const now = config.now();
    for (const [sid, flight] of flights) {
      if (now - flight.at > RECENT_REFRESH_MS) flights.delete(sid);
    }
    const current = flights.get(stored.sid);
    if (current && current.rt === refreshToken) return current.outcome;
    const outcome = (async (): Promise<RefreshOutcome> => {
      try {
        return await store(await provider.refresh(refreshToken), stored);
      } catch (error) {
        // invalid_grant: the session was revoked in Latchkey, or the grant ended.
        if (isGrantEnded(error)) return { kind: 'ended' };
        config.onError(error);
        return { kind: 'failed' };
      }
    })();
    const flight = { rt: refreshToken, outcome, at: now };
    flights.delete(stored.sid);
    flights.set(stored.sid, flight);
    if (flights.size > MAX_REMEMBERED) flights.delete(flights.keys().next().value as string);
    // The result is shared for a little while after it settles, from when it settled; a
    // failure (the provider out of reach) is forgotten, so the next request tries again.
    void outcome.then((result) => {
      flight.at = config.now();
      if (result.kind === 'failed' && flights.get(stored.sid) === flight)
        flights.delete(stored.sid);
    });
    return outcome;
  }

  async function getSession(source: CookieSource): Promise<SessionResult> {
    const cookies = readCookies(source);
    const raw = readChunked(cookies, config.cookieName);
    if (raw === undefined) return { session: null, setCookie: [] };
    const cleared = (): SessionResult => ({
      session: null,
      setCookie: clearChunked(cookies, config.cookieName, config.secure),
      cookieHeader: cookieHeaderWith(cookieHeaderOf(source), config.cookieName, null),
    });
    const stored = await sealer.open<StoredSession>(raw, 'session');
    if (!stored || typeof stored.at !== 'string' || typeof stored.sid !== 'string')
      return cleared();

    const exp = expiryOf(stored.at);
    let usable = false;
    if (exp - nowSeconds() > config.refreshBeforeSeconds) {
      try {
        return { session: toSession(stored, await verify(stored.at)), setCookie: [] };
      } catch (error) {
        if (isKeyProblem(error)) {
          // The keys are out of reach: the token in our own sealed cookie stands while it is
          // unexpired (it was checked, or came from the token endpoint, when it was sealed).
          // Answering "signed out" instead would send the browser round to sign in, come back
          // signed in, and round again (docs/design.md §15: never a loop).
          config.onError(error);
          return { session: toSession(stored, decodeJwt(stored.at)), setCookie: [] };
        }
        // Signed with a key the tenant has since dropped, say: a refresh gets a token of today's.
      }
    } else {
      usable = exp > nowSeconds();
    }
    if (!stored.rt) return usable ? keepOld(stored, cleared) : cleared();
    const outcome = await refreshOnce(stored);
    if (outcome.kind === 'ended') return cleared();
    if (outcome.kind === 'failed') {
      // The provider could not be reached: the session holds while its token is valid.
      return usable ? keepOld(stored, cleared) : { session: null, setCookie: [] };
    }
    const setCookie = writeChunked(cookies, config.cookieName, outcome.sealed, cookieOptions);
    return {
      session: toSession(outcome.stored, outcome.claims),
      setCookie,
      cookieHeader: cookieHeaderWith(cookieHeaderOf(source), config.cookieName, outcome.sealed),
    };
  }

  async function keepOld(
    stored: StoredSession,
    cleared: () => SessionResult,
  ): Promise<SessionResult> {
    try {
      return { session: toSession(stored, await verify(stored.at)), setCookie: [] };
    } catch (error) {
      // As above: our sealed, unexpired token stands while the keys are out of reach.
      if (isKeyProblem(error))
        return { session: toSession(stored, decodeJwt(stored.at)), setCookie: [] };
      return cleared();
    }
  }

  function safeReturnTo(value: string | null | undefined): string {
    if (!value?.startsWith('/') || value.startsWith('//')) return '/';
    // It travels in a cookie: a long one would not fit (or fill the browser's cookies).
    if (value.length > RETURN_TO_MAX) return '/';
    // Control characters and backslashes: some browsers read `/\evil.example` as `//evil.example`.
    if ([...value].some((c) => c <= ' ' || c === '\x7f' || c === '\\')) return '/';
    const url = parseUrl(value, config.appOrigin);
    if (!url || url.origin !== config.appOrigin || url.pathname.startsWith('//')) return '/';
    // Coming back to sign-in (or sign-out) would start another round trip: never a loop.
    if (url.pathname === config.basePath || url.pathname.startsWith(`${config.basePath}/`)) {
      return '/';
    }
    return `${url.pathname}${url.search}${url.hash}`;
  }

  function signInUrl(returnTo = '/'): string {
    const url = new URL(`${config.basePath}/sign-in`, config.appOrigin);
    url.searchParams.set('returnTo', safeReturnTo(returnTo));
    return url.href;
  }

  async function signIn(request: Request): Promise<Response> {
    const returnTo = safeReturnTo(new URL(request.url).searchParams.get('returnTo'));
    const transaction: Transaction = {
      state: randomState(),
      nonce: randomNonce(),
      verifier: randomCodeVerifier(),
      returnTo,
    };
    let location: URL;
    try {
      location = await provider.authorizationUrl({
        redirectUri,
        codeVerifier: transaction.verifier,
        state: transaction.state,
        nonce: transaction.nonce,
      });
    } catch (error) {
      // Latchkey out of reach: a page that says so, not the framework's 500.
      config.onError(error);
      return problemPage(
        'The sign-in service cannot be reached; try again in a moment.',
        signInUrl(returnTo),
        [],
        503,
      );
    }
    // One cookie per sign-in (named by its state): two tabs signing in at once both finish.
    const sealed = await sealer.seal({ ...transaction }, 'transaction', TRANSACTION_SECONDS);
    return redirect(location.href, [
      setCookie(`${txPrefix}${transaction.state}`, sealed, {
        secure: config.secure,
        maxAge: TRANSACTION_SECONDS,
        path: callbackPath,
      }),
    ]);
  }

  async function callback(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const cookies = readCookies(request);
    const state = url.searchParams.get('state') ?? '';
    const txName = `${txPrefix}${state}`;
    const sealed = /^[A-Za-z0-9_-]{1,128}$/.test(state) ? cookies[txName] : undefined;
    const transaction = sealed ? await sealer.open<Transaction>(sealed, 'transaction') : null;
    if (!transaction || transaction.state !== state) {
      return problemPage(
        'This sign-in link has expired or was opened in another browser.',
        signInUrl('/'),
        [],
      );
    }
    const clearTx = [clearCookie(txName, config.secure, callbackPath)];
    let outcome: Stored;
    try {
      const tokens = await provider.exchange(url, {
        state: transaction.state,
        nonce: transaction.nonce,
        codeVerifier: transaction.verifier,
        redirectUri,
      });
      outcome = await store(tokens);
    } catch (error) {
      const problem = callbackProblem(error);
      if (problem !== 'access_denied') config.onError(error);
      return problemPage(
        `Signing in did not complete (${problem}).`,
        signInUrl(transaction.returnTo),
        clearTx,
      );
    }
    return redirect(`${config.appOrigin}${transaction.returnTo}`, [
      ...clearTx,
      ...writeChunked(cookies, config.cookieName, outcome.sealed, cookieOptions),
    ]);
  }

  async function signOut(request: Request): Promise<Response> {
    const origin = request.headers.get('origin');
    if (origin !== null && origin !== config.appOrigin) {
      return new Response('Cross-site sign-out refused.', {
        status: 403,
        headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
      });
    }
    const cookies = readCookies(request);
    const raw = readChunked(cookies, config.cookieName);
    const stored = raw ? await sealer.open<StoredSession>(raw, 'session') : null;
    const clear = raw === undefined ? [] : clearChunked(cookies, config.cookieName, config.secure);
    if (!stored) return redirect(config.appBaseUrl, clear);
    if (stored.rt) {
      await provider.revoke(stored.rt).catch((error: unknown) => config.onError(error));
    }
    let end: URL | null = null;
    try {
      end = await provider.endSessionUrl();
    } catch (error) {
      config.onError(error);
    }
    return redirect(end?.href ?? config.appBaseUrl, clear);
  }

  async function handle(request: Request): Promise<Response | undefined> {
    const { pathname } = new URL(request.url);
    if (!pathname.startsWith(`${config.basePath}/`)) return undefined;
    const route = pathname.slice(config.basePath.length + 1);
    const method = request.method.toUpperCase();
    const read = method === 'GET' || method === 'HEAD';
    switch (route) {
      case 'sign-in':
        return read ? signIn(request) : methodNotAllowed('GET');
      case 'callback':
        return read ? callback(request) : methodNotAllowed('GET');
      case 'sign-out':
        return method === 'POST' ? signOut(request) : methodNotAllowed('POST');
      default:
        return undefined;
    }
  }

  return { handle, getSession, signInUrl, config };
}

/** `exp` of a token we sealed ourselves (so trusted), or 0 when unreadable. */
function expiryOf(token: string): number {
  try {
    const { exp } = decodeJwt(token);
    return typeof exp === 'number' ? exp : 0;
  } catch {
    return 0;
  }
}

/** The tenant's keys could not be read: not the cookie's fault, so it is kept. */
function isKeyProblem(error: unknown): boolean {
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return true;
  return !(error instanceof errors.JOSEError);
}

function redirect(location: string, cookies: string[]): Response {
  const headers = new Headers({ location, 'cache-control': 'no-store' });
  for (const cookie of cookies) headers.append('set-cookie', cookie);
  return new Response(null, { status: 302, headers });
}

function methodNotAllowed(allow: string): Response {
  return new Response(null, { status: 405, headers: { allow, 'cache-control': 'no-store' } });
}

function problemPage(message: string, retry: string, cookies: string[], status = 400): Response {
  const html = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Sign-in failed</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem"><h1>Sign-in failed</h1><p>${html(message)}</p><p><a href="${html(retry)}">Try again</a></p></body></html>`;
  const headers = new Headers({
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
  });
  for (const cookie of cookies) headers.append('set-cookie', cookie);
  return new Response(body, { status, headers });
}
