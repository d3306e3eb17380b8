/**
 * The hosted second factor in a real Chromium (docs/design.md §13): sign up, set up an
 * authenticator app on /account (QR code under the pages' real CSP, codes downloaded), sign
 * out, sign in with password and code, and land back signed in with amr pwd, otp, mfa; the
 * `required` policy's setup; axe-core and screenshots at desktop and phone widths of
 * /sign-in/verify, /sign-in/setup, the recovery codes and /account. Codes come from otplib.
 * SQLite only, as hosted-browser.test.ts; the rules run on both databases in
 * mfa-hosted.test.ts.
 */

import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import { generateSync } from 'otplib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../src/modules/tenants/index.js';
import {
  type CallerApp,
  HAVE_CHROMIUM,
  launchChromium,
  seriousViolations,
  startCallerApp,
} from './browser.js';
import { email, startApp, type TestApp, type TestTenant } from './support.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const PASSWORD = 'correct horse battery staple';

const totp = (secret: string, steps = 0) =>
  generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

declare const document: { documentElement: { scrollWidth: number } };

describe.skipIf(!HAVE_CHROMIUM)('hosted second factor in Chromium', () => {
  let app: TestApp;
  let caller: CallerApp;
  let browser: Browser;
  let t: TestTenant;
  let strict: TestTenant;
  let axe: string;

  const callback = () => `${caller.origin}/callback`;
  const hosted = (tenant: TestTenant, path: string, extra: Record<string, string> = {}) =>
    `${app.url}${path}?${new URLSearchParams({ pk: tenant.publishableKey, redirect_url: callback(), ...extra })}`;
  const h1 = (page: Page) => page.textContent('h1');
  const fragment = (page: Page) => new URLSearchParams(new URL(page.url()).hash.slice(1));

  beforeAll(async () => {
    [caller, browser] = await Promise.all([startCallerApp(), launchChromium()]);
    app = await startApp('sqlite');
    t = await app.tenant({ allowedOrigins: [caller.origin] });
    strict = await app.tenant({ allowedOrigins: [caller.origin] });
    await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, strict.tenant.id, {
      mfaPolicy: 'required',
    });
    axe = readFileSync(
      join(dirname(createRequire(import.meta.url).resolve('axe-core')), 'axe.min.js'),
      'utf8',
    );
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await app?.dispose();
    await caller?.close();
  });

  async function withPage<T>(
    use: (page: Page, context: BrowserContext) => Promise<T>,
    options: Parameters<Browser['newContext']>[0] = {},
  ): Promise<T> {
    const context = await browser.newContext(options);
    try {
      return await use(await context.newPage(), context);
    } finally {
      await context.close();
    }
  }

  async function signUp(page: Page, tenant: TestTenant, landing: string | RegExp) {
    const address = email('mfa');
    await page.goto(hosted(tenant, '/sign-up'));
    await page.fill('#email', address);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(landing), page.click('button[type=submit]')]);
    return address;
  }

  /** The key of the QR code's page, as typed into an app. */
  const secretOf = async (page: Page) =>
    ((await page.textContent('.secret code')) as string).replaceAll(' ', '');

  const confirmCode = async (page: Page, code: string) => {
    await page.fill('#code', code);
    await page.click('button[type=submit]');
  };

  it('sign up, set up an app on /account, sign out, sign in with password and code: amr pwd, otp, mfa', async () => {
    await withPage(async (page) => {
      const refused: string[] = [];
      page.on('console', (m) => {
        if (/Content.Security.Policy/i.test(m.text())) refused.push(m.text());
      });
      const address = await signUp(page, t, `${callback()}#*`);
      expect(decodeJwt(fragment(page).get('access_token') as string).amr).toEqual(['pwd']);

      await page.goto(hosted(t, '/account'));
      await page.click('button:has-text("Set up an authenticator app")');
      expect(await h1(page)).toBe('Set up an authenticator app');
      // The QR code draws under the page's own CSP (no inline style, no image source).
      const box = await page.locator('.qr svg').boundingBox();
      expect(box?.width).toBeGreaterThan(150);
      const secret = await secretOf(page);
      await confirmCode(page, totp(secret));
      await page.waitForSelector('h1:has-text("Your recovery codes")');
      const codes = await page.locator('.codes code').allTextContents();
      expect(codes).toHaveLength(10);
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.click('a:has-text("Download the codes")'),
      ]);
      expect(download.suggestedFilename()).toBe('recovery-codes.txt');
      const file = readFileSync((await download.path()) as string, 'utf8');
      for (const code of codes) expect(file).toContain(code);
      await page.click('a:has-text("Back to your account")');
      expect(await page.textContent('#codes-heading + p + p')).toBe('10 of 10 codes left.');

      await page.goto(hosted(t, '/sign-out'));
      await Promise.all([page.waitForURL(`${callback()}*`), page.click('button[type=submit]')]);

      await page.goto(hosted(t, '/sign-in'));
      await page.fill('#email', address);
      await page.fill('#password', PASSWORD);
      await Promise.all([
        page.waitForURL(/\/sign-in\/verify\?/),
        page.click('button[type=submit]'),
      ]);
      expect(await h1(page)).toBe('Two-step verification');
      expect(await page.getAttribute('#code', 'autocomplete')).toBe('one-time-code');
      expect(await page.getAttribute('#code', 'inputmode')).toBe('numeric');
      // A wrong code: the page again, saying so, focused on the field.
      await confirmCode(page, totp(secret) === '000000' ? '111111' : '000000');
      expect(await page.textContent('[role=alert]')).toContain('That code is wrong');
      expect(
        await page.evaluate(
          () =>
            (globalThis as unknown as { document: { activeElement: { id: string } } }).document
              .activeElement.id,
        ),
      ).toBe('code');
      await Promise.all([page.waitForURL(`${callback()}#*`), confirmCode(page, totp(secret, 1))]);
      const claims = decodeJwt(fragment(page).get('access_token') as string);
      expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
      expect(claims.email).toBe(address);
      expect(refused).toEqual([]);
    });
  }, 60_000);

  it('required: a new user sets an app up before any token, keeps the codes, and goes on', async () => {
    await withPage(async (page) => {
      await signUp(page, strict, /\/sign-in\/setup\?/);
      expect(await h1(page)).toBe('Set up two-step verification');
      expect(page.url()).not.toContain('access_token');
      await confirmCode(page, totp(await secretOf(page)));
      await page.waitForSelector('h1:has-text("Your recovery codes")');
      await Promise.all([
        page.waitForURL(`${callback()}#*`),
        page.click('button:has-text("Continue")'),
      ]);
      expect(decodeJwt(fragment(page).get('access_token') as string).amr).toEqual([
        'pwd',
        'otp',
        'mfa',
      ]);
    });
  }, 60_000);

  it('passes axe and fits a phone: /sign-in/verify, /sign-in/setup, recovery codes, /account', async () => {
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 375, height: 667 },
    ]) {
      const suffix = viewport.width < 600 ? '-mobile' : '';
      const shot = async (page: Page, name: string) => {
        await page.screenshot({ path: join(ARTIFACTS, `${name}${suffix}.png`), fullPage: true });
        expect(
          await page.evaluate(() => document.documentElement.scrollWidth),
          name,
        ).toBeLessThanOrEqual(viewport.width);
        expect(await seriousViolations(page, [[name, async () => undefined]], axe)).toEqual([]);
      };
      await withPage(
        async (page) => {
          // Required: setup, its recovery codes.
          const address = await signUp(page, strict, /\/sign-in\/setup\?/);
          await shot(page, 'mfa-setup');
          const secret = await secretOf(page);
          await confirmCode(page, totp(secret));
          await page.waitForSelector('h1:has-text("Your recovery codes")');
          await shot(page, 'mfa-recovery-codes');
          // /account with an app and codes.
          await page.goto(hosted(strict, '/account'));
          await shot(page, 'mfa-account');
          await page.click('button:has-text("Set up another app")');
          await page.waitForSelector('h1:has-text("Set up an authenticator app")');
          await shot(page, 'mfa-account-app');
          // The second step, with a code and with a recovery code.
          await page.goto(hosted(strict, '/sign-in', { prompt: 'login' }));
          await page.fill('#email', address);
          await page.fill('#password', PASSWORD);
          await Promise.all([
            page.waitForURL(/\/sign-in\/verify\?/),
            page.click('button[type=submit]'),
          ]);
          await shot(page, 'mfa-verify');
          await page.fill('#code', '000000' === totp(secret) ? '111111' : '000000');
          await page.click('button[type=submit]');
          await page.waitForSelector('[role=alert]');
          await shot(page, 'mfa-verify-wrong');
          await page.click('a:has-text("Use a recovery code")');
          await shot(page, 'mfa-verify-recovery');
        },
        // axe runs as an inline script, which the page's CSP refuses: bypassed for it alone.
        { viewport, bypassCSP: true },
      );
    }
  }, 120_000);
});
