/**
 * The cookie session (docs/design.md §15) where a review found it weak, each fixed with this
 * test first: long returnTo values and abandoned sign-ins cannot fill the browser's cookies,
 * a foreign cookie the cookie library would not write does not break a refresh, the tenant's
 * keys out of reach never send the browser round in a sign-in loop, two apps sharing a
 * cookie secret cannot read each other's sessions, and Latchkey out of reach is a page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLatchkeySession, type LatchkeySession } from '../src/session/index.js';
import {
  Jar,
  OAuthBrowser,
  type Provider,
  signInAtProvider,
  startProvider,
  type User,
} from './session-support.js';

const APP = 'http://127.0.0.1:3999';

describe('cookie session hardening (sqlite)', () => {
  let provider: Provider;
  let client: { id: string; secret: string };
  let latchkey: LatchkeySession;

  beforeAll(async () => {
    provider = await startProvider('sqlite');
    client = await provider.register(APP);
    latchkey = createLatchkeySession(provider.config(client, APP));
  });
  afterAll(() => provider?.dispose());

  const request = (path: string, jar: Jar, init: RequestInit = {}) =>
    new Request(new URL(path, APP), {
      ...init,
      headers: { ...(init.headers as Record<string, string>), cookie: jar.header() },
    });

  async function signIn(
    user: User,
    jar = new Jar(),
    core = latchkey,
    browser?: OAuthBrowser,
  ): Promise<{ done: Response; jar: Jar }> {
    const start = (await core.handle(
      request('/api/latchkey/sign-in?returnTo=%2Fdashboard', jar),
    )) as Response;
    jar.apply(start.headers.getSetCookie());
    const location = start.headers.get('location') ?? '';
    const callback =
      browser && browser.jar.size > 0
        ? (await browser.browse(location, {})).url
        : await signInAtProvider(provider, location, user, browser);
    const done = (await core.handle(request(callback.href, jar))) as Response;
    jar.apply(done.headers.getSetCookie());
    return { done, jar };
  }

  it('a returnTo over 1 KB comes back to /; the sign-in cookie goes only to the callback', async () => {
    const long = `/${'a'.repeat(1_100)}`;
    const start = (await latchkey.handle(
      request(`/api/latchkey/sign-in?returnTo=${long}`, new Jar()),
    )) as Response;
    const [tx] = start.headers.getSetCookie();
    expect(tx?.length).toBeLessThan(1_200);
    expect(tx).toContain('Path=/api/latchkey/callback;');
    expect(latchkey.signInUrl(long)).toBe(`${APP}/api/latchkey/sign-in?returnTo=%2F`);
    // A path that normalises to another host's is not a path of this app.
    expect(latchkey.signInUrl('/.//evil.example/x')).toBe(
      `${APP}/api/latchkey/sign-in?returnTo=%2F`,
    );
  });

  it("a foreign cookie named outside RFC 6265's token set passes through a refresh untouched", async () => {
    const { jar } = await signIn(await provider.newUser());
    const cookie = `${jar.header()}; my pref=a:b`;
    provider.shift(560);
    try {
      const result = await latchkey.getSession({ cookie });
      expect(result.session).not.toBeNull();
      expect(result.setCookie.length).toBeGreaterThan(0);
      expect(result.cookieHeader).toContain('my pref=a:b');
      const cleared = await latchkey.getSession({ cookie: 'latchkey_session=garbage; my pref=1' });
      expect(cleared.session).toBeNull();
      expect(cleared.cookieHeader).toBe('my pref=1');
    } finally {
      provider.shift(0);
    }
  });

  it("the tenant's keys out of reach: the sealed session stands, so no sign-in loop", async () => {
    const jwksDown: typeof fetch = async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url.includes('jwks')) return new Response('busy', { status: 503 });
      return fetch(input, init);
    };
    const core = createLatchkeySession({
      ...provider.config(client, APP, { fetch: jwksDown }),
      onError: () => {},
    });
    const user = await provider.newUser();
    const { done, jar } = await signIn(user, new Jar(), core, new OAuthBrowser(provider.app.url));
    expect(done.status).toBe(302);
    const { session } = await core.getSession({ cookie: jar.header() });
    expect(session?.email).toBe(user.email);
  });

  it("two apps sharing a cookie secret cannot read each other's sessions", async () => {
    const other = 'http://127.0.0.1:3998';
    const clientB = await provider.register(other);
    const appB = createLatchkeySession(provider.config(clientB, other));
    const { jar } = await signIn(await provider.newUser());
    expect((await latchkey.getSession({ cookie: jar.header() })).session).not.toBeNull();
    const seenByB = await appB.getSession({ cookie: jar.header() });
    expect(seenByB.session).toBeNull();
  });

  it('Latchkey out of reach at sign-in: a 503 page that says so, not a thrown error', async () => {
    const down = createLatchkeySession({
      ...provider.config(client, APP, {
        fetch: async () => {
          throw new TypeError('fetch failed');
        },
      }),
      onError: () => {},
    });
    const res = (await down.handle(
      request('/api/latchkey/sign-in?returnTo=/x', new Jar()),
    )) as Response;
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('cannot be reached');
  });
});
