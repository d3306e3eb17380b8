/**
 * examples/nextjs (docs/design.md §15), built by `next build` once per change and served by
 * `next start`, in real Chromium against the real Latchkey server on each database (the build
 * is made once; each database gets its own server and example process):
 * sign-in and back, the page rendered on the server, a refresh while browsing with no
 * redirect, one refresh for many parallel requests, a session revoked in Latchkey sending
 * the browser to sign in once, and sign-out.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/src/modules/oauth/index.js';
import { updateTenant } from '../../server/src/modules/tenants/index.js';
import { HAVE_CHROMIUM, launchChromium } from '../../server/test/browser.js';
import {
  DIALECTS,
  email,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from '../../server/test/support.js';
import {
  buildExample,
  freePort,
  gzippedSize,
  type RunningExample,
  startExample,
} from './example.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PASSWORD = 'correct horse battery staple';
/**
 * Access tokens live 68 s and the session refreshes them 60 s before they expire
 * (`refreshBeforeSeconds`' default): a refresh is due 8 s after each one.
 */
const TOKEN_TTL = 68;
const DUE_AFTER_MS = (TOKEN_TTL - 60 + 1) * 1000;

describe.skipIf(!HAVE_CHROMIUM).each(DIALECTS)(
  'examples/nextjs in Chromium against the server on %s',
  (dialect) => {
    let app: TestApp;
    let t: TestTenant;
    let site: RunningExample;
    let origin: string;
    let browser: Browser;
    let issuer: string;
    let user: { email: string; password: string };
    const started = performance.now();

    beforeAll(async () => {
      const buildMs = buildExample();
      app = await startApp(dialect);
      t = await app.tenant();
      issuer = `${app.url}/t/${t.tenant.id}`;
      await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, t.tenant.id, {
        accessTokenTtl: TOKEN_TTL,
      });
      const port = await freePort();
      origin = `http://localhost:${port}`;
      const web = await createApp(app.ctx.database.db, t.tenant.id, {
        name: 'Next.js example',
        type: 'web',
        redirectUris: [`${origin}/api/latchkey/callback`],
        postLogoutRedirectUris: [origin],
      });
      user = { email: email('next'), password: PASSWORD };
      const up = await postJson(app, '/v1/auth/sign-up', t.secretKey, user);
      expect(up.status).toBe(201);
      site = await startExample(port, {
        LATCHKEY_ISSUER: issuer,
        LATCHKEY_CLIENT_ID: web.app.id,
        LATCHKEY_CLIENT_SECRET: web.clientSecret ?? '',
        LATCHKEY_COOKIE_SECRET: 'a-cookie-secret-of-at-least-32-characters!',
        APP_BASE_URL: origin,
      });
      browser = await launchChromium();
      mkdirSync(ARTIFACTS, { recursive: true });
      const size = gzippedSize(join(ROOT, 'packages/nextjs/dist'), gzipSync);
      console.log(
        `examples/nextjs: next build ${buildMs ? `${Math.round(buildMs)} ms` : 'cached'}; @latchkey/nextjs dist ${size} bytes gzipped`,
      );
    }, 300_000);

    afterAll(async () => {
      await browser?.close();
      await site?.stop();
      await app?.dispose();
      console.log(`examples/nextjs suite: ${Math.round(performance.now() - started)} ms`);
    });

    /** POSTs to the token endpoint the server has logged so far (a refresh or a code each). */
    const tokenCalls = () =>
      app.logs.lines.filter((line) => {
        const entry = JSON.parse(line) as { msg?: string; req?: { method: string; url: string } };
        return (
          entry.msg === 'request completed' &&
          entry.req?.method === 'POST' &&
          entry.req.url.endsWith('/oauth/token')
        );
      }).length;

    /** Every document the main frame loads, in order (redirects included). */
    function documents(page: Page): string[] {
      const seen: string[] = [];
      page.on('request', (request) => {
        if (request.isNavigationRequest() && request.frame() === page.mainFrame()) {
          seen.push(request.url());
        }
      });
      return seen;
    }

    async function signInOnLatchkey(page: Page): Promise<void> {
      await page.waitForURL((url) => url.href.startsWith(`${app.url}/sign-in`));
      await page.fill('#email', user.email);
      await page.fill('#password', user.password);
      await Promise.all([
        page.waitForURL((url) => url.origin === origin),
        page.click('button[type=submit]'),
      ]);
    }

    /** The page at desktop and phone widths, in test-artifacts/. */
    async function screenshots(page: Page, name: string): Promise<void> {
      for (const [width, height, label] of [
        [1280, 800, 'desktop'],
        [390, 844, 'phone'],
      ] as const) {
        await page.setViewportSize({ width, height });
        await page.screenshot({ path: join(ARTIFACTS, `nextjs-${name}-${label}.png`) });
      }
    }

    const sessionCookies = async (context: BrowserContext) =>
      (await context.cookies(origin)).filter((c) => c.name.startsWith('latchkey_session'));

    let context: BrowserContext;
    let page: Page;
    let sessionId: string;

    it('public page signed out; /dashboard sends the browser to sign in and back; /api/me is 401', async () => {
      context = await browser.newContext();
      page = await context.newPage();
      await page.goto(`${origin}/`);
      expect(await page.getByRole('link', { name: 'Sign in' }).count()).toBeGreaterThan(0);
      await screenshots(page, 'home');
      const me = await context.request.get(`${origin}/api/me`);
      expect(me.status()).toBe(401);

      const seen = documents(page);
      await page.goto(`${origin}/dashboard`);
      await signInOnLatchkey(page);
      await page.waitForURL(`${origin}/dashboard`);
      await expect.poll(() => page.textContent('main')).toContain(`Signed in as ${user.email}`);
      expect(seen[0]).toBe(`${origin}/dashboard`);
      expect(seen[1]).toBe(`${origin}/api/latchkey/sign-in?returnTo=%2Fdashboard`);
      // No token in any URL the browser loaded.
      for (const url of seen) expect(url).not.toMatch(/eyJ|access_token|refresh_token/);

      const [cookie] = await sessionCookies(context);
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
      expect(await page.evaluate(() => document.cookie)).not.toContain('latchkey_session');
    });

    it('renders the user on the server: the HTML itself names them; /api/me answers from auth()', async () => {
      const html = await (await context.request.get(`${origin}/dashboard`)).text();
      // React separates the text and the expression with a comment in the HTML.
      expect(html).toMatch(
        new RegExp(`Signed in as (<!-- -->)?${user.email.replace(/[.]/g, '\\.')}`),
      );
      const me = await context.request.get(`${origin}/api/me`);
      expect(me.status()).toBe(200);
      const body = (await me.json()) as { userId: string; sessionId: string; email: string };
      expect(body.email).toBe(user.email);
      expect(body.userId).toMatch(UUID);
      expect(body.sessionId).toMatch(UUID);
      sessionId = body.sessionId;
    });

    it('a server action calls an API (userinfo) with the access token', async () => {
      await page.getByRole('button', { name: /Call userinfo/ }).click();
      const answer = page.getByRole('region', { name: 'API answer' });
      await expect.poll(() => answer.textContent()).toContain(`"email":"${user.email}"`);
      expect(await answer.textContent()).toMatch(/^200 /);
      await screenshots(page, 'dashboard');
    });

    it('the access token falls due while browsing: the next render refreshes it, no redirect', async () => {
      await page.waitForTimeout(DUE_AFTER_MS);
      const before = tokenCalls();
      const cookieBefore = (await sessionCookies(context))[0]?.value;
      const seen = documents(page);
      await page.reload();
      expect(seen).toEqual([`${origin}/dashboard`]);
      expect(page.url()).toBe(`${origin}/dashboard`);
      expect(await page.textContent('main')).toContain(`Signed in as ${user.email}`);
      expect(tokenCalls()).toBe(before + 1);
      expect((await sessionCookies(context))[0]?.value).not.toBe(cookieBefore);
    });

    it('many parallel requests when it falls due make one refresh', async () => {
      await page.waitForTimeout(DUE_AFTER_MS);
      const before = tokenCalls();
      const answers = await page.evaluate(() =>
        Promise.all(
          Array.from({ length: 12 }, () =>
            fetch('/api/me').then(async (r) => ({ status: r.status, body: await r.json() })),
          ),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
      expect(new Set(answers.map((a) => a.body.sessionId))).toEqual(new Set([sessionId]));
      expect(tokenCalls()).toBe(before + 1);
      // And the session goes on: the next request uses the new cookie, no refresh.
      expect((await context.request.get(`${origin}/api/me`)).status()).toBe(200);
      expect(tokenCalls()).toBe(before + 1);
    });

    it('a session revoked in Latchkey: at the next refresh, one redirect to sign in, no loop', async () => {
      const revoked = await app.request(`/v1/sessions/${sessionId}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${t.secretKey}` },
      });
      expect(revoked.status).toBe(204);
      // Until the refresh falls due the access token holds (checked locally, no call per request).
      expect((await context.request.get(`${origin}/api/me`)).status()).toBe(200);
      await page.waitForTimeout(DUE_AFTER_MS);
      const seen = documents(page);
      await page.goto(`${origin}/dashboard`);
      await page.waitForURL(
        (url) => url.href.startsWith(`${app.url}/sign-in`) || url.href === `${origin}/dashboard`,
      );
      // Latchkey's provider may still know the browser (its own session outlives this one):
      // then it answers at once with a new code, else its sign-in form asks again.
      if (page.url().startsWith(`${app.url}/sign-in`)) await signInOnLatchkey(page);
      await page.waitForURL(`${origin}/dashboard`);
      expect(await page.textContent('main')).toContain(`Signed in as ${user.email}`);
      const signIns = seen.filter((u) => u.startsWith(`${origin}/api/latchkey/sign-in`));
      expect(signIns).toEqual([`${origin}/api/latchkey/sign-in?returnTo=%2Fdashboard`]);
      expect(seen.filter((u) => u === `${origin}/dashboard`)).toHaveLength(2);
      const me = (await (await context.request.get(`${origin}/api/me`)).json()) as {
        sessionId: string;
      };
      expect(me.sessionId).not.toBe(sessionId);
    });

    it('sign-out clears the cookie and ends the session in Latchkey', async () => {
      const me = (await (await context.request.get(`${origin}/api/me`)).json()) as {
        sessionId: string;
      };
      await page.getByRole('main').getByRole('button', { name: 'Sign out' }).click();
      // RP-initiated logout: Latchkey asks whether to sign out of it too.
      await page.waitForURL((url) => url.href.startsWith(`${issuer}/oauth/end-session`));
      expect(await sessionCookies(context)).toEqual([]);
      const ended = await app.ctx.sessions.get(t.tenant.id, me.sessionId);
      expect(ended.revokedAt).not.toBeNull();
      await page.screenshot({ path: join(ARTIFACTS, 'nextjs-end-session.png') });
      await Promise.all([
        page.waitForURL(`${origin}/`),
        page.getByRole('button', { name: 'Sign out' }).click(),
      ]);
      expect(await page.getByRole('link', { name: 'Sign in' }).count()).toBeGreaterThan(0);
      expect((await context.request.get(`${origin}/api/me`)).status()).toBe(401);
      // Latchkey's own session ended as well: its sign-in form, not an instant way back.
      await page.goto(`${origin}/dashboard`);
      await page.waitForURL((url) => url.href.startsWith(`${app.url}/sign-in`));
      await context.close();
      // Neither server wrote a token (a JWT, a refresh token) to its output.
      expect(site.output()).not.toMatch(/eyJ[\w-]+\.eyJ/);
      expect(app.logs.text()).not.toMatch(/eyJ[\w-]+\.eyJ/);
      // Every refresh happened in the proxy, before the pages rendered.
      expect(site.output()).not.toContain('refreshed while rendering a server component');
    });
  },
);
