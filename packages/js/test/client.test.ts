// @vitest-environment happy-dom
/**
 * The client's refresh, sign-out and tabs, against a fake `fetch` that speaks the server's
 * wire format (fake-server.ts). The Chromium suites of packages/server run the same flows
 * against the real server; these run everywhere, also where there is no Chromium.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LatchkeyClient, LatchkeyOptions, LatchkeyState } from '../src/index.js';
import {
  AUTH,
  accessToken,
  fakeFetch,
  KEY,
  later,
  noContent,
  PK,
  problem,
  profileAnswer,
  profileRequests,
  type SentRequest,
  storeTokens,
  tokenAnswer,
} from './fake-server.js';

const channels: BroadcastChannel[] = [];

beforeEach(() => {
  // Every tab's channel is closed after its test, so no test hears another's tabs.
  const Native = globalThis.BroadcastChannel;
  vi.stubGlobal(
    'BroadcastChannel',
    class extends Native {
      constructor(name: string) {
        super(name);
        channels.push(this);
      }
    },
  );
});

afterEach(() => {
  for (const channel of channels.splice(0)) channel.close();
  vi.useRealTimers();
  vi.unstubAllGlobals();
  // Tabs of finished tests still hear storage events: none of theirs may reach the network.
  vi.stubGlobal('fetch', () => Promise.reject(new TypeError('The test is over')));
  vi.restoreAllMocks();
  localStorage.clear();
  sessionStorage.clear();
});

/** A tab of the page: its own copy of the library (one client per key), the same storage. */
async function openTab(options: Partial<LatchkeyOptions> = {}): Promise<LatchkeyClient> {
  vi.resetModules();
  const { Latchkey } = await import('../src/index.js');
  return Latchkey({ publishableKey: PK, authUrl: AUTH, ...options });
}

/** The state the client tells its listeners next. */
function nextState(client: LatchkeyClient): Promise<LatchkeyState> {
  return new Promise((resolve) => {
    const off = client.addListener((state) => {
      off();
      resolve(state);
    });
  });
}

/** Signs in the way an app does: signInWith, then the redirect page's callback. */
async function signIn(client: LatchkeyClient, sid: string) {
  let target = '';
  vi.spyOn(location, 'assign').mockImplementation((url) => {
    target = String(url);
  });
  await client.signInWith('email', { redirectUrl: '/callback' });
  const state = new URL(target).searchParams.get('state') as string;
  return client.handleRedirectCallback(`${location.origin}/callback#code=c_${sid}&state=${state}`);
}

/**
 * The server: code `c_{sid}` opens session sid; refresh token `rt_{sid}_{n}` gives pair n + 1;
 * the profile as `profile` answers (a server without that route by default).
 */
function server(profile?: Parameters<typeof fakeFetch>[1]): SentRequest[] {
  return fakeFetch((request) => {
    if (request.url === `${AUTH}/v1/client/sign-out`) return noContent();
    const { code = '', refresh_token = '' } = request.body as Record<string, string | undefined>;
    if (code) return tokenAnswer(code.slice(2), 1);
    const [, sid = '', n = ''] = /^rt_(\w+)_(\d+)$/.exec(refresh_token) ?? [];
    return tokenAnswer(sid, Number(n) + 1);
  }, profile);
}

const stored = () => JSON.parse(localStorage.getItem(KEY) ?? 'null');
const refreshes = (requests: SentRequest[]) =>
  requests.filter((r) => r.url === `${AUTH}/v1/client/token`);

