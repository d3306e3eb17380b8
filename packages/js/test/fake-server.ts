/**
 * A stand-in for the Latchkey server's browser endpoints, as `fetch`: it records what the
 * library sends and answers in the server's wire format (packages/server/src/http/routes/
 * client.ts for the token answer, docs/errors.md for problem+json).
 */
import { vi } from 'vitest';

export const PK = 'pk_test_clientsuite';
export const AUTH = 'https://auth.example';
/** Where @latchkey/js keeps a publishable key's tokens (README, "Refresh and tabs"). */
export const KEY = `latchkey:${PK}`;

export interface SentRequest {
  method: string;
  url: string;
  headers: Headers;
  credentials: RequestCredentials | undefined;
  body: Record<string, unknown> | undefined;
  signal: AbortSignal | undefined;
}

/** The requests for the profile (GET /v1/client/user) since the last fakeFetch, in order. */
export const profileRequests: SentRequest[] = [];

/**
 * Installs a fake `fetch` that answers with `answer`; returns the requests, in order. The
 * profile's requests go to `profile` and `profileRequests` instead; by default it answers as
 * a server without that route (404), so the client keeps the token's claims alone.
 */
export function fakeFetch(
  answer: (request: SentRequest) => Response | Promise<Response>,
  profile: (request: SentRequest) => Response | Promise<Response> = () =>
    problem(404, 'not_found', 'No route GET /v1/client/user'),
): SentRequest[] {
  const requests: SentRequest[] = [];
  profileRequests.length = 0;
  vi.stubGlobal('fetch', async (url: string, init: RequestInit = {}) => {
    const request: SentRequest = {
      method: init.method ?? 'GET',
      url,
      headers: new Headers(init.headers),
      credentials: init.credentials,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
      signal: init.signal ?? undefined,
    };
    if (url === `${AUTH}/v1/client/user`) {
      profileRequests.push(request);
      return profile(request);
    }
    requests.push(request);
    return answer(request);
  });
  return requests;
}

const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An access token as the server signs it (docs/design.md §5.1); the browser only decodes it. The same
 * arguments give the same token. */
export function accessToken(sid: string, n: number): string {
  const iat = 1_800_000_000;
  const claims = {
    sub: 'user_1',
    email: 'ada@example.com',
    tid: 'tenant_1',
    sid,
    roles: ['member'],
    scope: '',
    iat,
    exp: iat + 900,
    n,
  };
  return `${part({ alg: 'RS256', kid: 'k1' })}.${part(claims)}.signature`;
}

/** `200` of POST /v1/client/token: the `n`th pair of session `sid`. */
export function tokenAnswer(sid: string, n: number, expiresIn = 900): Response {
  const body = {
    accessToken: accessToken(sid, n),
    tokenType: 'Bearer',
    expiresIn,
    refreshToken: `rt_${sid}_${n}`,
    sessionId: sid,
  };
  return new Response(JSON.stringify(body), {
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
}

/** `200` of GET /v1/client/user (packages/server/src/http/routes/client.ts): user_1's profile. */
export function profileAnswer(name: string | null, id = 'user_1'): Response {
  const body = {
    id,
    email: 'ada@example.com',
    emailVerified: true,
    name,
    picture: null,
    publicMetadata: { plan: 'pro' },
    createdAt: '2026-11-01T09:30:00.000Z',
  };
  return new Response(JSON.stringify(body), {
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
}

/** An RFC 9457 problem document, as the server sends every error. */
export function problem(status: number, code: string, detail: string): Response {
  return new Response(
    JSON.stringify({
      type: `tag:latchkey.dev,2026:problem:${code}`,
      title: code,
      status,
      detail,
      code,
    }),
    { status, headers: { 'content-type': 'application/problem+json; charset=utf-8' } },
  );
}

/** `204` of POST /v1/client/sign-out. */
export const noContent = () => new Response(null, { status: 204 });

/** Tokens stored as a tab that signed in before this page loaded left them. */
export function storeTokens(sid: string, n: number, expiresInMs: number): void {
  localStorage.setItem(
    KEY,
    JSON.stringify({
      accessToken: accessToken(sid, n),
      refreshToken: `rt_${sid}_${n}`,
      expiresAt: Date.now() + expiresInMs,
    }),
  );
}

/** A promise with its resolve function: an answer the test releases when it chooses. */
export function later<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve = (_value: T) => {};
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
