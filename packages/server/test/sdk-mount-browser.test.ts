/**
 * @latchkey/js's buttons in a real Chromium: under a strict CSP on another origin, isolated
 * from the page's CSS both ways, markup in a tenant name shown as text, keyboard order,
 * axe-core, screenshots (test-artifacts/), and the script-tag example end to end.
 */
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setProvider } from '../src/modules/social/index.js';
import { updateTenant } from '../src/modules/tenants/index.js';
import { HAVE_CHROMIUM, launchChromium } from './browser.js';
import {
  buttons,
  cspViolations,
  mountButtons,
  type PageGlobals,
  type Site,
  startSite,
  withContext,
} from './sdk-page.js';
import { email, postJson, startApp, type TestApp, type TestTenant } from './support.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const PASSWORD = 'correct horse battery staple';
const COLOUR = '#1a7f37';
declare const window: PageGlobals;

describe.skipIf(!HAVE_CHROMIUM)('@latchkey/js buttons in Chromium', () => {
  let app: TestApp;
  let site: Site;
  let browser: Browser;
  let t: TestTenant;

  beforeAll(async () => {
    browser = await launchChromium();
    app = await startApp('sqlite');
    site = await startSite(app.url);
    t = await app.tenant({ allowedOrigins: [site.origin] });
    await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, t.tenant.id, {
      primaryColor: COLOUR,
    });
    // Shown from the tenant's settings; no provider is reached in this suite.
    await setProvider(app.ctx.database.db, app.ctx.box, t.tenant.id, 'github', {
      clientId: 'client-github',
      clientSecret: 'secret',
      enabled: true,
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.dispose();
    await site?.close();
  });

  it("loads under the CSP and mounts the tenant's providers, isolated from the page's CSS", async () => {
    await withContext(browser, async (context) => {
      const page = await context.newPage();
      await mountButtons(page, site, t.publishableKey);
      expect(await buttons(page)).toEqual(['Continue with GitHub', 'Continue with e-mail']);
      expect(await page.getByRole('heading', { name: `Sign in to ${t.tenant.name}` }).count()).toBe(
        1,
      );
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
    await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, marked.tenant.id, { name });
    await withContext(browser, async (context) => {
      const page = await context.newPage();
      await mountButtons(page, site, marked.publishableKey);
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

  it('the mounted buttons have no axe-core violation; screenshots at desktop and phone width', async () => {
    const showcase = await app.tenant({ allowedOrigins: [site.origin] });
    await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, showcase.tenant.id, {
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
    const axePath = join(dirname(createRequire(import.meta.url).resolve('axe-core')), 'axe.min.js');
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
    await withContext(
      browser,
      async (context) => {
        const page = await context.newPage();
        await mountButtons(page, site, showcase.publishableKey);
        expect(await buttons(page)).toEqual(all);
        await page.locator('[data-latchkey]').screenshot({
          path: join(ARTIFACTS, 'sdk-buttons-phone.png'),
        });
      },
      phone,
    );
    await withContext(browser, async (context) => {
      const page = await context.newPage();
      await page.setViewportSize({ width: 1280, height: 800 });
      await mountButtons(page, site, showcase.publishableKey);
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
    const server = spawn(process.execPath, [join(ROOT, 'examples/script-tag/server.mjs')], {
      env: { ...process.env, PORT: '0', LATCHKEY_URL: app.url },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      // Its first line names the port it got.
      let said = '';
      const origin = await new Promise<string>((ready) =>
        server.stdout?.on('data', (chunk) => {
          said += chunk;
          const url = /on (http:\/\/localhost:\d+)/.exec(said)?.[1];
          if (url) ready(url);
        }),
      );
      const example = await app.tenant({ allowedOrigins: [origin] });
      const address = email('example');
      await postJson(app, '/v1/auth/sign-up', example.secretKey, {
        email: address,
        password: PASSWORD,
      });
      await withContext(browser, async (context) => {
        const page = await context.newPage();
        await page.goto(`${origin}/?pk=${example.publishableKey}`);
        await Promise.all([
          page.waitForURL((url) => url.pathname === '/sign-in'),
          page.getByRole('button', { name: 'Continue with e-mail' }).click(),
        ]);
        await page.fill('#email', address);
        await page.fill('#password', PASSWORD);
        await page.click('button[type=submit]');
        // Back on the page where the sign-in started (callback.js: session.returnTo).
        await page.waitForURL(`${origin}/?pk=${example.publishableKey}`);
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
});