describe('getToken', () => {
  it('refreshes only when fewer than 30 s remain, and sends what the server expects', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = Date.now();
    storeTokens('s1', 1, 60_000);
    const requests = server();
    const client = await openTab();

    vi.setSystemTime(start + 29_000); // 31 s left
    expect(await client.getToken()).toBe(accessToken('s1', 1));
    expect(requests).toEqual([]);

    vi.setSystemTime(start + 31_000); // 29 s left
    const token = await client.getToken();
    expect(requests).toHaveLength(1);
    const [sent] = requests as [SentRequest];
    expect(sent.method).toBe('POST');
    expect(sent.url).toBe(`${AUTH}/v1/client/token`);
    expect(sent.credentials).toBe('omit');
    expect(sent.headers.get('content-type')).toBe('application/json');
    expect(sent.headers.get('x-latchkey-publishable-key')).toBe(PK);
    expect(sent.body).toEqual({ grant_type: 'refresh_token', refresh_token: 'rt_s1_1' });
    expect(token).toBe(accessToken('s1', 2));
    // Kept for the next call and the next page load, on this browser's clock.
    expect(stored()).toEqual({
      accessToken: accessToken('s1', 2),
      refreshToken: 'rt_s1_2',
      expiresAt: start + 31_000 + 900_000,
    });
    expect(await client.getToken()).toBe(token);
    expect(requests).toHaveLength(1);
  });

  it('shares one refresh between concurrent calls', async () => {
    storeTokens('s1', 1, 10_000);
    const answer = later<Response>();
    const requests = fakeFetch(() => answer.promise);
    const client = await openTab();

    const calls = [client.getToken(), client.getToken(), client.getToken()];
    await vi.waitFor(() => expect(requests).toHaveLength(1));
    answer.resolve(tokenAnswer('s1', 2));
    expect(await Promise.all(calls)).toEqual(Array(3).fill(accessToken('s1', 2)));
    expect(requests).toHaveLength(1);
  });

  it('tells listeners about a refresh', async () => {
    storeTokens('s1', 1, 10_000);
    server();
    const client = await openTab();
    const heard = nextState(client);
    await client.getToken();
    const state = await heard;
    expect(state.isSignedIn).toBe(true);
    expect(state.user?.n).toBe(2);
    expect(client.getState()).toBe(state);
  });

  it('signs out when the server refuses the refresh token (invalid_grant), and says so', async () => {
    storeTokens('s1', 1, 10_000);
    const requests = fakeFetch(() => problem(400, 'invalid_grant', 'The session has been revoked'));
    const client = await openTab();
    const heard = nextState(client);

    expect(await client.getToken()).toBeNull();
    expect(await heard).toEqual({ isLoaded: true, isSignedIn: false, user: null });
    expect(client.isSignedIn()).toBe(false);
    expect(client.getUser()).toBeNull();
    expect(localStorage.getItem(KEY)).toBeNull();
    // Signed out: no more requests, no loop.
    expect(await client.getToken()).toBeNull();
    expect(requests).toHaveLength(1);
  });

  it('keeps the session when the network fails, and tries again on the next call', async () => {
    storeTokens('s1', 1, 10_000);
    let online = false;
    const requests = fakeFetch(() => {
      if (!online) throw new TypeError('Failed to fetch');
      return tokenAnswer('s1', 2);
    });
    const client = await openTab();

    await expect(client.getToken()).rejects.toMatchObject({
      name: 'LatchkeyError',
      code: 'network_error',
    });
    expect(client.isSignedIn()).toBe(true);
    expect(stored().refreshToken).toBe('rt_s1_1');
    online = true;
    expect(await client.getToken()).toBe(accessToken('s1', 2));
    expect(requests).toHaveLength(2);
  });

  it('gives up on a request that hangs after 15 s (network_error), the session kept', async () => {
    vi.useFakeTimers();
    storeTokens('s1', 1, 10_000);
    fakeFetch(
      (request) =>
        new Promise((_resolve, reject) => {
          request.signal?.addEventListener('abort', () =>
            reject(new DOMException('', 'AbortError')),
          );
        }),
    );
    const client = await openTab();
    const token = client.getToken();
    const outcome = token.then(
      () => 'resolved',
      (error) => error.code,
    );
    await vi.advanceTimersByTimeAsync(14_900);
    expect(await Promise.race([outcome, 'pending'])).toBe('pending');
    await vi.advanceTimersByTimeAsync(100);
    expect(await Promise.race([outcome, 'pending'])).toBe('network_error');
    expect(client.isSignedIn()).toBe(true);
  });

  it('is null when signed out, without a request', async () => {
    const requests = server();
    const client = await openTab();
    expect(await client.getToken()).toBeNull();
    expect(requests).toEqual([]);
  });

  it('drops a refresh answer that arrives after signOut (sign-out wins)', async () => {
    storeTokens('s1', 1, 10_000);
    const answer = later<Response>();
    const requests = fakeFetch((request) =>
      request.url.endsWith('/sign-out') ? noContent() : answer.promise,
    );
    const client = await openTab();
    const token = client.getToken();
    await vi.waitFor(() => expect(requests).toHaveLength(1));
    await client.signOut();
    answer.resolve(tokenAnswer('s1', 2));

    expect(await token).toBeNull();
    expect(client.isSignedIn()).toBe(false);
    expect(localStorage.getItem(KEY)).toBeNull();
  });
});

