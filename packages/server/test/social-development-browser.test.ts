/**
 * Social sign-in in development mode (docs/design.md §20) in a real Chromium: a newcomer on
 * a development tenant, without credentials or internet, clicks "Continue with Google" (the
 * script tag's button on their app, or the hosted page's), sees Latchkey's development page,
 * types what Google would return, and ends signed in in the app.
 *
 * SQLite only, as the other browser suites: social-development.test.ts runs the same
 * workflows over HTTP on both databases.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_IDS, setProvider } from '../src/modules/social/index.js';
import { HAVE_CHROMIUM, launchChromium, seriousViolations } from './browser.js';
import {
  cspViolations,
  mountButtons,
  pageClient,
  type Site,
  startSite,
  withContext,
} from './sdk-page.js';
import { email, json, postJson, startApp, type TestApp, type TestTenant } from './support.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const PHONE = { width: 390, height: 844 };

describe.skipIf(!HAVE_CHROMIUM)('social sign-in in development mode, in Chromium', () => {
  let app: TestApp;
  let site: Site;
  let browser: Browser;
  /** Every provider in development mode: nothing configured, no provider reachable. */
  let t: TestTenant;
  let client: ReturnType<typeof pageClient>;

  const callback = () => `${site.origin}/callback`;
  const signInUrl = (state = 'st') =>
    `${app.url}/sign-in?${new URLSearchParams({ pk: t.publishableKey, redirect_url: callback(), state })}`;
  const fragment = (page: Page) => new URLSearchParams(new URL(page.url()).hash.slice(1));
  const introspect = async (token: string | null) =>
    json(await postJson(app, '/api/auth/introspect', t.secretKey, { token }));
  const identities = (userId: string) =>
    app.ctx.database.db
      .selectFrom('identities')
      .selectAll()
      .where('user_id', '=', userId)
      .execute();

  beforeAll(async () => {
    [app, browser] = await Promise.all([startApp('sqlite'), launchChromium()]);
    site = await startSite(app.url);
    t = await app.tenant({ allowedOrigins: [site.origin] });
    client = pageClient(t.publishableKey);
    for (const id of PROVIDER_IDS)
      await setProvider(app.ctx.database.db, app.ctx.box, t.tenant.id, id, {
        mode: 'development',
      });
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.dispose();
    await site?.close();
  });

  /** On the development page: checks its banner, types the answer, and submits it. */
  async function answerAsGoogle(
    page: Page,
    typed: { email: string; name?: string; verified?: boolean },
    screenshot?: string,
  ) {
    await page.waitForURL((url) => url.pathname === '/oauth/google/development');
    expect(await page.textContent('h1')).toBe('Continue with Google');
    const banner = page.getByRole('note');
    expect(await banner.textContent()).toBe(
      'Development mode: no request goes to Google; type what Google would return.',
    );
    expect(await banner.isVisible()).toBe(true);
    await page.getByLabel('E-mail address Google returns').fill(typed.email);
    if (typed.name) await page.getByLabel('Name').fill(typed.name);
    if (typed.verified === false)
      await page.getByLabel('Google says the address is verified').uncheck();
    if (screenshot) {
      await page.screenshot({ path: join(ARTIFACTS, `${screenshot}.png`), fullPage: true });
      const size = page.viewportSize();
      await page.setViewportSize(PHONE);
      await page.screenshot({ path: join(ARTIFACTS, `${screenshot}-phone.png`), fullPage: true });
      if (size) await page.setViewportSize(size);
    }
    await page.getByRole('button', { name: 'Continue as this Google user' }).click();
  }

  it("the app's own Google button (script tag) leads to the development page and ends signed in in the app", async () => {
    const address = email('first');
    await withContext(browser, async (context) => {
      const page = await context.newPage();
      await mountButtons(page, site, t.publishableKey);
      // Each button says it is in development mode.
      const google = page.getByRole('button', { name: /^Continue with Google/ });
      expect(await google.textContent()).toBe('Continue with Googledev');
      await google.click();
      await answerAsGoogle(page, { email: address, name: 'Ada Lovelace' }, 'social-dev-page');
      await page.waitForURL((url) => url.href.startsWith(`${callback()}#`));
      const session = await client.handleCallback(page);
      expect(session.email).toBe(address);
      expect(await client.signedIn(page)).toBe(true);
      const claims = await introspect(session.token as string);
      expect(claims).toMatchObject({ active: true, email: address });
      const user = await app.ctx.database.db
        .selectFrom('users')
        .select('name')
        .where('id', '=', claims.sub)
        .executeTakeFirstOrThrow();
      expect(user.name).toBe('Ada Lovelace');
      expect(await cspViolations(page)).toEqual([]);
    });
  });

  it('the hosted page shows every mark and the dev mark; the same address again finds the same identity', async () => {
    const address = email('again');
    const signIn = async (state: string) =>
      withContext(browser, async (context) => {
        const page = await context.newPage();
        expect((await page.goto(signInUrl(state)))?.status()).toBe(200);
        const link = page.getByRole('link', { name: 'Continue with Google (development mode)' });
        expect(await link.locator('svg path').count()).toBe(4);
        await link.click();
        await answerAsGoogle(page, { email: address });
        await page.waitForURL((url) => url.href.startsWith(`${callback()}#`));
        expect(fragment(page).get('state')).toBe(state);
        expect(await cspViolations(page)).toEqual([]);
        return (await introspect(fragment(page).get('access_token'))).sub as string;
      });
    const first = await signIn('one');
    const second = await signIn('two');
    expect(second).toBe(first);
    expect(await identities(first)).toHaveLength(1);
  });

  it('joins a verified password account only as a real provider would', async () => {
    const signUp = async () => {
      const address = email('pw');
      const res = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
        email: address,
        password: 'correct horse battery staple',
      });
      return { address, userId: (await json(res)).userId as string };
    };
    const unverified = await signUp();
    const verified = await signUp();
    await app.ctx.database.db
      .updateTable('users')
      .set({ email_verified_at: Date.now() })
      .where('id', '=', verified.userId)
      .execute();
    await withContext(browser, async (context) => {
      const page = await context.newPage();
      await page.goto(signInUrl('pre-hijack'));
      await page.getByRole('link', { name: /^Continue with Google/ }).click();
      await answerAsGoogle(page, { email: unverified.address });
      await page.waitForURL((url) => url.pathname === '/oauth/google/development');
      expect(await page.textContent('h1')).toBe('Sign-in did not work');
      expect(await page.textContent('[role=alert]')).toContain(
        'cannot be joined to Google sign-in',
      );
    });
    expect(await identities(unverified.userId)).toHaveLength(0);
    await withContext(browser, async (context) => {
      const page = await context.newPage();
      await page.goto(signInUrl('link'));
      await page.getByRole('link', { name: /^Continue with Google/ }).click();
      await answerAsGoogle(page, { email: verified.address });
      await page.waitForURL((url) => url.href.startsWith(`${callback()}#`));
      expect((await introspect(fragment(page).get('access_token'))).sub).toBe(verified.userId);
    });
    expect(await identities(verified.userId)).toHaveLength(1);
  });

  it('a mistyped address shows the form again with the error', async () => {
    await withContext(browser, async (context) => {
      const page = await context.newPage();
      await page.goto(signInUrl());
      await page.getByRole('link', { name: /^Continue with Google/ }).click();
      await answerAsGoogle(page, { email: 'ada.example.com' });
      await page.getByRole('alert').waitFor();
      expect(await page.textContent('[role=alert]')).toContain(
        'Type the e-mail address Google would return',
      );
      expect(await page.inputValue('#email')).toBe('ada.example.com');
      expect(await page.getAttribute('#email', 'aria-invalid')).toBe('true');
    });
  });

  it('screenshots of the hosted page with the marks, and no serious accessibility violations', async () => {
    await withContext(browser, async (context) => {
      const page = await context.newPage();
      await page.goto(signInUrl());
      expect(await page.locator('a.provider svg').count()).toBe(PROVIDER_IDS.length);
      await page.screenshot({ path: join(ARTIFACTS, 'sign-in-marks.png'), fullPage: true });
      await page.setViewportSize(PHONE);
      await page.screenshot({ path: join(ARTIFACTS, 'sign-in-marks-phone.png'), fullPage: true });
      expect(await cspViolations(page)).toEqual([]);
    });
    const axePath = join(dirname(createRequire(import.meta.url).resolve('axe-core')), 'axe.min.js');
    const axe = readFileSync(axePath, 'utf8');
    await withContext(
      browser,
      async (context) => {
        const page = await context.newPage();
        const found = await seriousViolations(
          page,
          [
            ['sign-in with marks', () => page.goto(signInUrl())],
            [
              'development page',
              async () => {
                await page.goto(signInUrl());
                await page.getByRole('link', { name: /^Continue with GitHub/ }).click();
                await page.waitForURL((url) => url.pathname === '/oauth/github/development');
              },
            ],
          ],
          axe,
        );
        expect(found).toEqual([]);
      },
      { bypassCSP: true },
    );
  });
});
