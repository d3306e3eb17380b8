/**
 * @latchkey/js in a real Chromium against the real server, from an app page on another
 * origin under a strict CSP: sign-in through a GitHub-shaped provider and through the hosted
 * e-mail page, reload, refresh, two tabs, sign-out, a tampered state.
 */
import { generateSync } from 'otplib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setProvider } from '../src/modules/social/index.js';
import { HAVE_CHROMIUM, launchChromium } from './browser.js';
import { type ProviderServer, startProvider } from './providers.js';
import {
  cspViolations,
  mountButtons,
  type PageGlobals,
  pageClient,
  type Site,
  startSite,
  withContext,
} from './sdk-page.js';
import {
  email,
  eventually,
  json,
  postJson,
  reservePort,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const PASSWORD = 'correct horse battery staple';
declare const window: PageGlobals;

describe.skipIf(!HAVE_CHROMIUM)(
  '@latchkey/js in Chromium: sign-in, refresh, tabs, sign-out',
  () => {
    let app: TestApp;
    let github: ProviderServer;
    let site: Site;
    let browser: Browser;
    let t: TestTenant;
    let client: ReturnType<typeof pageClient>;

    const callback = () => `${site.origin}/callback`;

    async function introspect(token: string | null | undefined) {
      return json(await postJson(app, '/api/auth/introspect', t.secretKey, { token }));
    }

    async function passwordUser(): Promise<string> {
      const address = email('sdk');
      const res = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
        email: address,
        password: PASSWORD,
      });
      expect(res.status).toBe(201);
      return address;
    }

    /** "Continue with e-mail", the hosted form, and back on the callback page. */
    async function emailRoundTrip(page: Page, address: string): Promise<void> {
      await mountButtons(page, site, t.publishableKey);
      await Promise.all([
        page.waitForURL((url) => url.pathname === '/sign-in'),
        page.getByRole('button', { name: 'Continue with e-mail' }).click(),
      ]);
      await page.fill('#email', address);
      await page.fill('#password', PASSWORD);
      await Promise.all([
        page.waitForURL((url) => url.href.startsWith(`${callback()}#`)),
        page.click('button[type=submit]'),
      ]);
    }

    async function signedInPage(context: BrowserContext): Promise<Page> {
      const page = await context.newPage();
      await emailRoundTrip(page, await passwordUser());
      expect((await client.handleCallback(page)).email).toBeTruthy();
      return page;
    }

    beforeAll(async () => {
      const socket = reservePort();
      const base = `http://127.0.0.1:${socket.address().port}`;
      [github, browser] = await Promise.all([
        startProvider('github', { redirectUri: `${base}/oauth/github/callback` }),
        launchChromium(),
      ]);
      app = await startApp('sqlite', {
        socket,
        env: {
          LATCHKEY_PROVIDER_ENDPOINTS: JSON.stringify({ github: github.endpoints }),
        },
      });
      site = await startSite(app.url);
      t = await app.tenant({ allowedOrigins: [site.origin] });
      client = pageClient(t.publishableKey);
      await setProvider(app.ctx.database.db, app.ctx.box, t.tenant.id, 'github', {
        clientId: github.clientId,
        clientSecret: github.clientSecret,
        enabled: true,
      });
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await app?.dispose();
      await Promise.all([github?.close(), site?.close()]);
    });

    it('a GitHub round trip ends signed in; a reload keeps the session', async () => {
      const address = email('gh');
      github.next({ sub: String(800_000 + Math.floor(Math.random() * 100_000)), email: address });
      await withContext(browser, async (context) => {
        const page = await context.newPage();
        await mountButtons(page, site, t.publishableKey);
        await Promise.all([
          page.waitForURL((url) => url.href.startsWith(`${callback()}#`), { timeout: 15_000 }),
          page.getByRole('button', { name: 'Continue with GitHub' }).click(),
        ]);
        // No page of ours in between: the start went straight on to the provider.
        expect(github.requests.some((r) => r.path === '/login/oauth/authorize')).toBe(true);
        const session = await client.handleCallback(page);
        expect(session.email).toBe(address);
        expect(await page.evaluate(() => window.location.hash)).toBe('');
        expect((await introspect(session.token)).active).toBe(true);
        await page.reload();
        expect(await client.signedIn(page)).toBe(true);
        expect((await client.user(page))?.email).toBe(address);
        expect(await cspViolations(page)).toEqual([]);
      });
    });

    it('an e-mail round trip ends signed in; getToken after expiry returns a fresh, active token', async () => {
      const address = await passwordUser();
      await withContext(browser, async (context) => {
        const page = await context.newPage();
        await emailRoundTrip(page, address);
        const session = await client.handleCallback(page);
        expect(session.email).toBe(address);
        expect(await client.token(page)).toBe(session.token);
        await client.expire(page);
        const fresh = await client.token(page);
        expect(fresh).not.toBe(session.token);
        expect(await introspect(fresh)).toMatchObject({ active: true, email: address });
      });
    });

    /** Gives a user an authenticator app over REST; returns its secret (the code used up). */
    async function withApp(address: string): Promise<string> {
      const users = await json(
        await app.request(`/v1/users?email=${encodeURIComponent(address)}`, {
          headers: { authorization: `Bearer ${t.secretKey}` },
        }),
      );
      const userId = users.data[0].id as string;
      const started = await json(
        await postJson(app, `/v1/users/${userId}/factors`, t.secretKey, { type: 'totp' }),
      );
      const confirmed = await postJson(
        app,
        `/v1/users/${userId}/factors/${started.id}/confirm`,
        t.secretKey,
        { code: generateSync({ secret: started.secret }) },
      );
      expect(confirmed.status).toBe(200);
      return started.secret as string;
    }

    /** The hosted second step: the app's next code, and back on the callback page. */
    async function secondStep(page: Page, secret: string): Promise<void> {
      await page.waitForURL((url) => url.pathname === '/sign-in/verify');
      await page.fill('#code', generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
      await Promise.all([
        page.waitForURL((url) => url.href.startsWith(`${callback()}#`)),
        page.click('button[type=submit]'),
      ]);
    }

    it('the buttons of a user with an authenticator app: e-mail or GitHub, then the code, back signed in with amr mfa', async () => {
      const address = await passwordUser();
      const secret = await withApp(address);
      await withContext(browser, async (context) => {
        const page = await context.newPage();
        await mountButtons(page, site, t.publishableKey);
        await Promise.all([
          page.waitForURL((url) => url.pathname === '/sign-in'),
          page.getByRole('button', { name: 'Continue with e-mail' }).click(),
        ]);
        await page.fill('#email', address);
        await page.fill('#password', PASSWORD);
        await page.click('button[type=submit]');
        await secondStep(page, secret);
        const session = await client.handleCallback(page);
        expect(session.email).toBe(address);
        expect(await introspect(session.token)).toMatchObject({
          active: true,
          amr: ['pwd', 'otp', 'mfa'],
        });
        expect(await cspViolations(page)).toEqual([]);
      });

      // A GitHub user who then adds an app: the next GitHub sign-in asks for its code too.
      const gh = email('gh-mfa');
      const sub = String(900_000 + Math.floor(Math.random() * 99_999));
      await withContext(browser, async (context) => {
        const page = await context.newPage();
        github.next({ sub, email: gh });
        await mountButtons(page, site, t.publishableKey);
        await Promise.all([
          page.waitForURL((url) => url.href.startsWith(`${callback()}#`), { timeout: 15_000 }),
          page.getByRole('button', { name: 'Continue with GitHub' }).click(),
        ]);
        await client.handleCallback(page);
      });
      const ghSecret = await withApp(gh);
      await withContext(browser, async (context) => {
        const page = await context.newPage();
        github.next({ sub, email: gh });
        await mountButtons(page, site, t.publishableKey);
        await page.getByRole('button', { name: 'Continue with GitHub' }).click();
        await secondStep(page, ghSecret);
        const session = await client.handleCallback(page);
        expect(await introspect(session.token)).toMatchObject({
          active: true,
          email: gh,
          amr: ['fed', 'otp', 'mfa'],
        });
      });
    }, 60_000);

    it('two tabs refreshing at once stay signed in, and the session is not revoked', {
      timeout: 90_000,
    }, async () => {
      await withContext(browser, async (context) => {
        const first = await signedInPage(context);
        const second = await context.newPage();
        await second.goto(`${site.origin}/`);
        expect(await client.signedIn(second)).toBe(true);
        const sid = (await client.user(first))?.sid as string;
        const refreshes: [number, number] = [0, 0];
        const count = (i: 0 | 1) => (r: { method(): string; url(): string }) => {
          if (r.method() === 'POST' && r.url().endsWith('/v1/client/token')) refreshes[i] += 1;
        };
        first.on('request', count(0));
        second.on('request', count(1));
        // Hold each refresh until the other tab's has been sent too, so that neither tab can
        // learn the other's fresh token first. A loaded machine may run one tab's script
        // seconds after the other's: a refresh held alone goes on after 10 s (before the
        // library's own 15 s timeout), and that round does not count as a simultaneous one.
        let held: Array<() => void> = [];
        let paired = 0;
        await context.route('**/v1/client/token', async (route) => {
          await new Promise<void>((release) => {
            held.push(release);
            if (held.length >= 2) {
              for (const go of held) go();
              held = [];
              paired += 1;
            } else setTimeout(release, 10_000);
          });
          await route.continue();
        });
        let simultaneous = 0;
        for (let round = 1; simultaneous < 3 && round <= 6; round++) {
          // The last round's tabs tell each other their tokens; let that settle before the
          // stored token is expired, or a late message would put a fresh one back.
          const before = await eventually(async () => {
            const [a, b] = [await client.token(first), await client.token(second)];
            return a === b ? a : undefined;
          });
          const sentBefore: [number, number] = [...refreshes];
          const pairedBefore = paired;
          held = [];
          await client.expire(first);
          const tokens = await Promise.all([client.token(first), client.token(second)]);
          for (const token of tokens) expect((await introspect(token)).active).toBe(true);
          expect(await client.signedIn(first)).toBe(true);
          expect(await client.signedIn(second)).toBe(true);
          // A round counts when both refreshes were held together. On a loaded machine one
          // may not be: a tab ran late, or a late message of the last round put its (still
          // valid) token back before this round's expiry was seen; then the round is retried.
          if (paired > pairedBefore) {
            // Both tabs saw the expired token and refreshed it at the same moment, once each.
            expect(refreshes).toEqual([sentBefore[0] + 1, sentBefore[1] + 1]);
            for (const token of tokens) expect(token).not.toBe(before);
            simultaneous += 1;
          }
        }
        expect(simultaneous).toBe(3);
        expect((await app.ctx.sessions.get(t.tenant.id, sid)).revokedAt).toBeNull();
      });
    });

    it('signOut in one tab signs the other out; the old tokens introspect inactive', async () => {
      await withContext(browser, async (context) => {
        const first = await signedInPage(context);
        const second = await context.newPage();
        await second.goto(`${site.origin}/`);
        await second.evaluate((pk) => {
          window.states = [];
          window
            .Latchkey({ publishableKey: pk })
            .addListener((s) => window.states.push(s.isSignedIn));
        }, t.publishableKey);
        const access = await client.token(second);
        const { refreshToken } = JSON.parse((await client.stored(first)) as string);
        await first.evaluate(
          (pk) => window.Latchkey({ publishableKey: pk }).signOut(),
          t.publishableKey,
        );
        await expect.poll(() => client.signedIn(second)).toBe(false);
        // Told of the sign-out once, last (before it, maybe of the profile's arrival).
        const states = await second.evaluate(() => window.states);
        expect(states.filter((signedIn) => !signedIn)).toEqual([false]);
        expect(states.at(-1)).toBe(false);
        expect(await client.token(second)).toBeNull();
        expect(await client.stored(first)).toBeNull();
        expect(await introspect(access)).toEqual({ active: false });
        const refresh = await app.request('/v1/client/token', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-latchkey-publishable-key': t.publishableKey,
            origin: site.origin,
          },
          body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: refreshToken }),
        });
        expect(refresh.status).toBe(400);
      });
    });

    it('after signOut the hosted page asks again: no way straight back on a shared computer', async () => {
      const address = await passwordUser();
      await withContext(browser, async (context) => {
        const page = await context.newPage();
        await emailRoundTrip(page, address);
        expect((await client.handleCallback(page)).email).toBe(address);
        const hosted = `${app.url}/sign-in?${new URLSearchParams({
          pk: t.publishableKey,
          redirect_url: callback(),
        })}`;
        // Signed in, a plain visit goes straight back with a token.
        await page.goto(hosted);
        await page.waitForURL((url) => url.href.startsWith(`${callback()}#`));
        await page.goto(`${site.origin}/`);
        await page.evaluate(
          (pk) => window.Latchkey({ publishableKey: pk }).signOut(),
          t.publishableKey,
        );
        // The next person at this browser gets the form, by a plain link or by the buttons.
        await page.goto(hosted);
        expect(new URL(page.url()).pathname).toBe('/sign-in');
        expect(await page.locator('#password').count()).toBe(1);
        await mountButtons(page, site, t.publishableKey);
        await Promise.all([
          page.waitForURL((url) => url.pathname === '/sign-in'),
          page.getByRole('button', { name: 'Continue with e-mail' }).click(),
        ]);
        expect(await page.locator('#password').count()).toBe(1);
        expect(await page.textContent('body')).not.toContain('Continue as');
      });
    });

    it('a page on an origin the tenant does not allow hears origin_not_allowed and the fix', async () => {
      const other = await startSite(app.url);
      try {
        await withContext(browser, async (context) => {
          const page = await context.newPage();
          await page.goto(`${other.origin}/`);
          const outcome = await page.evaluate(async (pk) => {
            // A session this origin cannot use: the refresh is refused for the origin.
            window.localStorage.setItem(
              `latchkey:${pk}`,
              JSON.stringify({ accessToken: 'a.b.c', refreshToken: 'lkr_x', expiresAt: 0 }),
            );
            try {
              await window.Latchkey({ publishableKey: pk }).getToken();
              return null;
            } catch (error) {
              const { code, message } = error as { code: string; message: string };
              return { code, message };
            }
          }, t.publishableKey);
          expect(outcome).toEqual({
            code: 'origin_not_allowed',
            message: `${other.origin} is not an allowed origin of this tenant; allow it: latchkey tenant update ID --add-origin ${other.origin}`,
          });
          expect(await cspViolations(page)).toEqual([]);
        });
      } finally {
        await other.close();
      }
    });

    it('refuses a tampered state and stores nothing', async () => {
      const address = await passwordUser();
      await withContext(browser, async (context) => {
        const page = await context.newPage();
        await emailRoundTrip(page, address);
        await page.evaluate(() => {
          const url = window.location.href.replace(/state=[^&]+/, 'state=tampered');
          (
            globalThis as unknown as {
              history: { replaceState(s: null, t: string, u: string): void };
            }
          ).history.replaceState(null, '', url);
        });
        expect(await client.handleCallback(page)).toEqual({ error: 'state_mismatch' });
        expect(await page.evaluate(() => window.location.hash)).toBe('');
        expect(await client.signedIn(page)).toBe(false);
        expect(await client.stored(page)).toBeNull();
      });
    });
  },
);