describe('signOut', () => {
  it('ends the session on the server, forgets the tokens and tells listeners', async () => {
    storeTokens('s1', 3, 600_000);
    const requests = server();
    const client = await openTab();
    const heard = nextState(client);

    await client.signOut();
    expect(requests).toHaveLength(1);
    const [sent] = requests as [SentRequest];
    expect(sent.method).toBe('POST');
    expect(sent.url).toBe(`${AUTH}/v1/client/sign-out`);
    expect(sent.headers.get('x-latchkey-publishable-key')).toBe(PK);
    expect(sent.body).toEqual({ refresh_token: 'rt_s1_3' });
    expect((await heard).isSignedIn).toBe(false);
    expect(localStorage.getItem(KEY)).toBeNull();
    expect(await client.getToken()).toBeNull();
  });

  it('signs this browser out even when the server cannot be reached, and rejects', async () => {
    storeTokens('s1', 1, 600_000);
    fakeFetch(() => {
      throw new TypeError('Failed to fetch');
    });
    const client = await openTab();
    await expect(client.signOut()).rejects.toMatchObject({ code: 'network_error' });
    expect(client.isSignedIn()).toBe(false);
    expect(localStorage.getItem(KEY)).toBeNull();
  });

  it('sends nothing when already signed out', async () => {
    const requests = server();
    const client = await openTab();
    await client.signOut();
    expect(requests).toEqual([]);
  });
});

