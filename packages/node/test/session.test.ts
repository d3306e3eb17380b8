/**
 * docs/design.md §15: the cookie session core (`@latchkey/node/session`) against the real
 * server's OpenID Provider, on every database: sign-in on the hosted form, the sealed
 * cookie, refresh before expiry (one per session however many requests), revocation in
 * Latchkey, sign-out, tampering, open redirects and chunked cookies.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DIALECTS } from '../../server/test/support.js';
import {
  createLatchkeySession,
  LatchkeyError,
  type LatchkeySession,
  sessionConfigFromEnv,
} from '../src/session/index.js';
import {
  COOKIE_SECRET,
  Jar,
  type Provider,
  signInAtProvider,
  startProvider,
  type User,
} from './session-support.js';

// Nothing listens here: the core is called with Web Requests, as a framework would.
const APP = 'http://127.0.0.1:3999';

describe.each(DIALECTS)('cookie session core on %s', (dialect) => {
  let provider: Provider;
  let client: { id: string; secret: string };
  let latchkey: LatchkeySession;

  beforeAll(async () => {
    provider = await startProvider(dialect);
    client = await provider.register(APP);
    latchkey = createLatchkeySession(provider.config(client, APP));
  });
  afterAll(() => provider?.dispose());

  const request = (path: string, jar: Jar, init: RequestInit = {}) =>
    new Request(new URL(path, APP), {
      ...init,
      headers: { ...(init.headers as Record<string, string>), cookie: jar.header() },
    });

  /** Sign-in route -> hosted form -> callback: the callback's answer. */
  async function signIn(user: User, jar = new Jar(), returnTo = '/dashboard', core = latchkey) {
    const start = await core.handle(
      request(`/api/latchkey/sign-in?returnTo=${encodeURIComponent(returnTo)}`, jar),
    );
    expect(start?.status).toBe(302);
    jar.apply(start?.headers.getSetCookie() ?? []);
    const callback = await signInAtProvider(provider, start?.headers.get('location') ?? '', user);
    const done = (await core.handle(request(callback.href, jar))) as Response;
    jar.apply(done.headers.getSetCookie());
    return { start: start as Response, callback, done, jar };
  }

  async function session(jar: Jar, core = latchkey) {
    const result = await core.getSession({ cookie: jar.header() });
    jar.apply(result.setCookie);
    return result;
  }

  it('signs in with PKCE on the hosted form and comes back to returnTo with a sealed HttpOnly cookie', async () => {
    const user = await provider.newUser();
    const { start, callback, done, jar } = await signIn(user);

    const authorize = new URL(start.headers.get('location') ?? '');
    expect(authorize.href.startsWith(`${provider.issuer}/oauth/authorize?`)).toBe(true);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: client.id,
      response_type: 'code',
      redirect_uri: `${APP}/api/latchkey/callback`,
      code_challenge_method: 'S256',
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      state: expect.any(String),
      nonce: expect.any(String),
    });
    const [tx] = start.headers.getSetCookie();
    expect(tx).toMatch(
      /^latchkey_session_tx_[\w-]+=[\w.-]+; Max-Age=600; Path=\/api\/latchkey\/callback; HttpOnly; SameSite=Lax$/,
    );
    expect(callback.searchParams.get('iss')).toBe(provider.issuer);

    expect(done.status).toBe(302);
    expect(done.headers.get('location')).toBe(`${APP}/dashboard`);
    const set = done.headers.getSetCookie();
    expect(set.find((c) => c.startsWith('latchkey_session_tx_'))).toMatch(/Max-Age=0/);
    const cookie = set.find((c) => c.startsWith('latchkey_session='));
    expect(cookie).toMatch(/; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(cookie).not.toMatch(/Secure/);
    expect(jar.names()).toEqual(['latchkey_session']);
    // Sealed: nothing of the tokens is readable in the cookie (a JWE, not a JWT).
    expect(jar.cookies.get('latchkey_session')?.split('.')).toHaveLength(5);
    for (const location of [start, done].map((r) => r.headers.get('location') ?? '')) {
      expect(location).not.toMatch(/eyJ/);
    }

    const { session: s, setCookie } = await session(jar);
    expect(setCookie).toEqual([]);
    expect(s).toMatchObject({ userId: user.id, email: user.email, sessionId: expect.any(String) });
    expect(s?.claims).toMatchObject({ client_id: client.id, tid: provider.t.tenant.id });
    expect(await s?.getToken()).toBe(s?.accessToken);
    expect(s?.expiresAt).toBe(decodeJwt(s?.accessToken ?? '').exp);
    expect(await provider.introspect(s?.accessToken ?? '')).toMatchObject({
      active: true,
      sid: s?.sessionId,
    });
  });

  it('refreshes an access token about to expire on the server, without a redirect', async () => {
    const { jar } = await signIn(await provider.newUser());
    const before = (await session(jar)).session;
    const refreshes = provider.tokenCalls('refresh_token');
    provider.shift(560); // 40 s before the 600 s token expires: inside refreshBeforeSeconds
    try {
      const { session: after, setCookie, cookieHeader } = await session(jar);
      // What a middleware passes on to the rest of the request: the refreshed cookie.
      expect(cookieHeader).toBe(jar.header());
      expect(after?.accessToken).not.toBe(before?.accessToken);
      expect(after).toMatchObject({ userId: before?.userId, sessionId: before?.sessionId });
      expect(setCookie).toEqual([
        expect.stringMatching(/^latchkey_session=.+HttpOnly; SameSite=Lax$/),
      ]);
      expect(provider.tokenCalls('refresh_token')).toBe(refreshes + 1);
    } finally {
      provider.shift(0);
    }
    const again = await session(jar);
    expect(again.setCookie).toEqual([]);
    expect(provider.tokenCalls('refresh_token')).toBe(refreshes + 1);
  });

  it('20 parallel requests at expiry make exactly one refresh and all get the new token', async () => {
    const { jar } = await signIn(await provider.newUser());
    const cookie = jar.header();
    const refreshes = provider.tokenCalls('refresh_token');
    provider.shift(590);
    try {
      const results = await Promise.all(
        Array.from({ length: 20 }, () => latchkey.getSession({ cookie })),
      );
      expect(provider.tokenCalls('refresh_token')).toBe(refreshes + 1);
      const tokens = new Set(results.map((r) => r.session?.accessToken));
      expect(tokens.size).toBe(1);
      expect([...tokens][0]).toEqual(expect.any(String));
      for (const r of results) expect(r.setCookie).toHaveLength(1);
      // A straggler still sending the old cookie shares the result too.
      const late = await latchkey.getSession({ cookie });
      expect(late.session?.accessToken).toBe([...tokens][0]);
      expect(provider.tokenCalls('refresh_token')).toBe(refreshes + 1);
    } finally {
      provider.shift(0);
    }
  });

  it('a session revoked in Latchkey ends at the next refresh: no session, the cookie cleared, once', async () => {
    const { jar } = await signIn(await provider.newUser());
    const { session: s } = await session(jar);
    await provider.revokeSession(s?.sessionId ?? '');
    provider.shift(570);
    try {
      const ended = await session(jar);
      expect(ended.session).toBeNull();
      expect(ended.setCookie).toEqual([expect.stringMatching(/^latchkey_session=; Max-Age=0;/)]);
      expect(jar.names()).toEqual([]);
      // Nothing left to refresh: no further calls, no further cookies.
      const refreshes = provider.tokenCalls('refresh_token');
      expect(await session(jar)).toEqual({ session: null, setCookie: [] });
      expect(provider.tokenCalls('refresh_token')).toBe(refreshes);
    } finally {
      provider.shift(0);
    }
  });

  it('sign-out (POST) clears the cookie, revokes the session and goes to end-session', async () => {
    const { jar } = await signIn(await provider.newUser());
    const { session: s } = await session(jar);
    const get = await latchkey.handle(request('/api/latchkey/sign-out', jar));
    expect(get?.status).toBe(405);
    const crossSite = await latchkey.handle(
      request('/api/latchkey/sign-out', jar, {
        method: 'POST',
        headers: { origin: 'https://evil.example' },
      }),
    );
    expect(crossSite?.status).toBe(403);

    const out = (await latchkey.handle(
      request('/api/latchkey/sign-out', jar, { method: 'POST', headers: { origin: APP } }),
    )) as Response;
    expect(out.status).toBe(302);
    const end = new URL(out.headers.get('location') ?? '');
    expect(end.origin + end.pathname).toBe(`${provider.issuer}/oauth/end-session`);
    expect(end.searchParams.get('post_logout_redirect_uri')).toBe(APP);
    expect(end.searchParams.get('client_id')).toBe(client.id);
    // No token in the URL: the app is named by client_id alone.
    expect([...end.searchParams.keys()].sort()).toEqual(['client_id', 'post_logout_redirect_uri']);
    jar.apply(out.headers.getSetCookie());
    expect(jar.names()).toEqual([]);
    expect(await provider.introspect(s?.accessToken ?? '')).toEqual({ active: false });
    // The provider accepts the logout request (its confirmation page, in the tenant's look).
    const page = await fetch(end, { redirect: 'manual' });
    expect(page.status).toBe(200);
  });

  it('the provider out of reach at refresh time: the cookie is kept, nothing is logged of the tokens', async () => {
    const { jar } = await signIn(await provider.newUser());
    const cookie = jar.header();
    const { session: before } = await latchkey.getSession({ cookie });
    // The network to the token endpoint is down; discovery and keys were fetched before.
    let isDown = true;
    const down: typeof fetch = async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (isDown && url.endsWith('/oauth/token')) throw new TypeError('fetch failed: ECONNREFUSED');
      return fetch(input, init);
    };
    const logged: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args) => {
      logged.push(args.map(String).join(' '));
    });
    const offline = createLatchkeySession(
      provider.config(client, APP, { fetch: down, onError: undefined }),
    );
    try {
      provider.shift(560); // about to expire, still valid: the session holds
      const kept = await offline.getSession({ cookie });
      expect(kept.session?.accessToken).toBe(before?.accessToken);
      expect(kept.setCookie).toEqual([]);
      provider.shift(700); // expired: no session, but the cookie stays for when it is back
      expect(await offline.getSession({ cookie })).toEqual({ session: null, setCookie: [] });
      expect(logged.length).toBeGreaterThan(0);
      for (const line of logged) {
        expect(line).toMatch(/^\[latchkey\] /);
        expect(line).not.toMatch(/eyJ/);
      }
      // Back online, the same cookie refreshes at once (a failure is not remembered): its
      // refresh token was never used.
      isDown = false;
      provider.shift(560);
      const back = await offline.getSession({ cookie });
      expect(back.session?.userId).toBe(before?.userId);
      expect(back.setCookie).toHaveLength(1);
    } finally {
      provider.shift(0);
      spy.mockRestore();
    }
  });

  it('a tampered cookie, or one sealed with another secret, is no session and is cleared', async () => {
    const { jar } = await signIn(await provider.newUser());
    const value = jar.cookies.get('latchkey_session') ?? '';
    const parts = value.split('.');
    parts[3] = `${parts[3]?.slice(0, -2)}${parts[3]?.endsWith('AA') ? 'BB' : 'AA'}`;
    const tampered = await latchkey.getSession({ cookie: `latchkey_session=${parts.join('.')}` });
    expect(tampered.session).toBeNull();
    expect(tampered.setCookie).toEqual([expect.stringMatching(/^latchkey_session=; Max-Age=0/)]);

    const other = createLatchkeySession(
      provider.config(client, APP, { cookieSecret: `${COOKIE_SECRET} but another one` }),
    );
    expect((await other.getSession({ cookie: jar.header() })).session).toBeNull();
    expect((await latchkey.getSession({ cookie: 'latchkey_session=garbage' })).session).toBeNull();
  });

  it('returnTo is a same-origin path: anything else comes back to /', async () => {
    const refused = [
      'https://evil.example',
      '//evil.example/x',
      '/\\evil.example',
      'javascript:alert(1)',
      '/api/latchkey/sign-in?returnTo=/x',
      'dashboard',
    ];
    for (const returnTo of refused)
      expect(latchkey.signInUrl(returnTo)).toBe(`${APP}/api/latchkey/sign-in?returnTo=%2F`);
    expect(latchkey.signInUrl('/a/b?c=1#d')).toBe(
      `${APP}/api/latchkey/sign-in?returnTo=%2Fa%2Fb%3Fc%3D1%23d`,
    );

    const { done } = await signIn(await provider.newUser(), new Jar(), 'https://evil.example');
    expect(done.headers.get('location')).toBe(`${APP}/`);
  });

  it('a callback without its transaction, or with another state, is a page, not a redirect', async () => {
    const user = await provider.newUser();
    const jar = new Jar();
    const start = (await latchkey.handle(
      request('/api/latchkey/sign-in?returnTo=/x', jar),
    )) as Response;
    // The cookie of the sign-in is not sent (another browser): refused, nothing set.
    const callback = await signInAtProvider(provider, start.headers.get('location') ?? '', user);
    const res = (await latchkey.handle(request(callback.href, jar))) as Response;
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(await res.text()).toContain('Try again');
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it('a session too large for one cookie is chunked, read back, and stale chunks are cleared', async () => {
    const roles = Array.from({ length: 50 }, (_, i) => `role-${i}-${'x'.repeat(50)}`);
    const user = await provider.newUser(roles);
    const { jar } = await signIn(user);
    const chunks = jar.names();
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(chunks).toEqual(chunks.map((_, i) => `latchkey_session.${i}`));
    for (const value of jar.cookies.values()) expect(value.length).toBeLessThanOrEqual(3_800);
    const { session: s } = await session(jar);
    expect(s?.claims.roles).toEqual(roles);

    // The roles go; the next refresh fits one cookie, and the chunks are cleared.
    const res = await provider.app.request(`/v1/users/${user.id}`, {
      method: 'PATCH',
      headers: {
        authorization: `Bearer ${provider.t.secretKey}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ roles: [] }),
    });
    expect(res.status).toBe(200);
    provider.shift(580);
    try {
      const { session: small, setCookie } = await session(jar);
      expect(small?.claims.roles).toEqual([]);
      expect(setCookie).toEqual([
        expect.stringMatching(/^latchkey_session=/),
        ...chunks.map((name) => expect.stringMatching(new RegExp(`^${name}=; Max-Age=0`))),
      ]);
      expect(jar.names()).toEqual(['latchkey_session']);
    } finally {
      provider.shift(0);
    }
  });
});

describe('sessionConfigFromEnv', () => {
  const env = {
    LATCHKEY_ISSUER: 'https://auth.example.com/t/0b7c9c1e-2d5c-4c1a-9a57-7f3e4b7a0c11',
    LATCHKEY_CLIENT_ID: 'app_abc',
    LATCHKEY_CLIENT_SECRET: 's3cret',
    LATCHKEY_COOKIE_SECRET: COOKIE_SECRET,
    APP_BASE_URL: 'https://app.example.com',
  };

  it('reads the five variables', () => {
    expect(sessionConfigFromEnv(env)).toEqual({
      issuer: env.LATCHKEY_ISSUER,
      clientId: 'app_abc',
      clientSecret: 's3cret',
      cookieSecret: COOKIE_SECRET,
      appBaseUrl: 'https://app.example.com',
    });
    expect(createLatchkeySession(sessionConfigFromEnv(env)).config).toMatchObject({
      secure: true,
      basePath: '/api/latchkey',
      audience: `${env.LATCHKEY_ISSUER}/api`,
    });
  });

  it('says which variable is missing or wrong and what to do', () => {
    const fails = (changes: Record<string, string | undefined>) => {
      try {
        sessionConfigFromEnv({ ...env, ...changes });
      } catch (error) {
        return error as LatchkeyError;
      }
      throw new Error('no error');
    };
    const missing = fails({ LATCHKEY_CLIENT_SECRET: undefined });
    expect(missing).toBeInstanceOf(LatchkeyError);
    expect(missing).toMatchObject({ code: 'session_config_missing' });
    expect(missing.reason).toMatch(/LATCHKEY_CLIENT_SECRET/);
    expect(missing.action).toMatch(/latchkey app create/);
    const short = fails({ LATCHKEY_COOKIE_SECRET: 'too short' });
    expect(short).toMatchObject({ code: 'option_invalid' });
    expect(short.action).toMatch(/openssl rand/);
    expect(fails({ APP_BASE_URL: 'http://app.example.com' })).toMatchObject({
      code: 'option_invalid',
    });
    expect(fails({ LATCHKEY_ISSUER: 'not a url' })).toMatchObject({ code: 'option_invalid' });
  });
});
