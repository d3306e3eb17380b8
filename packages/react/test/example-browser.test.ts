/**
 * The example app (examples/react-vite), built by Vite and served by `vite preview` with its
 * /api/me route, in real Chromium against the real server and a GitHub-shaped provider on
 * loopback: the signed-out buttons, a provider round trip, the user menu by keyboard, sign-out,
 * and the API refusing the old token afterwards. axe-core on every view; screenshots.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { build, type PreviewServer, preview } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setProvider } from '../../server/src/modules/social/index.js';
import { updateTenant } from '../../server/src/modules/tenants/index.js';
import { HAVE_CHROMIUM, launchChromium, seriousViolations } from '../../server/test/browser.js';
import { type ProviderServer, startProvider } from '../../server/test/providers.js';
import { reservePort, startApp, type TestApp } from '../../server/test/support.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const EXAMPLE = join(ROOT, 'examples/react-vite');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const AXE = readFileSync(
  join(dirname(createRequire(import.meta.url).resolve('axe-core')), 'axe.min.js'),
  'utf8',
);

const PHONE = { width: 390, height: 844 };
/** A 1x1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

describe.skipIf(!HAVE_CHROMIUM)('examples/react-vite in Chromium', () => {
  let app: TestApp;
  let github: ProviderServer;
  let site: PreviewServer;
  let origin: string;
  let browser: Browser;
  let publishableKey: string;
  const outDir = mkdtempSync(join(tmpdir(), 'latchkey-react-vite-'));

  beforeAll(async () => {
    const socket = reservePort();
    const authUrl = `http://127.0.0.1:${socket.address().port}`;
    github = await startProvider('github', { redirectUri: `${authUrl}/oauth/github/callback` });
    app = await startApp('sqlite', {
      socket,
      env: { LATCHKEY_PROVIDER_ENDPOINTS: JSON.stringify({ github: github.endpoints }) },
    });
    // Its allowed origin is the site's, known once the site listens (below).
    const t = await app.tenant();
    publishableKey = t.publishableKey;
    await setProvider(app.ctx.database.db, app.ctx.box, t.tenant.id, 'github', {
      clientId: github.clientId,
      clientSecret: github.clientSecret,
      enabled: true,
    });
    // What a developer puts in examples/react-vite/.env.
    Object.assign(process.env, {
      VITE_LATCHKEY_PUBLISHABLE_KEY: t.publishableKey,
      VITE_LATCHKEY_URL: authUrl,
      LATCHKEY_SECRET_KEY: t.secretKey,
      LATCHKEY_API_URL: authUrl,
    });
    const quiet = { root: EXAMPLE, logLevel: 'silent' as const };
    await build({ ...quiet, build: { outDir, emptyOutDir: true } });
    site = await preview({ ...quiet, build: { outDir }, preview: { port: 0 } });
    origin = `http://localhost:${(site.httpServer.address() as AddressInfo).port}`;
    await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, t.tenant.id, {
      allowedOrigins: [origin],
    });
    browser = await launchChromium();
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await app?.dispose();
    await github?.close();
    rmSync(outDir, { recursive: true, force: true });
  });

  const buttons = (page: Page) =>
    page.locator('[data-latchkey]').getByRole('button').allTextContents();
  const focused = (page: Page) =>
    page.evaluate(
      () =>
        document.activeElement?.getAttribute('aria-label') ??
        document.activeElement?.textContent ??
        '',
    );
  /**
   * A context whose GitHub avatars come from a stand-in for GitHub's image host (outside this
   * machine's reach): a PNG, as avatars.githubusercontent.com answers; or, `unreachable`, no
   * answer at all.
   */
  async function withAvatars(
    context: BrowserContext,
    host: 'answers' | 'unreachable' = 'answers',
  ): Promise<BrowserContext> {
    await context.route('https://avatars.githubusercontent.com/**', (route) =>
      host === 'answers'
        ? route.fulfill({ status: 200, contentType: 'image/png', body: PNG })
        : route.abort('connectionrefused'),
    );
    return context;
  }
  const shoot = (page: Page, name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `react-${name}.png`), fullPage: true });

  it('signs in with GitHub, shows the user, calls the API, signs out by keyboard', async () => {
    github.next({ sub: '4242', email: 'grace@example.com', name: 'Grace Hopper' });
    const context = await withAvatars(await browser.newContext());
    const page = await context.newPage();
    const violations: string[] = [];
    const check = async (name: string) => {
      violations.push(...(await seriousViolations(page, [[name, async () => {}]], AXE)));
    };

    // Signed out: the public page shows the tenant's buttons, as mount() draws them.
    await page.goto(`${origin}/`);
    await expect
      .poll(() => buttons(page))
      .toEqual(['Continue with GitHub', 'Continue with e-mail']);
    expect(await page.getByRole('button', { name: /account: /i }).count()).toBe(0);
    await check('home, signed out');
    await shoot(page, 'signed-out');

    // The page for signed-in users offers sign-in instead.
    await page.goto(`${origin}/account`);
    await expect
      .poll(() => buttons(page))
      .toEqual(['Continue with GitHub', 'Continue with e-mail']);
    expect(await page.getByText('This page is for signed-in users.').count()).toBe(1);
    await check('account, signed out');

    // The round trip: GitHub (on loopback) and back to /callback, then back to /account,
    // where it started.
    await page
      .locator('[data-latchkey]')
      .getByRole('button', { name: 'Continue with GitHub' })
      .click();
    await page.waitForURL(`${origin}/account`);
    // The name is the profile's (GitHub gave it at sign-up), not a claim of the token.
    await page.getByText('Signed in as Grace Hopper (grace@example.com).').waitFor();
    expect(github.requests.some((r) => r.path.includes('authorize'))).toBe(true);
    await check('account, signed in');
    await shoot(page, 'signed-in');

    await page.getByRole('button', { name: 'Call the API' }).click();
    await expect
      .poll(() => page.locator('output').textContent())
      .toMatch(/^200 .*grace@example\.com/);
    const stored = await page.evaluate(
      (key) => localStorage.getItem(`latchkey:${key}`),
      publishableKey,
    );
    const oldToken = (JSON.parse(stored ?? '{}') as { accessToken?: string }).accessToken;
    expect(oldToken).toMatch(/^ey/);

    // The user menu, by keyboard only.
    const avatar = page.getByRole('button', { name: 'Account: grace@example.com' });
    // The profile's picture: GitHub's avatar_url, kept by Latchkey at sign-in.
    expect(await avatar.locator('img').getAttribute('src')).toMatch(
      /^https:\/\/avatars\.githubusercontent\.com\//,
    );
    await avatar.focus();
    await page.keyboard.press('Enter');
    expect(await avatar.getAttribute('aria-expanded')).toBe('true');
    expect(await focused(page)).toBe('Sign out');
    await check('account, menu open');
    await shoot(page, 'menu');
    await page.keyboard.press('Escape');
    expect(await avatar.getAttribute('aria-expanded')).toBe('false');
    expect(await page.getByRole('menu').count()).toBe(0);
    expect(await focused(page)).toBe('Account: grace@example.com');
    await page.keyboard.press(' ');
    expect(await focused(page)).toBe('Sign out');
    await page.keyboard.press('Enter');

    // afterSignOutUrl="/" on the provider: home, signed out.
    await page.waitForURL(`${origin}/`);
    await expect
      .poll(() => buttons(page))
      .toEqual(['Continue with GitHub', 'Continue with e-mail']);
    expect(await page.getByRole('button', { name: /account: /i }).count()).toBe(0);
    const status = (token?: string) =>
      page.evaluate(
        (t) =>
          fetch('/api/me', t ? { headers: { authorization: `Bearer ${t}` } } : {}).then(
            (r) => r.status,
          ),
        token,
      );
    expect(await status(oldToken)).toBe(401);
    expect(await status()).toBe(401);
    expect(violations).toEqual([]);
    await context.close();
  });

  it('fits a phone: the sign-in buttons and the open user menu stay on screen', async () => {
    github.next({ sub: '4343', email: 'katherine.johnson@example.com', name: 'Katherine Johnson' });
    // GitHub's image host out of reach: the button shows initials instead of a broken image.
    const context = await withAvatars(
      await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true }),
      'unreachable',
    );
    const page = await context.newPage();
    await page.goto(`${origin}/`);
    await expect.poll(() => buttons(page)).toHaveLength(2);
    const right = await page
      .locator('[data-latchkey]')
      .evaluate((el) => el.getBoundingClientRect().right);
    expect(right).toBeLessThanOrEqual(PHONE.width);
    await shoot(page, 'signed-out-phone');
    await page
      .locator('[data-latchkey]')
      .getByRole('button', { name: 'Continue with GitHub' })
      .tap();
    // Back on the home page, where the sign-in started.
    await page.getByText('You are signed in: see').waitFor();
    expect(page.url()).toBe(`${origin}/`);
    const avatar = page.getByRole('button', {
      name: 'KJ, account: katherine.johnson@example.com',
    });
    await avatar.waitFor();
    expect(await avatar.locator('img').count()).toBe(0);
    await avatar.tap();
    const menu = await page.getByRole('menuitem', { name: 'Sign out' }).boundingBox();
    expect(menu && menu.x >= 0 && menu.x + menu.width <= PHONE.width).toBe(true);
    expect(await seriousViolations(page, [['phone, menu open', async () => {}]], AXE)).toEqual([]);
    await shoot(page, 'menu-phone');
    await context.close();
  });
});
