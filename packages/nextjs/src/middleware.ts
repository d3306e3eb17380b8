import { type NextRequest, NextResponse } from 'next/server';
import { latchkey, RETURN_TO_HEADER } from './core.js';
import { withCookies } from './set-cookie.js';

/**
 * Which paths need a signed-in user: a path (`'/dashboard'` covers `/dashboard` and
 * everything under it, not `/dashboards`), a regular expression on the path, a list of
 * these, or a function of the request.
 */
export type RouteMatcher =
  | string
  | RegExp
  | readonly (string | RegExp)[]
  | ((request: NextRequest) => boolean);

export interface LatchkeyMiddlewareOptions {
  /** The protected routes; without it no route is (pages use `protect()`). */
  protect?: RouteMatcher;
}

/** Redirects to sign-in in a row, within a minute, after which we stop and say why. */
const MAX_REDIRECTS = 3;
const REDIRECTS_COOKIE = 'latchkey_redirects';

function matches(matcher: RouteMatcher | undefined, request: NextRequest): boolean {
  if (!matcher) return false;
  if (typeof matcher === 'function') return matcher(request);
  const path = request.nextUrl.pathname;
  const list: readonly (string | RegExp)[] = Array.isArray(matcher)
    ? matcher
    : [matcher as string | RegExp];
  return list.some((m) =>
    typeof m === 'string'
      ? path === m || path.startsWith(m.endsWith('/') ? m : `${m}/`)
      : m.test(path),
  );
}

/** A page the browser navigates to (or the router fetches), rather than an API call. */
function isPageRequest(request: NextRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const accept = request.headers.get('accept') ?? '';
  return (
    request.headers.get('sec-fetch-mode') === 'navigate' ||
    request.headers.has('rsc') ||
    accept.includes('text/html')
  );
}

function unauthorized(detail: string): NextResponse {
  return NextResponse.json(
    { type: 'about:blank', title: 'Unauthorized', status: 401, detail },
    { status: 401, headers: { 'content-type': 'application/problem+json' } },
  );
}

/**
 * The middleware of `middleware.ts` (edge runtime) or `proxy.ts` (Next.js 16): it reads the
 * session cookie on every request it sees, refreshes the access token when it is due (the
 * new cookie goes both to the browser and to the rest of this request, so pages and
 * `auth()` see the fresh session), and sends a signed-out visitor of a protected page to
 * sign in, coming back to the same path. A browser that keeps coming back signed out (its
 * cookies refused) gets an explanation instead of a loop.
 */
export function latchkeyMiddleware(
  options: LatchkeyMiddlewareOptions = {},
): (request: NextRequest) => Promise<NextResponse> {
  return async (request) => {
    const core = latchkey();
    const { pathname, search } = request.nextUrl;
    const { basePath } = core.config;
    if (pathname === basePath || pathname.startsWith(`${basePath}/`)) {
      return NextResponse.next();
    }
    const { session, setCookie, cookieHeader } = await core.getSession(request);
    const redirects = Number(request.cookies.get(REDIRECTS_COOKIE)?.value) || 0;
    // A server action is an endpoint of its own whatever path it is posted to: it checks
    // `auth()` itself (Next.js's advice), and a redirect from it reaches the browser.
    const action = request.method === 'POST' && request.headers.has('next-action');
    if (!session && !action && matches(options.protect, request)) {
      if (!isPageRequest(request)) return withCookies(unauthorized('Sign in first.'), setCookie);
      if (redirects >= MAX_REDIRECTS) {
        return withCookies(
          unauthorized(
            'Signing in did not stick: this browser did not keep the session cookie. Allow cookies for this site and try again.',
          ),
          setCookie,
        );
      }
      const to = new URL(core.signInUrl(pathname + search), request.url);
      const response = withCookies(NextResponse.redirect(to, 307), setCookie);
      response.cookies.set(REDIRECTS_COOKIE, String(redirects + 1), {
        httpOnly: true,
        sameSite: 'lax',
        path: '/',
        maxAge: 60,
      });
      return response;
    }
    const headers = new Headers(request.headers);
    headers.set(RETURN_TO_HEADER, pathname + search);
    // The refreshed (or cleared) cookie for the pages and route handlers of this request.
    if (cookieHeader !== undefined) headers.set('cookie', cookieHeader);
    const response = withCookies(NextResponse.next({ request: { headers } }), setCookie);
    if (session && redirects > 0) response.cookies.delete(REDIRECTS_COOKIE);
    return response;
  };
}
