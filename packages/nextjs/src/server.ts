import { cookies, headers } from 'next/headers';
import { redirect, unauthorized } from 'next/navigation';
import { connection } from 'next/server';
import { cache } from 'react';
import { latchkey, RETURN_TO_HEADER } from './core.js';

/** The access token's claims (RFC 9068 and docs/design.md §5: `sub`, `sid`, `tid`, `email`…). */
export type Claims = Record<string, unknown> & { sub: string; sid?: string; email?: string };

/** What `auth()` returns: who is signed in, and a token for calling APIs as them. */
export interface Auth {
  /** The user's id (`sub`), or null when signed out. */
  userId: string | null;
  /** The Latchkey session's id (`sid`), or null. */
  sessionId: string | null;
  /** The access token's verified claims, or null. */
  claims: Claims | null;
  /** The access token (refreshed when it was due), for an `Authorization: Bearer` header; null when signed out. */
  getToken(): Promise<string | null>;
}

export interface SignedInAuth extends Auth {
  userId: string;
  claims: Claims;
}

/** The signed-in user as the server knows them from the session (no call to Latchkey). */
export interface LatchkeyUser {
  id: string;
  email: string;
  /** The Latchkey session's id. */
  sessionId: string | null;
  name?: string;
}

const SIGNED_OUT: Auth = {
  userId: null,
  sessionId: null,
  claims: null,
  getToken: async () => null,
};

/** Stores the session's new cookies where Next.js lets us (route handlers, server actions). */
let warned = false;

async function store(setCookie: readonly string[]): Promise<void> {
  if (setCookie.length === 0) return;
  try {
    const jar = await cookies();
    for (const line of setCookie) jar.set(parseSetCookie(line));
  } catch {
    // A server component cannot set cookies (Next.js throws): the browser keeps the old
    // cookie, whose refresh token the core shares the new tokens with only for a while.
    if (!warned) {
      warned = true;
      console.warn(
        '@latchkey/nextjs: the session was refreshed while rendering a server component, which cannot set cookies. Let latchkeyMiddleware() match this path (proxy.ts or middleware.ts) so that it refreshes before pages render.',
      );
    }
  }
}

type CookieInit = Parameters<Awaited<ReturnType<typeof cookies>>['set']>[0] & object;

function parseSetCookie(line: string): CookieInit {
  const [pair = '', ...attributes] = line.split(';');
  const at = pair.indexOf('=');
  const cookie: CookieInit = {
    name: pair.slice(0, at).trim(),
    value: decodeURIComponent(pair.slice(at + 1).trim()),
  };
  for (const attribute of attributes) {
    const [key = '', value = ''] = attribute.split('=').map((s) => s.trim());
    switch (key.toLowerCase()) {
      case 'path':
        cookie.path = value;
        break;
      case 'max-age':
        cookie.maxAge = Number(value);
        break;
      case 'expires':
        cookie.expires = new Date(value);
        break;
      case 'httponly':
        cookie.httpOnly = true;
        break;
      case 'secure':
        cookie.secure = true;
        break;
      case 'samesite':
        cookie.sameSite = value.toLowerCase() as 'lax' | 'strict' | 'none';
        break;
    }
  }
  return cookie;
}

/**
 * Who is signed in, in server components, route handlers and server actions: read from the
 * session cookie, its access token checked locally against the issuer's keys. Once per
 * request (React `cache`).
 */
export const auth = cache(async (): Promise<Auth> => {
  // headers() first: it makes the page dynamic, so `next build` never needs the variables.
  const incoming = await headers();
  // And wait for a real request: with Cache Components (on in new Next.js 16 apps), a
  // prerender may read headers, but the session's clock and its key fetch are the request's.
  await connection();
  const core = latchkey();
  const request = new Request(core.config.appBaseUrl, {
    headers: { cookie: incoming.get('cookie') ?? '' },
  });
  const { session, setCookie } = await core.getSession(request);
  // Where cookies cannot be set (a server component), the middleware has refreshed first.
  await store(setCookie);
  if (!session) return SIGNED_OUT;
  return {
    userId: session.userId,
    sessionId: session.sessionId,
    claims: session.claims as Claims,
    getToken: () => session.getToken(),
  };
});

/** The signed-in user (id, e-mail, name from the session), or null. */
export async function currentUser(): Promise<LatchkeyUser | null> {
  const { claims, sessionId } = await auth();
  if (!claims) return null;
  const user: LatchkeyUser = {
    id: claims.sub,
    email: typeof claims.email === 'string' ? claims.email : '',
    sessionId,
  };
  if (typeof claims.name === 'string') user.name = claims.name;
  return user;
}

/** A page the browser asked for (or the router fetched), rather than an API call. */
function isPageRequest(incoming: Headers): boolean {
  return (
    incoming.has('rsc') ||
    incoming.has('next-action') ||
    incoming.get('sec-fetch-mode') === 'navigate' ||
    (incoming.get('accept') ?? '').includes('text/html')
  );
}

/**
 * The signed-in user's `auth()`; signed out, a page or server action is sent to sign in
 * (back to the path the middleware saw), and an API call gets 401 when the app enables
 * `experimental.authInterrupts` (else it is redirected too).
 */
export async function protect(): Promise<SignedInAuth> {
  const result = await auth();
  if (result.userId && result.claims) return result as SignedInAuth;
  const incoming = await headers();
  if (!isPageRequest(incoming)) {
    try {
      unauthorized();
    } catch (error) {
      // Thrown on purpose (Next.js answers 401), unless authInterrupts is off.
      if (typeof (error as { digest?: unknown }).digest === 'string') throw error;
    }
  }
  const returnTo = incoming.get(RETURN_TO_HEADER) ?? '/';
  return redirect(latchkey().signInUrl(returnTo));
}
