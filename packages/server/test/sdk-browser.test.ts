/**
 * @latchkey/js in a real Chromium against the real server: an app page on another origin,
 * under a strict Content-Security-Policy, loads /sdk/latchkey.js and signs in through a
 * GitHub-shaped provider and through the hosted e-mail page.
 */
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setProvider } from '../src/modules/social/index.js';
import { updateTenant } from '../src/modules/tenants/index.js';
import { HAVE_CHROMIUM, launchChromium } from './browser.js';
import { type ProviderServer, startProvider } from './providers.js';
import {
  email,
  freePort,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const PASSWORD = 'correct horse battery staple';
const COLOUR = '#1a7f37';

/** What the tests call in the page (evaluate runs outside the page's CSP, as devtools do). */
interface PageClient {
  mount(target: string, options: { redirectUrl: string }): () => void;
  handleRedirectCallback(): Promise<{ user: { email: string }; accessToken: string } | null>;
  isSignedIn(): boolean;
  getUser(): { email: string; sid: string } | null;
  getToken(): Promise<string | null>;
  signOut(): Promise<void>;
  addListener(listener: (state: { isSignedIn: boolean }) => void): () => void;
}
interface PageGlobals {
  Latchkey(options: { publishableKey: string }): PageClient;
  localStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };
  location: { href: string; hash: string; origin: string };
  document: { querySelector(selector: string): PageNode | null };
  axe: { run(context: unknown): Promise<{ violations: { id: string; help: string }[] }> };
  cspViolations: string[];
  states: boolean[];
}
interface PageNode {
  shadowRoot: {
    querySelector(s: string): PageNode | null;
    querySelectorAll(s: string): ArrayLike<unknown>;
  };
  textContent: string | null;
}
declare const window: PageGlobals;

/** The caller's site: an app page and a callback page, both loading the script under a strict CSP. */
async function startSite(authUrl: string) {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/app.css') {
      // The host page's own rules, aimed at everything: none may reach the shadow root.
      res.writeHead(200, { 'content-type': 'text/css' });
      res.end('button{background:rgb(255,0,0)!important;font-size:40px}h2{color:rgb(0,0,255)}');
      return;
    }
    if (path === '/logo.svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      res.end(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40"><circle cx="20" cy="20" r="18" fill="#6639ba"/><path d="M20 8l6 16h-12z" fill="#fff"/></svg>',
      );
      return;
    }
    if (path !== '/' && path !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; script-src ${authUrl}; connect-src ${authUrl}; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'`,
    });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>App</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/app.css"><script src="${authUrl}/sdk/latchkey.js"></script></head>
<body><main><h1>App</h1><button id="host-button">The page's own button</button><div id="sign-in"></div></main></body></html>`);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://localhost:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