describe('tabs', () => {
  it('a sign-in in one tab signs the other in', async () => {
    const requests = server();
    const [a, b] = [await openTab(), await openTab()];
    const heard = nextState(b);

    const session = await signIn(a, 's1');
    expect(session?.accessToken).toBe(accessToken('s1', 1));
    expect(requests.map((r) => r.body?.grant_type)).toEqual(['authorization_code']);
    expect((await heard).user?.sid).toBe('s1');
    expect(b.isSignedIn()).toBe(true);
    expect(await b.getToken()).toBe(accessToken('s1', 1));
    expect(requests).toHaveLength(1);
  });

  it('a refresh in one tab gives the other tab the new tokens: one refresh, not two', async () => {
    storeTokens('s1', 1, 10_000);
    const requests = server();
    const [a, b] = [await openTab(), await openTab()];
    const heard = nextState(b);

    expect(await a.getToken()).toBe(accessToken('s1', 2));
    expect((await heard).user?.n).toBe(2);
    expect(await b.getToken()).toBe(accessToken('s1', 2));
    expect(refreshes(requests)).toHaveLength(1);
  });

  it('a sign-out in one tab signs the other out', async () => {
    storeTokens('s1', 1, 600_000);
    const requests = server();
    const [a, b] = [await openTab(), await openTab()];
    const heard = nextState(b);

    await a.signOut();
    expect((await heard).isSignedIn).toBe(false);
    expect(b.getUser()).toBeNull();
    expect(await b.getToken()).toBeNull();
    expect(requests.map((r) => new URL(r.url).pathname)).toEqual(['/v1/client/sign-out']);
  });

  it('takes the tokens another tab rotated when its own refresh token is refused', async () => {
    storeTokens('s1', 1, 10_000);
    const answer = later<Response>();
    const requests = fakeFetch(() => answer.promise);
    const client = await openTab();
    const token = client.getToken();
    await vi.waitFor(() => expect(requests).toHaveLength(1));
    // Meanwhile another tab rotated rt_s1_1 and stored its pair, then closed unannounced;
    // the server, past the reuse interval, refuses this tab's copy.
    storeTokens('s1', 2, 600_000);
    answer.resolve(problem(400, 'invalid_grant', 'The refresh token was already used'));

    expect(await token).toBe(accessToken('s1', 2));
    expect(client.isSignedIn()).toBe(true);
    expect(stored().refreshToken).toBe('rt_s1_2');
    expect(requests).toHaveLength(1);
  });

  it('uses tokens another tab stored, even if no message came', async () => {
    const requests = server();
    const client = await openTab();
    storeTokens('s1', 4, 600_000);
    expect(await client.getToken()).toBe(accessToken('s1', 4));
    expect(client.getUser()?.sid).toBe('s1');
    expect(requests).toEqual([]);
  });

  describe('without BroadcastChannel: the storage event', () => {
    beforeEach(() => {
      vi.stubGlobal('BroadcastChannel', undefined);
    });

    /** What the browser does in this tab when another tab writes local storage. */
    const storageEvent = (key: string | null) =>
      window.dispatchEvent(new StorageEvent('storage', { key, storageArea: localStorage }));

    it('another tab signing in, rotating tokens and signing out reaches this tab', async () => {
      const client = await openTab();
      const states: LatchkeyState[] = [];
      client.addListener((state) => states.push(state));

      storeTokens('s1', 1, 600_000);
      storageEvent(KEY);
      expect(client.isSignedIn()).toBe(true);
      storeTokens('s1', 2, 600_000);
      storageEvent(KEY);
      localStorage.removeItem(KEY);
      storageEvent(KEY);
      expect(states.map((s) => s.user?.n ?? null)).toEqual([1, 2, null]);
      expect(client.isSignedIn()).toBe(false);
    });

    it('local storage cleared by another tab (key null) signs this tab out', async () => {
      storeTokens('s1', 1, 600_000);
      const client = await openTab();
      localStorage.clear();
      storageEvent(null);
      expect(client.isSignedIn()).toBe(false);
    });

    it('ignores other keys', async () => {
      storeTokens('s1', 1, 600_000);
      const client = await openTab();
      const listener = vi.fn();
      client.addListener(listener);
      localStorage.setItem('theme', 'dark');
      storageEvent('theme');
      expect(listener).not.toHaveBeenCalled();
    });
  });
});

describe('listeners', () => {
  it('the function addListener returns stops the calls', async () => {
    storeTokens('s1', 1, 600_000);
    server();
    const client = await openTab();
    const listener = vi.fn();
    const off = client.addListener(listener);
    off();
    await client.signOut();
    expect(listener).not.toHaveBeenCalled();
  });

  it('subscribe, the deprecated name of addListener, keeps working', async () => {
    storeTokens('s1', 1, 600_000);
    server();
    const client = await openTab();
    const onChange = vi.fn();
    const off = client.subscribe(onChange);
    await client.signOut();
    expect(onChange).toHaveBeenCalledTimes(1);
    off();
    await signIn(client, 's2');
    expect(onChange).toHaveBeenCalledTimes(1);
    expect(client.isSignedIn()).toBe(true);
  });
});

