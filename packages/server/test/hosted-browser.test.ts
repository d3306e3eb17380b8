/**
 * The hosted pages in a real Chromium: a real server sending real mail over SMTP, and a
 * caller app on another origin that the browser lands on with the fragment.
 *
 * SQLite only: running Chromium twice would double the suite's time, and the same
 * workflows run on both databases in hosted.test.ts, social.test.ts and atomic-workflows.test.ts.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page, Response as PageResponse } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localBus } from '../src/cache/invalidation.js';
import { defaults } from '../src/config/defaults.js';
import { createKey, listKeys, revokeKey } from '../src/modules/keys/index.js';
import { updateTenant } from '../src/modules/tenants/index.js';
import { type Database, openDatabase } from '../src/storage/index.js';
import {
  type CallerApp,
  HAVE_CHROMIUM,
  launchChromium,
  linkIn,
  MailCatcher,
  pkce,
  seriousViolations,
  startCallerApp,
} from './browser.js';
import {
  type Body,
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const PASSWORD = 'correct horse battery staple';
const WRONG = 'The e-mail address or the password is wrong.';
const LOGO = 'https://cdn.example.com/logo.png';
const BRAND_NAME = '<script>alert("x")</script> & Co';

/** The page's globals, typed just enough for the code that runs in Chromium (no DOM lib here). */
interface PageElement {
  id: string;
  tagName: string;
  textContent: string | null;
  outerHTML: string;
}
declare const document: {
  scripts: { length: number };
  documentElement: { scrollWidth: number };
  activeElement: PageElement | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): { length: number };
};
declare const location: { hash: string };
declare function getComputedStyle(element: unknown): { backgroundColor: string; color: string };

