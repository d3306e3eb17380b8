/** Helpers for the React suite: the real server's keys and sessions, and a hosted sign-in. */
import { request } from 'node:http';
import { inject } from 'vitest';
import { PASSWORD, type ServerSession } from './shared.js';

export const authUrl = inject('authUrl');
const keys = [...inject('publishableKeys')];
const sessions = [...inject('sessions')];

/** A publishable key no earlier test used: its client (one per key) starts from storage. */
export function freshKey(): string {
  const key = keys.pop();
  if (!key) throw new Error('out of publishable keys: make more in global-setup.ts');
  return key;
}

export function freshSession(): ServerSession {
  const session = sessions.pop();
  if (!session) throw new Error('out of sessions: make more in global-setup.ts');
  return session;
}

/**
 * Puts a session where @latchkey/js keeps it (`latchkey:{pk}`, docs/design.md §10.2), as if this
 * browser had signed in before the page loaded.
 */
export function storeSession(publishableKey: string, s: ServerSession): void {
  localStorage.setItem(
    `latchkey:${publishableKey}`,
    JSON.stringify({
      accessToken: s.accessToken,
      refreshToken: s.refreshToken,
      expiresAt: Date.now() + s.expiresIn * 1000,
    }),
  );
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Plain HTTP from Node (happy-dom's fetch would hide cookies and follow redirects). */
function http(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/**
 * What a user does on the hosted page that `signInWith('email')` opened: fills in the form.
 * Returns where the page sends the browser back to (the callback URL with the code).
 */
export async function signInOnHostedPage(signInUrl: string, email: string): Promise<string> {
  const page = await http(signInUrl);
  const cookie = ((page.headers['set-cookie'] as string[] | undefined) ?? [])
    .map((c) => c.split(';')[0])
    .join('; ');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  if (page.status !== 200 || !csrf) throw new Error(`sign-in page: ${page.status} ${page.body}`);
  const answer = await http(signInUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ _csrf: csrf, email, password: PASSWORD }).toString(),
  });
  if (answer.status !== 303) throw new Error(`sign-in: ${answer.status} ${answer.body}`);
  return answer.headers.location as string;
}

const BROWSER_GLOBALS = [
  'window',
  'self',
  'document',
  'localStorage',
  'sessionStorage',
  'location',
  'history',
  'addEventListener',
] as const;

/** Runs `render` as on a server: the browser's globals are gone, so touching one throws. */
export function onServer<T>(render: () => T): T {
  const g = globalThis as Record<string, unknown>;
  const kept = BROWSER_GLOBALS.map((name) => Object.getOwnPropertyDescriptor(g, name));
  for (const name of BROWSER_GLOBALS) delete g[name];
  try {
    if (typeof window !== 'undefined') throw new Error('could not hide window');
    return render();
  } finally {
    BROWSER_GLOBALS.forEach((name, i) => {
      const descriptor = kept[i];
      if (descriptor) Object.defineProperty(g, name, descriptor);
    });
  }
}