describe('error answers', () => {
  /** The LatchkeyError that getConfig rejects with when the server answers `response`. */
  async function refusal(response: () => Response) {
    fakeFetch(response);
    const client = await openTab();
    return client.getConfig().then(
      () => expect.fail('getConfig resolved'),
      (error: Error & { code: string }) => ({
        name: error.name,
        code: error.code,
        message: error.message,
      }),
    );
  }

  it.each([
    [401, 'unauthorized', 'unauthorized', /revoked; check the publishable key: latchkey keys list/],
    [
      403,
      'forbidden',
      'origin_not_allowed',
      /origin of this tenant; allow it: latchkey tenant update ID --add-origin http:\/\/localhost:3000$/,
    ],
    [429, 'rate_limited', 'rate_limited', /^Too many requests from this address$/],
    [400, 'invalid_grant', 'invalid_grant', /^The session has been revoked$/],
    [400, 'invalid_request', 'server_error', /^Send refresh_token$/],
    [500, 'internal_error', 'server_error', /^Internal error \(request r1\)$/],
  ])('a %i %s problem is %s, with the server detail', async (status, code, expected, message) => {
    const details: Record<string, string> = {
      unauthorized: 'The publishable key is not valid or has been revoked',
      forbidden: 'http://localhost:3000 is not an allowed origin of this tenant',
      rate_limited: 'Too many requests from this address',
      invalid_grant: 'The session has been revoked',
      invalid_request: 'Send refresh_token',
      internal_error: 'Internal error (request r1)',
    };
    const error = await refusal(() => problem(status, code, details[code] as string));
    expect(error).toMatchObject({ name: 'LatchkeyError', code: expected });
    expect(error.message).toMatch(message);
  });

  it('a 403 problem of another code is not taken for a refused origin', async () => {
    const error = await refusal(() =>
      problem(403, 'email_not_verified', 'Verify the e-mail address before signing in'),
    );
    expect(error).toEqual({
      name: 'LatchkeyError',
      code: 'server_error',
      message: 'Verify the e-mail address before signing in',
    });
  });

  it.each([
    [403, 'server_error'],
    [429, 'rate_limited'],
    [502, 'server_error'],
  ])(
    "an answer that is not problem+json (a proxy's %i page) is mapped by its status: %s",
    async (status, expected) => {
      const error = await refusal(
        () => new Response('<h1>Nope</h1>', { status, headers: { 'content-type': 'text/html' } }),
      );
      expect(error).toEqual({ name: 'LatchkeyError', code: expected, message: `HTTP ${status}` });
    },
  );

  it('a server out of reach is network_error, naming the server', async () => {
    const error = await refusal(() => {
      throw new TypeError('Failed to fetch');
    });
    expect(error.code).toBe('network_error');
    expect(error.message).toContain(AUTH);
  });

  it('getConfig asks once, and again after a failure', async () => {
    let fail = true;
    const config = { tenantId: 't1', name: 'Acme', providers: [], passwordEnabled: true };
    const requests = fakeFetch(() =>
      fail ? problem(500, 'internal_error', 'boom') : new Response(JSON.stringify(config)),
    );
    const client = await openTab();
    await expect(client.getConfig()).rejects.toMatchObject({ code: 'server_error' });
    fail = false;
    expect(await client.getConfig()).toEqual(config);
    expect(await client.getConfig()).toEqual(config);
    expect(requests.map((r) => [r.method, r.url, r.credentials])).toEqual([
      ['GET', `${AUTH}/public/config?pk=${PK}`, 'omit'],
      ['GET', `${AUTH}/public/config?pk=${PK}`, 'omit'],
    ]);
  });
});