describe.skipIf(!HAVE_CHROMIUM)(
  '@latchkey/js in Chromium, from another origin under a strict CSP',
  () => {
    let app: TestApp;
    let github: ProviderServer;
    let site: Awaited<ReturnType<typeof startSite>>;
    let browser: Browser;
    let t: TestTenant;

    const callback = () => `${site.origin}/callback`;

    async function withContext<T>(
      use: (context: BrowserContext) => Promise<T>,
      options: Parameters<Browser['newContext']>[0] = {},
    ): Promise<T> {
      const context = await browser.newContext(options);
      await context.addInitScript(() => {
        window.cspViolations = [];
        (
          window as unknown as { addEventListener(t: string, l: (e: never) => void): void }
        ).addEventListener(
          'securitypolicyviolation',
          (e: { violatedDirective: string; blockedURI: string }) =>
            window.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`),
        );
      });
      try {
        return await use(context);
      } finally {
        await context.close();
      }
    }

    /** Opens the app page and mounts the buttons; resolves once they are drawn. */
    async function mounted(page: Page, tenant = t): Promise<void> {
      expect((await page.goto(`${site.origin}/`))?.status()).toBe(200);
      await page.evaluate(
        ({ pk, redirectUrl }) => {
          window.Latchkey({ publishableKey: pk }).mount('#sign-in', { redirectUrl });
        },
        { pk: tenant.publishableKey, redirectUrl: callback() },
      );
      await page
        .getByRole('button', { name: /^Continue with/ })
        .first()
        .waitFor();
    }

    const buttons = (page: Page) =>
      page.getByRole('button', { name: /^Continue with/ }).allTextContents();
    const cspViolations = (page: Page) => page.evaluate(() => window.cspViolations);

    const handleCallback = (page: Page, pk = t.publishableKey) =>
      page.evaluate(async (key) => {
        try {
          const session = await window.Latchkey({ publishableKey: key }).handleRedirectCallback();
          return { email: session?.user.email, token: session?.accessToken };
        } catch (error) {
          return { error: (error as { code: string }).code };
        }
      }, pk);

    const client = {
      signedIn: (page: Page) =>
        page.evaluate(
          (pk) => window.Latchkey({ publishableKey: pk }).isSignedIn(),
          t.publishableKey,
        ),
      user: (page: Page) =>
        page.evaluate((pk) => window.Latchkey({ publishableKey: pk }).getUser(), t.publishableKey),
      token: (page: Page) =>
        page.evaluate((pk) => window.Latchkey({ publishableKey: pk }).getToken(), t.publishableKey),
      stored: (page: Page) =>
        page.evaluate((pk) => window.localStorage.getItem(`latchkey:${pk}`), t.publishableKey),
      /** Moves the stored access token's expiry into the past, as time passing would. */
      expire: (page: Page) =>
        page.evaluate((pk) => {
          const key = `latchkey:${pk}`;
          const tokens = JSON.parse(window.localStorage.getItem(key) as string);
          tokens.expiresAt = Date.now() - 1000;
          window.localStorage.setItem(key, JSON.stringify(tokens));
        }, t.publishableKey),
    };

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
      await mounted(page);
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
      expect((await handleCallback(page)).email).toBeTruthy();
      return page;
    }

    beforeAll(async () => {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      [github, browser] = await Promise.all([
        startProvider('github', { redirectUri: `${base}/oauth/github/callback` }),
        launchChromium(),
      ]);
      app = await startApp('sqlite', {
        env: {
          PORT: String(port),
          PUBLIC_URL: base,
          LATCHKEY_PROVIDER_ENDPOINTS: JSON.stringify({ github: github.endpoints }),
        },
      });
      site = await startSite(app.url);
      t = await app.tenant({ allowedOrigins: [site.origin] });
      await updateTenant(app.ctx.database.db, t.tenant.id, { primaryColor: COLOUR });
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

    it("loads under the CSP and mounts the tenant's providers, isolated from the page's CSS", async () => {
      await withContext(async (context) => {
        const page = await context.newPage();
        await mounted(page);
        expect(await buttons(page)).toEqual(['Continue with GitHub', 'Continue with e-mail']);
        expect(
          await page.getByRole('heading', { name: `Sign in to ${t.tenant.name}` }).count(),
        ).toBe(1);
        const style = (selector: string, property: string) =>
          page
            .locator(selector)
            .evaluate(
              (node, p) =>
                (
                  globalThis as unknown as { getComputedStyle(n: unknown): Record<string, string> }
                ).getComputedStyle(node)[p],
              property,
            );
        // The tenant's colour on the e-mail button; the page's red never gets in...
        const emailButton = 'button:has-text("Continue with e-mail")';
        expect(await style(emailButton, 'backgroundColor')).toBe('rgb(26, 127, 55)');
        expect(await style('button:has-text("Continue with GitHub")', 'backgroundColor')).toBe(
          'rgb(255, 255, 255)',
        );
        expect(await style(emailButton, 'fontSize')).toBe('15px');
        // ...and ours never gets out.
        expect(await style('#host-button', 'backgroundColor')).toBe('rgb(255, 0, 0)');
        expect(await cspViolations(page)).toEqual([]);
      });
    });

    it('renders a tenant name with markup as text', async () => {
      const marked = await app.tenant({ allowedOrigins: [site.origin] });
      const name = '<img src=x onerror=alert(1)><b>Acme</b>';
      await updateTenant(app.ctx.database.db, marked.tenant.id, { name });
      await withContext(async (context) => {
        const page = await context.newPage();
        await mounted(page, marked);
        const inside = await page.evaluate(() => {
          const root = window.document.querySelector('[data-latchkey]')?.shadowRoot;
          return {
            heading: root?.querySelector('h2')?.textContent,
            elements: root?.querySelectorAll('img, b').length,
          };
        });
        expect(inside).toEqual({ heading: `Sign in to ${name}`, elements: 0 });
      });
    });

    it('a GitHub round trip ends signed in; a reload keeps the session', async () => {
      const address = email('gh');
      github.next({ sub: String(800_000 + Math.floor(Math.random() * 100_000)), email: address });
      await withContext(async (context) => {
        const page = await context.newPage();
        await mounted(page);
        await Promise.all([
          page.waitForURL((url) => url.href.startsWith(`${callback()}#`), { timeout: 15_000 }),
          page.getByRole('button', { name: 'Continue with GitHub' }).click(),
        ]);
        // No page of ours in between: the start went straight on to the provider.
        expect(github.requests.some((r) => r.path === '/login/oauth/authorize')).toBe(true);
        const session = await handleCallback(page);
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
      await withContext(async (context) => {
        const page = await context.newPage();
        await emailRoundTrip(page, address);
        const session = await handleCallback(page);
        expect(session.email).toBe(address);
        expect(await client.token(page)).toBe(session.token);
        await client.expire(page);
        const fresh = await client.token(page);
        expect(fresh).not.toBe(session.token);
        expect(await introspect(fresh)).toMatchObject({ active: true, email: address });
      });
    });

    it('two tabs refreshing at once stay signed in, and the session is not revoked', async () => {
      await withContext(async (context) => {
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
        for (let round = 1; round <= 3; round++) {
          const before = await client.token(first);
          await client.expire(first);
          const tokens = await Promise.all([client.token(first), client.token(second)]);
          // Both tabs saw the expired token and refreshed it at the same moment.
          expect(refreshes).toEqual([round, round]);
          for (const token of tokens) {
            expect(token).not.toBe(before);
            expect((await introspect(token)).active).toBe(true);
          }
          expect(await client.signedIn(first)).toBe(true);
          expect(await client.signedIn(second)).toBe(true);
        }
        expect((await app.ctx.sessions.get(t.tenant.id, sid)).revokedAt).toBeNull();
      });
    });

    it('signOut in one tab signs the other out; the old tokens introspect inactive', async () => {
      await withContext(async (context) => {
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
        expect(await second.evaluate(() => window.states)).toEqual([false]);
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

    it('refuses a tampered state and stores nothing', async () => {
      const address = await passwordUser();
      await withContext(async (context) => {
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
        expect(await handleCallback(page)).toEqual({ error: 'state_mismatch' });
        expect(await page.evaluate(() => window.location.hash)).toBe('');
        expect(await client.signedIn(page)).toBe(false);
        expect(await client.stored(page)).toBeNull();
      });
    });

    it('the mounted buttons have no axe-core violation; screenshots at desktop and phone width', async () => {
      const showcase = await app.tenant({ allowedOrigins: [site.origin] });
      await updateTenant(app.ctx.database.db, showcase.tenant.id, {
        name: 'Acme Rockets',
        primaryColor: '#6639ba',
        logoUrl: `${site.origin}/logo.svg`,
      });
      const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString();
      for (const id of ['google', 'facebook', 'github', 'apple', 'microsoft'] as const) {
        await setProvider(app.ctx.database.db, app.ctx.box, showcase.tenant.id, id, {
          clientId: `client-${id}`,
          enabled: true,
          ...(id === 'apple'
            ? { teamId: 'TEAM123456', keyId: 'KEY1234567', privateKeyPem: pem }
            : { clientSecret: 'secret' }),
        });
      }
      const axePath = join(
        dirname(createRequire(import.meta.url).resolve('axe-core')),
        'axe.min.js',
      );
      const axe = readFileSync(axePath, 'utf8');
      mkdirSync(ARTIFACTS, { recursive: true });
      const all = [
        'Continue with Google',
        'Continue with Facebook',
        'Continue with GitHub',
        'Continue with Apple',
        'Continue with Microsoft',
        'Continue with e-mail',
      ];
      const phone = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true };
      await withContext(async (context) => {
        const page = await context.newPage();
        await mounted(page, showcase);
        expect(await buttons(page)).toEqual(all);
        await page.locator('[data-latchkey]').screenshot({
          path: join(ARTIFACTS, 'sdk-buttons-phone.png'),
        });
      }, phone);
      await withContext(async (context) => {
        const page = await context.newPage();
        await page.setViewportSize({ width: 1280, height: 800 });
        await mounted(page, showcase);
        expect(await buttons(page)).toEqual(all);
        // The logo is decorative (alt=""): the tenant's name follows as text.
        const logo = page.locator('[data-latchkey] img');
        expect(await logo.getAttribute('alt')).toBe('');
        await expect
          .poll(() =>
            logo.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
          )
          .toBeGreaterThan(0);
        await page.locator('[data-latchkey]').screenshot({
          path: join(ARTIFACTS, 'sdk-buttons-desktop.png'),
        });
        // Keyboard: Tab reaches every button in order.
        await page.locator('#host-button').focus();
        const order: string[] = [];
        for (let i = 0; i < 6; i++) {
          await page.keyboard.press('Tab');
          order.push(
            await page.evaluate(() => {
              const active = (
                globalThis as unknown as {
                  document: {
                    activeElement: {
                      shadowRoot: { activeElement: { textContent: string } | null } | null;
                    } | null;
                  };
                }
              ).document.activeElement;
              return active?.shadowRoot?.activeElement?.textContent ?? '';
            }),
          );
        }
        expect(order).toEqual(all);
        // Devtools evaluation is not bound by the page's CSP; a <script> tag would be.
        await page.evaluate(axe);
        const violations = await page.evaluate(() =>
          window.axe
            .run(window.document.querySelector('[data-latchkey]'))
            .then((r) => r.violations.map((v) => `${v.id}: ${v.help}`)),
        );
        expect(violations).toEqual([]);
      });
    });

    it('the script-tag example signs in with e-mail, shows the e-mail, and signs out', async () => {
      const port = await freePort();
      const origin = `http://localhost:${port}`;
      const example = await app.tenant({ allowedOrigins: [origin] });
      const address = email('example');
      await postJson(app, '/v1/auth/sign-up', example.secretKey, {
        email: address,
        password: PASSWORD,
      });
      const server = spawn(process.execPath, [join(ROOT, 'examples/script-tag/server.mjs')], {
        env: { ...process.env, PORT: String(port), LATCHKEY_URL: app.url },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      try {
        await new Promise((ready) => server.stdout?.once('data', ready));
        await withContext(async (context) => {
          const page = await context.newPage();
          await page.goto(`${origin}/?pk=${example.publishableKey}`);
          await Promise.all([
            page.waitForURL((url) => url.pathname === '/sign-in'),
            page.getByRole('button', { name: 'Continue with e-mail' }).click(),
          ]);
          await page.fill('#email', address);
          await page.fill('#password', PASSWORD);
          await page.click('button[type=submit]');
          await page.waitForURL(`${origin}/`);
          await expect.poll(() => page.textContent('#email')).toBe(address);
          await page.getByRole('button', { name: 'Sign out' }).click();
          await page.getByRole('button', { name: 'Continue with e-mail' }).waitFor();
          expect(await page.isHidden('#signed-in')).toBe(true);
          expect(await cspViolations(page)).toEqual([]);
        });
      } finally {
        server.kill();
      }
    });
  },
);