describe.skipIf(!HAVE_CHROMIUM)('hosted pages in Chromium', () => {
  let app: TestApp;
  let mail: MailCatcher;
  let caller: CallerApp;
  let browser: Browser;
  /** A second connection, as the CLI would be: its writes are not this process's own. */
  let other: Database;
  // Another process without Redis (as the CLI on SQLite): it tells no one; data_version does.
  const otherProcess = () => ({ db: other.db, bus: localBus({ cache: false }) });
  /** Requires e-mail verification. */
  let strict: TestTenant;
  /** Does not. */
  let open: TestTenant;
  let branded: TestTenant;
  let production: TestTenant;
  /** Everything that must never reach a log line. */
  const secrets: string[] = [PASSWORD];

  const callback = () => `${caller.origin}/callback`;
  const hosted = (path: string, t: TestTenant, extra: Record<string, string> = {}) =>
    `${app.url}${path}?${new URLSearchParams({ pk: t.publishableKey, redirect_url: callback(), ...extra })}`;

  /** Clicks and waits for the navigation it starts; the final response (after redirects). */
  async function submit(page: Page, selector = 'button[type=submit]') {
    const navigation = page.waitForNavigation();
    await page.click(selector);
    return navigation;
  }

  async function signIn(page: Page, url: string, address: string, password: string) {
    await page.goto(url);
    await page.fill('#email', address);
    await page.fill('#password', password);
    return submit(page);
  }

  const h1 = (page: Page) => page.textContent('h1');
  const fragment = (url: string) => new URLSearchParams(new URL(url).hash.slice(1));
  const onCallback = (page: Page) => page.url().startsWith(`${callback()}#`);

  /** A user created through the REST API with the secret key. */
  async function user(t: TestTenant): Promise<{ email: string; id: string }> {
    const address = email('browser');
    const res = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
      email: address,
      password: PASSWORD,
    });
    expect(res.status).toBe(201);
    return { email: address, id: (await json(res)).userId };
  }

  async function withContext<T>(
    options: Parameters<Browser['newContext']>[0],
    use: (context: BrowserContext, page: Page) => Promise<T>,
  ): Promise<T> {
    const context = await browser.newContext(options);
    try {
      return await use(context, await context.newPage());
    } finally {
      await context.close();
    }
  }

  beforeAll(async () => {
    [mail, caller, browser] = await Promise.all([
      new MailCatcher().start(),
      startCallerApp(),
      launchChromium(),
    ]);
    app = await startApp('sqlite', { env: { SMTP_URL: mail.url } });
    other = openDatabase(app.ctx.config.databaseUrl);
    const allowedOrigins = [caller.origin];
    strict = await app.tenant({ allowedOrigins, requireEmailVerification: true });
    open = await app.tenant({ allowedOrigins });
    branded = await app.tenant({ allowedOrigins });
    production = await app.tenant({
      environment: 'production',
      allowedOrigins: ['https://app.example.com'],
    });
    await updateTenant(otherProcess(), branded.tenant.id, {
      name: BRAND_NAME,
      logoUrl: LOGO,
      primaryColor: '#1a7f37',
    });
  });

  afterAll(async () => {
    await browser?.close();
    await other?.close();
    await app?.dispose();
    await Promise.all([mail?.stop(), caller?.close()]);
  });

  it('signs up, verifies the address from the mail, signs in and lands on the caller with a code', async () => {
    const address = email('signup');
    const { verifier, challenge } = pkce();
    const state = `state-${randomUUID()}`;
    secrets.push(verifier);
    await withContext({}, async (_context, page) => {
      const signUp = await page.goto(
        hosted('/sign-up', strict, {
          state,
          code_challenge: challenge,
          code_challenge_method: 'S256',
        }),
      );
      expect(signUp?.status()).toBe(200);
      expect(await h1(page)).toBe('Create your account');
      await page.fill('#email', address);
      await page.fill('#password', PASSWORD);
      const created = await submit(page);
      expect(created?.status()).toBe(201);
      expect(await h1(page)).toBe('Check your inbox');

      const received = await mail.waitFor(address);
      expect(received.subject).toContain('Verify your e-mail');
      const link = linkIn(received, app.url, 'verify-email');
      secrets.push(new URL(link).searchParams.get('token') as string);

      expect((await page.goto(link))?.status()).toBe(200);
      expect(await h1(page)).toBe('Verify your e-mail');
      await submit(page, 'button:has-text("Verify my e-mail address")');
      expect(await h1(page)).toBe('Your e-mail address is verified');
      await submit(page, 'a:has-text("Continue to sign in")');
      expect(await h1(page)).toBe('Sign in');
      expect(new URL(page.url()).origin).toBe(app.url);

      await page.fill('#email', address);
      await page.fill('#password', PASSWORD);
      const landed = await submit(page);
      expect(landed?.status()).toBe(200);
      expect(onCallback(page)).toBe(true);
      const url = new URL(page.url());
      expect(url.search).toBe('');
      expect(caller.requests.every((r) => !/token|code=/.test(r))).toBe(true);

      const hash = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1));
      const accessToken = hash.get('access_token') as string;
      const code = hash.get('code') as string;
      secrets.push(accessToken, code);
      expect(accessToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(hash.get('token_type')).toBe('Bearer');
      expect(Number(hash.get('expires_in'))).toBeGreaterThan(0);
      expect(hash.get('tenant_id')).toBe(strict.tenant.id);
      expect(hash.get('state')).toBe(state);
      expect(code).toMatch(/^[\w-]{43}$/);
      expect(hash.has('refresh_token')).toBe(false);

      const introspection = await postJson(app, '/api/auth/introspect', strict.secretKey, {
        token: accessToken,
      });
      expect(introspection.status).toBe(200);
      expect((await json(introspection)).active).toBe(true);

      // From the callback page itself, so the browser sends the real Origin (and preflights).
      const redeem = () =>
        page.evaluate(
          async ({ endpoint, pk, code, verifier }) => {
            const res = await fetch(endpoint, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-latchkey-publishable-key': pk },
              body: JSON.stringify({
                grant_type: 'authorization_code',
                code,
                code_verifier: verifier,
              }),
            });
            return { status: res.status, body: (await res.json()) as Body };
          },
          { endpoint: `${app.url}/v1/client/token`, pk: strict.publishableKey, code, verifier },
        );
      const first = await redeem();
      expect(first.status).toBe(200);
      expect(typeof first.body.refreshToken).toBe('string');
      expect(first.body.tokenType).toBe('Bearer');
      secrets.push(first.body.refreshToken, first.body.accessToken);
      const second = await redeem();
      expect(second.status).toBe(400);
      expect(second.body.code).toBe('invalid_grant');
    });
  });

  it('brings a returning browser straight back with a fresh token, and rotates the session cookie', async () => {
    const u = await user(open);
    const cookieOf = async (context: BrowserContext) =>
      (await context.cookies(app.url)).find((c) => c.name === `latchkey_session_${open.tenant.id}`);
    await withContext({}, async (context, page) => {
      // A value planted before sign-in (session fixation) must not survive it.
      await context.addCookies([
        { name: `latchkey_session_${open.tenant.id}`, value: 'planted-value', url: app.url },
      ]);
      await page.goto(hosted('/sign-in', open));
      expect(await h1(page)).toBe('Sign in');
      expect((await cookieOf(context))?.value).toBe('planted-value');

      await signIn(page, hosted('/sign-in', open), u.email, PASSWORD);
      expect(onCallback(page)).toBe(true);
      const firstToken = fragment(page.url()).get('access_token') as string;
      const cookie = await cookieOf(context);
      expect(cookie).toBeDefined();
      expect(cookie?.value).not.toBe('planted-value');
      expect(cookie?.httpOnly).toBe(true);
      expect(cookie?.sameSite).toBe('Lax');
      secrets.push(firstToken, cookie?.value as string);

      const again = await page.goto(hosted('/sign-in', open));
      expect(again?.status()).toBe(200);
      expect(onCallback(page)).toBe(true);
      const secondToken = fragment(page.url()).get('access_token') as string;
      secrets.push(secondToken, (await cookieOf(context))?.value as string);
      expect(secondToken).toBeTruthy();
      expect(secondToken).not.toBe(firstToken);
    });
    await withContext({}, async (context, page) => {
      expect((await page.goto(hosted('/sign-in', open)))?.status()).toBe(200);
      expect(await h1(page)).toBe('Sign in');
      expect(await cookieOf(context)).toBeUndefined();
    });
  });

  it('resets a forgotten password through the mailed link, once', async () => {
    const u = await user(open);
    const fresh = 'a brand new passphrase 42';
    secrets.push(fresh);
    // A browser signed in with the old password before the reset (closed with the browser
    // should an assertion fail).
    const earlier = await browser.newContext();
    const earlierPage = await earlier.newPage();
    await signIn(earlierPage, hosted('/sign-in', open), u.email, PASSWORD);
    expect(onCallback(earlierPage)).toBe(true);
    const earlierToken = fragment(earlierPage.url()).get('access_token') as string;
    secrets.push(earlierToken);
    await withContext({}, async (_context, page) => {
      await page.goto(hosted('/forgot-password', open));
      expect(await h1(page)).toBe('Reset your password');
      await page.fill('#email', u.email);
      expect((await submit(page))?.status()).toBe(200);
      expect(await h1(page)).toBe('Check your inbox');

      const link = linkIn(await mail.waitFor(u.email), app.url, 'reset-password');
      secrets.push(new URL(link).searchParams.get('token') as string);
      expect((await page.goto(link))?.status()).toBe(200);
      expect(await h1(page)).toBe('Choose a new password');
      await page.fill('#password', fresh);
      expect((await submit(page))?.status()).toBe(200);
      expect(await h1(page)).toBe('Your password is changed');

      await submit(page, 'a:has-text("Sign in")');
      expect(await h1(page)).toBe('Sign in');
      await page.fill('#email', u.email);
      await page.fill('#password', fresh);
      await submit(page);
      expect(onCallback(page)).toBe(true);

      const reused = await page.goto(link);
      expect(reused?.status()).toBe(400);
      expect(await h1(page)).toBe('This link does not work');
    });
    await withContext({}, async (_context, page) => {
      const old = await signIn(page, hosted('/sign-in', open), u.email, PASSWORD);
      expect(old?.status()).toBe(401);
      const oldMessage = await page.textContent('[role=alert]');
      const unknown = await signIn(page, hosted('/sign-in', open), email('nobody'), PASSWORD);
      expect(unknown?.status()).toBe(401);
      const unknownMessage = await page.textContent('[role=alert]');
      expect(oldMessage).toBe(WRONG);
      expect(unknownMessage).toBe(WRONG);
    });
    // Whoever knew the old password is signed out everywhere: API session and hosted cookie.
    const introspection = await postJson(app, '/api/auth/introspect', open.secretKey, {
      token: earlierToken,
    });
    expect(await json(introspection)).toEqual({ active: false });
    await earlierPage.goto(hosted('/sign-in', open));
    expect(onCallback(earlierPage)).toBe(false);
    expect(await h1(earlierPage)).toBe('Sign in');
    await earlier.close();
  });

  it('asks a new address for proof while many fail on the account; the mailed link lets it in', async () => {
    // An app of its own whose slowed attempts do not really wait (the default policy else).
    const quick = await startApp('sqlite', {
      env: { SMTP_URL: mail.url },
      signInPolicy: { ...defaults.signInFailures, wait: async () => {} },
    });
    const t = await quick.tenant({ allowedOrigins: [caller.origin] });
    const address = email('attacked');
    await postJson(quick, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD });
    const at = (path: string) =>
      `${quick.url}${path}?${new URLSearchParams({ pk: t.publishableKey, redirect_url: callback() })}`;
    const { challengeAfter, perAddress } = defaults.signInFailures.account;
    // The failures of many addresses, relayed by the customer's server.
    for (let n = 0; n < challengeAfter; n++) {
      const res = await quick.request('/v1/auth/sign-in', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${t.secretKey}`,
          'content-type': 'application/json',
          'latchkey-client-ip': `203.0.113.${1 + Math.floor(n / perAddress)}`,
        },
        body: JSON.stringify({ email: address, password: `guess ${n}` }),
      });
      expect(res.status).toBe(401);
    }
    try {
      mkdirSync(ARTIFACTS, { recursive: true });
      const axePath = join(
        dirname(createRequire(import.meta.url).resolve('axe-core')),
        'axe.min.js',
      );
      const axe = readFileSync(axePath, 'utf8');
      await withContext({}, async (_context, page) => {
        // The owner, from this browser's address (one the account never used).
        const asked = await signIn(page, at('/sign-in'), address, PASSWORD);
        expect(asked?.status()).toBe(403);
        expect(await h1(page)).toBe('Confirm it is you');
        await page.screenshot({ path: join(ARTIFACTS, 'confirm-asked.png'), fullPage: true });
        await page.setViewportSize({ width: 375, height: 740 });
        await page.screenshot({
          path: join(ARTIFACTS, 'confirm-asked-mobile.png'),
          fullPage: true,
        });
        await page.setViewportSize({ width: 1280, height: 800 });
        const link = linkIn(await mail.waitFor(address), quick.url, 'confirm-address');
        secrets.push(new URL(link).searchParams.get('token') as string);
        expect((await page.goto(link))?.status()).toBe(200);
        expect(await h1(page)).toBe('Confirm it is you');
        await page.screenshot({ path: join(ARTIFACTS, 'confirm-address.png'), fullPage: true });
        await page.setViewportSize({ width: 375, height: 740 });
        await page.screenshot({
          path: join(ARTIFACTS, 'confirm-address-mobile.png'),
          fullPage: true,
        });
        await page.setViewportSize({ width: 1280, height: 800 });
        expect((await submit(page, 'button:has-text("Yes, it was me")'))?.status()).toBe(200);
        expect(await h1(page)).toBe('Thank you');
        await page.setViewportSize({ width: 375, height: 740 });
        await page.screenshot({ path: join(ARTIFACTS, 'confirm-done-mobile.png'), fullPage: true });
        await page.setViewportSize({ width: 1280, height: 800 });
        await submit(page, 'a:has-text("Sign in")');
        await page.fill('#email', address);
        await page.fill('#password', PASSWORD);
        await submit(page);
        expect(onCallback(page)).toBe(true);
      });
      await withContext({ bypassCSP: true }, async (_context, page) => {
        const found = await seriousViolations(
          page,
          [['confirm it is you', () => signIn(page, at('/sign-in'), address, 'nope')]],
          axe,
        );
        expect(found).toEqual([]);
      });
    } finally {
      await quick.dispose();
    }
  });

  it('refuses bad sign-in links with a page, never a redirect', async () => {
    const doomed = await app.tenant({ allowedOrigins: [caller.origin] });
    const unknownPk = `pk_test_${randomBytes(40).toString('base64url').replace(/[-_]/g, 'x').slice(0, 43)}`;
    await withContext({}, async (_context, page) => {
      // Resolved (and cached) once while live, then revoked by another connection.
      expect((await page.goto(hosted('/sign-in', doomed)))?.status()).toBe(200);
      const key = (await listKeys(other.db, doomed.tenant.id)).find(
        (k) => k.kind === 'publishable',
      );
      await revokeKey(otherProcess(), doomed.tenant.id, key?.id as string);

      const base = { pk: open.publishableKey };
      const cases: [string, Record<string, string>, RegExp][] = [
        ['unknown pk', { pk: unknownPk, redirect_url: callback() }, /unknown or revoked/],
        ['revoked pk', { pk: doomed.publishableKey, redirect_url: callback() }, /revoked/],
        ['missing redirect_url', base, /redirect_url/],
        ['relative redirect_url', { ...base, redirect_url: '/callback' }, /absolute/],
        [
          'origin not allowed',
          { ...base, redirect_url: 'https://evil.example.com/callback' },
          /not an allowed origin/,
        ],
        ['javascript: URL', { ...base, redirect_url: 'javascript:alert(1)' }, /https/],
        ['data: URL', { ...base, redirect_url: 'data:text/html,<h1>hi</h1>' }, /https/],
        [
          'http on production',
          { pk: production.publishableKey, redirect_url: 'http://app.example.com/callback' },
          /https/,
        ],
      ];
      const failures: string[] = [];
      for (const [name, query, message] of cases) {
        const res = await page.goto(`${app.url}/sign-in?${new URLSearchParams(query)}`);
        const text = (await page.textContent('[role=alert]')) ?? '';
        const ok =
          res?.status() === 400 &&
          res.request().redirectedFrom() === null &&
          page.url().startsWith(`${app.url}/sign-in?`) &&
          (await h1(page)) === 'This sign-in link does not work' &&
          message.test(text);
        if (!ok)
          failures.push(`${name}: status ${res?.status()}, at ${page.url()}, says "${text}"`);
      }
      expect(failures).toEqual([]);
    });
  });

  it('shows the branding, escapes the tenant name and fits a phone', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const serverRequests: string[] = [];
    await withContext({}, async (_context, page) => {
      page.on('request', (r) => {
        if (r.url().startsWith(app.url)) serverRequests.push(r.url());
      });
      expect((await page.goto(hosted('/sign-in', branded)))?.status()).toBe(200);
      expect(await page.title()).toContain(BRAND_NAME);
      expect(await page.evaluate(() => document.querySelectorAll('script').length)).toBe(0);
      expect(await page.getAttribute('img.logo', 'src')).toBe(LOGO);
      // The logo stands for the name, its alt text: shown in its place when the logo fails
      // (as here, with no network), in one line, and the name not twice.
      expect(await page.getAttribute('img.logo', 'alt')).toBe(BRAND_NAME);
      expect(await page.getByRole('img', { name: BRAND_NAME }).count()).toBe(1);
      expect(await page.locator('.tenant').count()).toBe(0);
      const logoBox = await page.locator('img.logo').boundingBox();
      expect(logoBox?.height).toBeLessThanOrEqual(48);
      const button = await page.$eval('button[type=submit]', (b) => {
        const style = getComputedStyle(b);
        return { background: style.backgroundColor, color: style.color };
      });
      expect(button).toEqual({ background: 'rgb(26, 127, 55)', color: 'rgb(255, 255, 255)' });
      // The logo is fetched from its own origin, never through the auth server.
      expect(serverRequests).toEqual([hosted('/sign-in', branded)]);
      await page.screenshot({ path: join(ARTIFACTS, 'sign-in.png'), fullPage: true });
    });
    await withContext({ viewport: { width: 375, height: 667 } }, async (_context, page) => {
      await page.goto(hosted('/sign-in', branded));
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        375,
      );
      const form = await page.$eval('form', (f) => f.getBoundingClientRect().right);
      expect(form).toBeLessThanOrEqual(375);
      await page.screenshot({ path: join(ARTIFACTS, 'sign-in-mobile.png'), fullPage: true });
    });
    await updateTenant(otherProcess(), branded.tenant.id, { primaryColor: '#ffd33d' });
    await withContext({}, async (_context, page) => {
      await page.goto(hosted('/sign-in', branded));
      const color = await page.$eval('button[type=submit]', (b) => [
        getComputedStyle(b).backgroundColor,
        getComputedStyle(b).color,
      ]);
      expect(color).toEqual(['rgb(255, 211, 61)', 'rgb(0, 0, 0)']);
    });
  });

  it('sends strict security headers, loads no script and stays under 30 KB', async () => {
    await withContext({}, async (_context, page) => {
      const messages: string[] = [];
      page.on('console', (m) => messages.push(`${m.type()}: ${m.text()}`));
      page.on('pageerror', (e) => messages.push(`pageerror: ${e.message}`));
      const sizes: Promise<number>[] = [];
      page.on('requestfinished', (r) => {
        if (new URL(r.url()).origin === new URL(LOGO).origin) return;
        sizes.push(r.sizes().then((s) => s.responseHeadersSize + s.responseBodySize));
      });
      const res = (await page.goto(hosted('/sign-in', branded))) as PageResponse;
      await page.waitForLoadState('load');
      const headers = res.headers();
      const csp = Object.fromEntries(
        (headers['content-security-policy'] ?? '').split(';').map((d) => {
          const [name, ...values] = d.trim().split(/\s+/);
          return [name, values];
        }),
      ) as Record<string, string[]>;
      expect(csp['default-src']).toEqual(["'none'"]);
      expect(csp['frame-ancestors']).toEqual(["'none'"]);
      expect(csp['form-action']).toContain(caller.origin);
      expect(csp['img-src']).toEqual([new URL(LOGO).origin]);
      const html = await res.text();
      const nonce = /<style nonce="([^"]+)"/.exec(html)?.[1];
      expect(nonce).toBeTruthy();
      expect(csp['style-src']).toEqual([`'nonce-${nonce}'`]);
      expect(await page.$eval('style', (s) => (s as unknown as { nonce: string }).nonce)).toBe(
        nonce,
      );
      expect(headers['referrer-policy']).toBe('no-referrer');
      expect(headers['x-content-type-options']).toBe('nosniff');
      expect(headers['cache-control']).toContain('no-store');

      expect(await page.evaluate(() => document.scripts.length)).toBe(0);
      // The style really applied (a CSP-blocked sheet would leave the button grey).
      expect(
        await page.$eval('button[type=submit]', (b) => getComputedStyle(b).backgroundColor),
      ).not.toBe('rgb(239, 239, 239)');
      const total = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
      expect(total).toBeGreaterThan(0);
      expect(total).toBeLessThan(30 * 1024);
      expect(messages.filter((line) => /Content.Security.Policy|Refused to/i.test(line))).toEqual(
        [],
      );
    });
  });

  it('signs in without JavaScript', async () => {
    const u = await user(open);
    await withContext({ javaScriptEnabled: false }, async (_context, page) => {
      await signIn(page, hosted('/sign-in', open, { state: 'no-js' }), u.email, PASSWORD);
      expect(onCallback(page)).toBe(true);
      const hash = fragment(page.url());
      secrets.push(hash.get('access_token') as string);
      expect(hash.get('access_token')).toBeTruthy();
      expect(hash.get('state')).toBe('no-js');
    });
  });

  it('works with the keyboard alone', async () => {
    const u = await user(open);
    await withContext({}, async (_context, page) => {
      await page.goto(hosted('/sign-in', open));
      const focused = () =>
        page.evaluate(() => {
          const el = document.activeElement;
          return el?.id || `${el?.tagName.toLowerCase()}:${el?.textContent?.trim()}`;
        });
      // autofocus puts the caret in the e-mail field (once the page has rendered).
      const caretInEmail = () =>
        page.waitForFunction(() => document.activeElement?.id === 'email', undefined, {
          timeout: 5000,
        });
      await caretInEmail();
      expect(await focused()).toBe('email');
      await page.keyboard.press('Tab');
      expect(await focused()).toBe('password');
      await page.keyboard.press('Tab');
      expect(await focused()).toBe('button:Sign in');

      await page.goto(hosted('/sign-in', open));
      await caretInEmail();
      await page.keyboard.type(u.email);
      await page.keyboard.press('Tab');
      await page.keyboard.type(PASSWORD);
      const navigation = page.waitForNavigation();
      await page.keyboard.press('Enter');
      await navigation;
      expect(onCallback(page), `landed on ${page.url()}`).toBe(true);
      secrets.push(fragment(page.url()).get('access_token') as string);
    });
  });

  it('shows a wrong password as an accessible error', async () => {
    const u = await user(open);
    await withContext({}, async (_context, page) => {
      const res = await signIn(page, hosted('/sign-in', open), u.email, 'not the password');
      expect(res?.status()).toBe(401);
      expect(page.url().startsWith(`${app.url}/sign-in?`)).toBe(true);
      expect(await page.textContent('[role=alert]')).toBe(WRONG);
      expect(await page.getAttribute('#password', 'aria-invalid')).toBe('true');
      expect(await page.inputValue('#email')).toBe(u.email);
      expect(await page.inputValue('#password')).toBe('');
      const unlabelled = await page.$$eval('input:not([type=hidden])', (inputs) =>
        inputs
          .filter((i) => !i.id || !document.querySelector(`label[for="${i.id}"]`))
          .map((i) => i.outerHTML),
      );
      expect(unlabelled).toEqual([]);
      expect(await page.$$eval('input:not([type=hidden])', (i) => i.length)).toBe(2);
    });
  });

  it('refuses a sign-in POST without the CSRF token and signs nobody in', async () => {
    const u = await user(open);
    await withContext({}, async (context, page) => {
      await page.goto(hosted('/sign-in', open));
      const cookies = await context.cookies(app.url);
      expect(cookies.some((c) => c.name === 'latchkey_csrf' && c.httpOnly)).toBe(true);
      const forms: Record<string, string>[] = [
        { email: u.email, password: PASSWORD },
        { email: u.email, password: PASSWORD, _csrf: 'forged' },
      ];
      for (const form of forms) {
        const res = await context.request.post(hosted('/sign-in', open), { form, maxRedirects: 0 });
        expect(res.status()).toBe(403);
        expect(res.headers().location).toBeUndefined();
        expect(await res.text()).toContain('This form has expired');
      }
      expect(
        (await context.cookies(app.url)).some((c) => c.name.startsWith('latchkey_session')),
      ).toBe(false);
    });
    const db = app.ctx.database.db;
    const sessions = await db
      .selectFrom('sessions')
      .where('user_id', '=', u.id)
      .selectAll()
      .execute();
    const hostedSessions = await db
      .selectFrom('hosted_sessions')
      .where('user_id', '=', u.id)
      .selectAll()
      .execute();
    expect(sessions).toEqual([]);
    expect(hostedSessions).toEqual([]);
  });

  it('a link from a page whose origin is not allowed: the tenant, how to allow it, the way back', async () => {
    // A development tenant that allows another origin than the caller's.
    const elsewhere = await app.tenant({ allowedOrigins: ['https://app.example.com'] });
    const link = hosted('/sign-in', elsewhere);
    mkdirSync(ARTIFACTS, { recursive: true });
    await withContext({}, async (_context, page) => {
      // The caller's own page, with the link a newcomer wrote: the browser sends its origin
      // as the Referer.
      await page.route(`${caller.origin}/start`, (route) =>
        route.fulfill({
          contentType: 'text/html',
          body: `<!doctype html><html lang="en"><title>App</title><a href="${link}">Sign in</a></html>`,
        }),
      );
      await page.goto(`${caller.origin}/start`);
      const refused = await submit(page, 'a');
      expect(refused?.status()).toBe(400);
      expect(await h1(page)).toBe('This sign-in link does not work');
      expect(await page.textContent('.tenant')).toBe(elsewhere.tenant.name);
      expect(await page.textContent('[role=alert]')).toContain(
        `${caller.origin} is not an allowed origin of ${elsewhere.tenant.name}`,
      );
      expect(await page.textContent('.fix')).toContain(
        `latchkey tenant update ${elsewhere.tenant.id} --add-origin ${caller.origin}`,
      );
      await page.screenshot({ path: join(ARTIFACTS, 'refused-origin.png'), fullPage: true });
      await page.setViewportSize({ width: 375, height: 740 });
      await page.screenshot({ path: join(ARTIFACTS, 'refused-origin-mobile.png'), fullPage: true });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        375,
      );
      await page.setViewportSize({ width: 1280, height: 800 });
      // The way back leads to the site the user came from.
      await submit(page, `a:has-text("Go back to ${new URL(caller.origin).host}")`);
      expect(page.url()).toBe(`${caller.origin}/`);
      // The command works as shown (run here as the CLI would), and the link then works.
      await updateTenant(otherProcess(), elsewhere.tenant.id, { addOrigins: [caller.origin] });
      await expect.poll(async () => (await page.goto(link))?.status()).toBe(200);
      expect(await h1(page)).toBe('Sign in');
    });
    // A production tenant shows neither the command nor the admin area.
    await withContext({}, async (_context, page) => {
      expect((await page.goto(hosted('/sign-in', production)))?.status()).toBe(400);
      expect(await page.$('.fix')).toBeNull();
      expect(await page.content()).not.toContain('latchkey tenant');
    });
  });

  it('a secret key used from a web page: the page reads that it is exposed, and nothing is done', async () => {
    const leaked = await createKey(app.ctx.database.db, open.tenant.id, { kind: 'secret' });
    const address = email('from-page');
    await withContext({}, async (_context, page) => {
      // A page the caller's server really serves (a fulfilled one would have no address,
      // and Chromium's local network access rules would refuse its fetch to loopback).
      await page.goto(callback());
      // What a newcomer writes: the REST API's sign-up, called from the page with sk_.
      const answer = await page.evaluate(
        async ([url, key, mailbox]) => {
          const res = await fetch(`${url}/v1/auth/sign-up`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ email: mailbox, password: 'correct horse battery staple' }),
          });
          return { status: res.status, body: await res.json() };
        },
        [app.url, leaked.plaintext, address] as const,
      );
      const body = answer.body as { code: string; detail: string };
      expect(answer.status).toBe(403);
      expect(body.code).toBe('forbidden');
      expect(body.detail).toContain('must never reach a browser. Treat it as exposed');
      expect(body.detail).toContain(
        `latchkey keys revoke --tenant ${open.tenant.id} ${leaked.key.id}`,
      );
    });
    // No user was made.
    const found = await app.request(`/v1/users?email=${encodeURIComponent(address)}`, {
      headers: { authorization: `Bearer ${open.secretKey}` },
    });
    expect((await json(found)).data).toEqual([]);
  });

  it('has no serious or critical accessibility violations (axe-core)', async () => {
    const axePath = join(dirname(createRequire(import.meta.url).resolve('axe-core')), 'axe.min.js');
    const axe = readFileSync(axePath, 'utf8');
    const u = await user(open);
    await withContext({ bypassCSP: true }, async (_context, page) => {
      const pages: [string, () => Promise<unknown>][] = [
        ['sign-in', () => page.goto(hosted('/sign-in', branded))],
        ['sign-up', () => page.goto(hosted('/sign-up', open))],
        ['forgot-password', () => page.goto(hosted('/forgot-password', open))],
        ['sign-in error', () => signIn(page, hosted('/sign-in', open), u.email, 'wrong password')],
        ['refusal', () => page.goto(`${app.url}/sign-in?pk=${open.publishableKey}`)],
        [
          'refused origin',
          () =>
            page.goto(
              `${app.url}/sign-in?${new URLSearchParams({ pk: open.publishableKey, redirect_url: 'https://elsewhere.example.com/cb' })}`,
              { referer: `${caller.origin}/` },
            ),
        ],
      ];
      const found = await seriousViolations(page, pages, axe);
      if (found.length) console.error(found.join('\n'));
      expect(found).toEqual([]);
    });
  });

  it('logs no token, password or link token', () => {
    const logs = app.logs.text();
    expect(logs.length).toBeGreaterThan(0);
    const leaked = secrets.filter((s) => s && logs.includes(s));
    expect(leaked).toEqual([]);
    expect(logs).not.toMatch(/token=[A-Za-z0-9_-]{20}/);
    expect(logs).not.toContain('access_token=');
  });
});
