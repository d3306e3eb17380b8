/**
 * Passkeys on the hosted pages in a real Chromium, with the DevTools protocol's virtual
 * authenticator (a platform authenticator with resident keys and user verification):
 * sign up, add a passkey on /account, sign out, sign in with the button and with autofill.
 *
 * The server's PUBLIC_URL is `http://localhost:<port>`: the WebAuthn RP id is its host, and
 * browsers refuse an IP address as one. SQLite only, as hosted-browser.test.ts; the
 * ceremonies' rules and attacks run on both databases in passkeys.test.ts.
 */

import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CallerApp,
  HAVE_CHROMIUM,
  launchChromium,
  seriousViolations,
  startCallerApp,
} from './browser.js';
import { email, reservePort, startApp, type TestApp, type TestTenant } from './support.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const PASSWORD = 'correct horse battery staple';

declare const document: { documentElement: { scrollWidth: number } };

describe.skipIf(!HAVE_CHROMIUM)('passkeys on the hosted pages in Chromium', () => {
  let app: TestApp;
  let base: string;
  let caller: CallerApp;
  let browser: Browser;
  let t: TestTenant;

  const callback = () => `${caller.origin}/callback`;
  const hosted = (path: string, extra: Record<string, string> = {}) =>
    `${base}${path}?${new URLSearchParams({ pk: t.publishableKey, redirect_url: callback(), ...extra })}`;
  const h1 = (page: Page) => page.textContent('h1');
  const fragment = (page: Page) => new URLSearchParams(new URL(page.url()).hash.slice(1));

  /** A page in a new context with a virtual platform authenticator (ctap2, internal). */
  async function withAuthenticator<T>(
    use: (page: Page, context: BrowserContext) => Promise<T>,
    options: Parameters<Browser['newContext']>[0] = {},
  ): Promise<T> {
    const context = await browser.newContext(options);
    try {
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable', { enableUI: false });
      await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });
      return await use(page, context);
    } finally {
      await context.close();
    }
  }

  /**
   * A browser without passkey autofill: the virtual authenticator answers a page's
   * conditional request at once, before any click.
   */
  const withoutAutofill = (page: Page) =>
    page.addInitScript(() => {
      (
        globalThis as unknown as {
          PublicKeyCredential: { isConditionalMediationAvailable: () => Promise<boolean> };
        }
      ).PublicKeyCredential.isConditionalMediationAvailable = async () => false;
    });

  async function signUp(page: Page): Promise<string> {
    const address = email('passkey');
    await page.goto(hosted('/sign-up'));
    await page.fill('#email', address);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${callback()}#*`), page.click('button[type=submit]')]);
    return address;
  }

  async function addPasskey(page: Page) {
    await page.goto(hosted('/account'));
    expect(await h1(page)).toBe('Your account');
    await Promise.all([
      page.waitForURL(/\/account\?.*done=passkey-added/),
      page.click('button:has-text("Add a passkey")'),
    ]);
  }

  async function signOut(page: Page) {
    await page.goto(hosted('/sign-out'));
    await Promise.all([page.waitForURL(`${callback()}*`), page.click('button[type=submit]')]);
  }

  beforeAll(async () => {
    [caller, browser] = await Promise.all([startCallerApp(), launchChromium()]);
    const socket = reservePort();
    base = `http://localhost:${socket.address().port}`;
    app = await startApp('sqlite', { socket, env: { PUBLIC_URL: base } });
    t = await app.tenant({ allowedOrigins: [caller.origin] });
  });

  afterAll(async () => {
    await browser?.close();
    await app?.dispose();
    await caller?.close();
  });

  it('adds a passkey on /account, and signs in with the button, landing on the caller with amr mfa', async () => {
    await withAuthenticator(async (page) => {
      await signUp(page);
      await addPasskey(page);
      expect(await page.textContent('[role=status]')).toContain('Your passkey was added.');
      expect(await page.textContent('.factors .name')).toMatch(/^Chrome.* on Linux$/);
      expect(await page.textContent('.factors .hint')).toContain('last used never');
      await signOut(page);

      await withoutAutofill(page);
      // Every request from the sign-in page to the caller's page.
      const requests: string[] = [];
      page.on('request', (r) => requests.push(`${r.method()} ${new URL(r.url()).pathname}`));
      const problems: string[] = [];
      page.on('console', (m) => {
        // The browser's own favicon request to the caller's page (which has none) is no
        // problem of ours; everything else is, with where it came from.
        if (m.location().url.endsWith('/favicon.ico')) return;
        if (m.type() === 'error' || m.type() === 'warning')
          problems.push(`${m.text()} (${m.location().url})`);
      });
      const pageResponse = await page.goto(hosted('/sign-in'));
      const html = (await pageResponse?.body())?.length ?? 0;
      // The one script runs by nonce and may call this origin only; nothing inline.
      const csp = (await pageResponse?.headerValue('content-security-policy')) ?? '';
      expect(csp).toMatch(/script-src 'nonce-[^']+'; connect-src 'self';/);
      expect(csp).not.toContain('unsafe');
      expect(await page.isVisible('button:has-text("Sign in with a passkey")')).toBe(true);
      expect(await page.getAttribute('#email', 'autocomplete')).toBe('username webauthn');
      await Promise.all([
        page.waitForURL(`${callback()}#*`),
        page.click('button:has-text("Sign in with a passkey")'),
      ]);
      const claims = decodeJwt(fragment(page).get('access_token') as string);
      expect(claims.amr).toEqual(['hwk', 'user', 'mfa']);
      expect(problems).toEqual([]);
      const script = await (await app.request('/passkeys.js')).text();
      // A byte budget: the ceremony is all it does.
      expect(Buffer.byteLength(script)).toBeLessThan(5 * 1024);
      expect(html).toBeLessThan(8 * 1024);
      console.info(
        `passkey sign-in: ${requests.length} requests (${requests.join(', ')}); sign-in page ${html} bytes of HTML + ${Buffer.byteLength(script)} bytes of script`,
      );
      expect(requests).toEqual([
        'GET /sign-in',
        'GET /passkeys.js',
        'POST /sign-in/passkey/options',
        'POST /sign-in/passkey',
        'GET /callback',
      ]);

      await page.goto(hosted('/account'));
      expect(await page.textContent('.factors .hint')).not.toContain('last used never');
    });
  });

  it('offers the passkey in the e-mail field (conditional mediation) and signs in through it', async () => {
    await withAuthenticator(async (page) => {
      await signUp(page);
      await addPasskey(page);
      await signOut(page);
      // The virtual authenticator answers a conditional request with its one credential,
      // as a person picking it from the autofill list would.
      const requests: string[] = [];
      page.on('request', (r) => requests.push(`${r.method()} ${new URL(r.url()).pathname}`));
      await Promise.all([page.waitForURL(`${callback()}#*`), page.goto(hosted('/sign-in'))]);
      const claims = decodeJwt(fragment(page).get('access_token') as string);
      expect(claims.amr).toEqual(['hwk', 'user', 'mfa']);
      expect(requests).toEqual([
        'GET /sign-in',
        'GET /passkeys.js',
        'POST /sign-in/passkey/options',
        'POST /sign-in/passkey',
        'GET /callback',
      ]);
    });
  });

  it('says on the page why a passkey sign-in did not work, and the form still signs in', async () => {
    const elsewhere = await app.tenant({ allowedOrigins: [caller.origin] });
    await withAuthenticator(async (page) => {
      await withoutAutofill(page);
      // No passkey yet: the authenticator has nothing to offer.
      await page.goto(hosted('/sign-in'));
      await page.click('button:has-text("Sign in with a passkey")');
      const alert = page.locator('.passkey [role=alert]');
      await alert.waitFor();
      expect(await alert.textContent()).toBe('The passkey request was cancelled or timed out.');

      // A passkey of another tenant: the browser offers it (one RP id), the server refuses.
      await signUp(page);
      await addPasskey(page);
      const other = `${base}/sign-in?${new URLSearchParams({ pk: elsewhere.publishableKey, redirect_url: callback() })}`;
      await page.goto(other);
      await page.click('button:has-text("Sign in with a passkey")');
      await alert.waitFor();
      expect(await alert.textContent()).toContain(
        'This passkey is not registered for this application',
      );
      expect(await page.isEnabled('button:has-text("Sign in with a passkey")')).toBe(true);
      expect(page.url()).toBe(other);
    });
  });

  it('a passkey is the second step after a password: the verify page offers it, amr pwd, hwk, user, mfa', async () => {
    await withAuthenticator(async (page) => {
      const address = await signUp(page);
      await addPasskey(page);
      await signOut(page);
      await withoutAutofill(page);
      await page.goto(hosted('/sign-in'));
      await page.fill('#email', address);
      await page.fill('#password', PASSWORD);
      await Promise.all([
        page.waitForURL(/\/sign-in\/verify\?/),
        page.click('button[type=submit]'),
      ]);
      expect(await h1(page)).toBe('Two-step verification');
      // No app: no code field, the passkey button instead (and no token yet).
      expect(await page.isVisible('#code')).toBe(false);
      expect(page.url()).not.toContain('access_token');
      await Promise.all([
        page.waitForURL(`${callback()}#*`),
        page.click('button:has-text("Use your passkey")'),
      ]);
      const claims = decodeJwt(fragment(page).get('access_token') ?? '');
      expect(claims.email).toBe(address);
      expect(claims.amr).toEqual(['pwd', 'hwk', 'user', 'mfa']);
      for (const viewport of [
        { width: 1280, height: 800 },
        { width: 375, height: 740 },
      ]) {
        await signOut(page);
        await page.setViewportSize(viewport);
        await page.goto(hosted('/sign-in'));
        await page.fill('#email', address);
        await page.fill('#password', PASSWORD);
        await Promise.all([
          page.waitForURL(/\/sign-in\/verify\?/),
          page.click('button[type=submit]'),
        ]);
        await page.waitForSelector('button:has-text("Use your passkey")');
        await page.screenshot({
          path: join(ARTIFACTS, `verify-passkey${viewport.width < 500 ? '-mobile' : ''}.png`),
          fullPage: true,
        });
        await Promise.all([
          page.waitForURL(`${callback()}#*`),
          page.click('button:has-text("Use your passkey")'),
        ]);
      }
    });
  }, 60_000);

  it('passes axe and fits a phone: /sign-in with the passkey button, and /account', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const axe = readFileSync(
      join(dirname(createRequire(import.meta.url).resolve('axe-core')), 'axe.min.js'),
      'utf8',
    );
    for (const viewport of [
      { width: 1280, height: 720 },
      { width: 375, height: 667 },
    ]) {
      const suffix = viewport.width < 600 ? '-mobile' : '';
      await withAuthenticator(
        async (page) => {
          await withoutAutofill(page);
          await signUp(page);
          await addPasskey(page);
          await page.fill('.factors input[name=name]', 'My laptop');
          await Promise.all([
            page.waitForURL(/done=passkey-renamed/),
            page.click('.factors button:has-text("Rename")'),
          ]);
          expect(await page.textContent('.factors .name')).toBe('My laptop');
          await page.screenshot({ path: join(ARTIFACTS, `account${suffix}.png`), fullPage: true });
          expect(
            await page.evaluate(() => document.documentElement.scrollWidth),
          ).toBeLessThanOrEqual(viewport.width);
          const violations = await seriousViolations(
            page,
            [['account', () => page.goto(hosted('/account'))]],
            axe,
          );
          expect(violations).toEqual([]);
          // Signed in: /sign-in with prompt=login shows the form (and the passkey button).
          await page.goto(hosted('/sign-in', { prompt: 'login' }));
          await page.waitForSelector('button:has-text("Sign in with a passkey")');
          await page.screenshot({
            path: join(ARTIFACTS, `sign-in-passkey${suffix}.png`),
            fullPage: true,
          });
          expect(await seriousViolations(page, [['sign-in', async () => undefined]], axe)).toEqual(
            [],
          );
        },
        // axe runs as an inline script, which the page's CSP refuses: bypassed for it alone.
        { viewport, bypassCSP: true },
      );
    }
  }, 60_000);

  it('hides the passkey parts where the browser has no WebAuthn, and the page still signs in', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await page.goto(hosted('/sign-in'));
      expect(await page.isVisible('button:has-text("Sign in with a passkey")')).toBe(false);
      expect(await page.isVisible('button[type=submit]')).toBe(true);
    } finally {
      await context.close();
    }
  });
});