describe('the profile (GET /v1/client/user)', () => {
  const named = () => profileAnswer('Ada Lovelace');

  it('is asked for once on load with a fresh token, and merged into the user; listeners hear it', async () => {
    storeTokens('s1', 1, 600_000);
    server(named);
    const client = await openTab();
    const before = client.getState();
    expect(before.user?.name).toBeUndefined();
    const heard = await nextState(client);

    expect(profileRequests).toHaveLength(1);
    const [sent] = profileRequests as [SentRequest];
    expect(sent.method).toBe('GET');
    expect(sent.credentials).toBe('omit');
    expect(sent.headers.get('authorization')).toBe(`Bearer ${accessToken('s1', 1)}`);
    expect(sent.headers.get('x-latchkey-publishable-key')).toBe(PK);
    expect(sent.body).toBeUndefined();
    expect(heard).not.toBe(before);
    expect(heard.user).toMatchObject({
      sub: 'user_1',
      sid: 's1',
      id: 'user_1',
      name: 'Ada Lovelace',
      emailVerified: true,
      picture: null,
      publicMetadata: { plan: 'pro' },
      createdAt: '2026-11-01T09:30:00.000Z',
    });
    expect(client.getUser()).toBe(heard.user);
    expect(client.getState()).toBe(heard);
  });

  it('is asked for after sign-in, and again with the new token after a refresh', async () => {
    let name = 'Ada';
    server(() => profileAnswer(name));
    const client = await openTab();
    await signIn(client, 's1');
    await vi.waitFor(() => expect(client.getUser()?.name).toBe('Ada'));
    expect(profileRequests.map((r) => r.headers.get('authorization'))).toEqual([
      `Bearer ${accessToken('s1', 1)}`,
    ]);

    name = 'Ada Lovelace';
    localStorage.setItem(KEY, JSON.stringify({ ...stored(), expiresAt: Date.now() + 1000 }));
    expect(await client.getToken()).toBe(accessToken('s1', 2));
    await vi.waitFor(() => expect(client.getUser()?.name).toBe('Ada Lovelace'));
    expect(client.getUser()?.n).toBe(2);
    expect(profileRequests).toHaveLength(2);
    // The same token is never asked with twice.
    await client.getToken();
    expect(profileRequests).toHaveLength(2);
  });

  it('waits for a fresh token: none is asked for on load with an expiring one', async () => {
    storeTokens('s1', 1, 10_000);
    const requests = server(named);
    const client = await openTab();
    expect(profileRequests).toEqual([]);
    expect(requests).toEqual([]);
    await client.getToken();
    await vi.waitFor(() => expect(client.getUser()?.name).toBe('Ada Lovelace'));
    expect(profileRequests[0]?.headers.get('authorization')).toBe(`Bearer ${accessToken('s1', 2)}`);
  });

  it('a server without the route, or out of reach, leaves the claims; no retry with that token', async () => {
    storeTokens('s1', 1, 600_000);
    server(() => {
      throw new TypeError('Failed to fetch');
    });
    const client = await openTab();
    await vi.waitFor(() => expect(profileRequests).toHaveLength(1));
    await new Promise((r) => setTimeout(r, 0));
    expect(client.getUser()).toMatchObject({ sub: 'user_1', email: 'ada@example.com' });
    expect(client.getUser()?.name).toBeUndefined();
    await client.getToken();
    expect(profileRequests).toHaveLength(1);
  });

  it('is forgotten at sign-out; an answer that arrives after it is dropped', async () => {
    storeTokens('s1', 1, 600_000);
    const answer = later<Response>();
    server(() => answer.promise);
    const client = await openTab();
    await vi.waitFor(() => expect(profileRequests).toHaveLength(1));
    const listener = vi.fn();
    client.addListener(listener);
    await client.signOut();
    answer.resolve(profileAnswer('Ada Lovelace'));
    await new Promise((r) => setTimeout(r, 0));
    expect(client.getUser()).toBeNull();
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it("is never another user's: a profile of another id is not merged", async () => {
    storeTokens('s1', 1, 600_000);
    server(() => profileAnswer('Someone Else', 'user_2'));
    const client = await openTab();
    await vi.waitFor(() => expect(profileRequests).toHaveLength(1));
    await new Promise((r) => setTimeout(r, 0));
    expect(client.getUser()?.name).toBeUndefined();
  });
});

describe('handleRedirectCallback: returnTo', () => {
  it('is the page where the sign-in started, query and all', async () => {
    history.replaceState(null, '', '/somewhere?x=1#tab');
    server();
    const client = await openTab();
    const session = await signIn(client, 's1');
    expect(session?.returnTo).toBe(`${location.origin}/somewhere?x=1#tab`);
  });

  it("is never another origin's page: a tampered start becomes the origin's /", async () => {
    history.replaceState(null, '', '/start');
    server();
    const client = await openTab();
    let target = '';
    vi.spyOn(location, 'assign').mockImplementation((url) => {
      target = String(url);
    });
    await client.signInWith('email', { redirectUrl: '/callback' });
    const state = new URL(target).searchParams.get('state') as string;
    const pending = `${KEY}:pending`;
    for (const from of [
      'https://evil.example/',
      `${location.origin}.evil.example/x`,
      '//evil.example',
    ]) {
      const kept = JSON.parse(sessionStorage.getItem(pending) as string);
      expect(kept.from).toBe(`${location.origin}/start`);
      sessionStorage.setItem(pending, JSON.stringify({ ...kept, from }));
      const session = await client.handleRedirectCallback(
        `${location.origin}/callback#code=c_s1&state=${state}`,
      );
      expect(session?.returnTo).toBe(`${location.origin}/`);
      sessionStorage.setItem(pending, JSON.stringify(kept));
    }
  });
});
