/**
 * Social sign-in in a real Chromium, through the hosted sign-in page: the user clicks
 * "Continue with …", the provider harness (real OAuth 2 / OIDC servers on loopback) signs the
 * account in, and the browser lands on the caller's site on another origin, or on a hosted page
 * that says what went wrong.
 *
 * SQLite only: running Chromium twice would double the suite's time, and the same
 * workflows run on both databases in hosted.test.ts, social.test.ts and atomic-workflows.test.ts.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page, Response as PageResponse } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setProvider } from '../src/modules/social/index.js';
import { type Database, openDatabase } from '../src/storage/index.js';
import {
  type CallerApp,
  HAVE_CHROMIUM,
  launchChromium,
  seriousViolations,
  startCallerApp,
} from './browser.js';
import { type ProviderId, type ProviderServers, startProviders } from './providers.js';
import {
  email,
  json,
  postJson,
  reservePort,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const PASSWORD = 'correct horse battery staple';

/** The page's globals, typed just enough for the code that runs in Chromium (no DOM lib here). */
interface PageElement {
  id: string;
  tagName: string;
  textContent: string | null;
}
declare const document: { activeElement: PageElement | null };

type Name = 'Google' | 'GitHub' | 'Apple';

describe.skipIf(!HAVE_CHROMIUM)('social sign-in in Chromium, through the hosted page', () => {
  let app: TestApp;
  let providers: ProviderServers;
  let caller: CallerApp;
  let browser: Browser;
  /** A second connection, as the CLI would be: its writes are not this process's own. */
  let other: Database;
  /** Google, Apple and GitHub on; Facebook set up but off; Microsoft never set up. */
  let t: TestTenant;

  const callback = () => `${caller.origin}/callback`;
  const query = (tenant: TestTenant, state: string) =>
    new URLSearchParams({ pk: tenant.publishableKey, redirect_url: callback(), state }).toString();
  const signInUrl = (tenant: TestTenant, state = 'st') =>
    `${app.url}/sign-in?${query(tenant, state)}`;
  const h1 = (page: Page) => page.textContent('h1');
  const alertText = async (page: Page) => (await page.textContent('[role=alert]')) ?? '';
  const providerLinks = (page: Page) => page.locator('a.provider').allTextContents();
  const onCallback = (page: Page) => page.url().startsWith(`${callback()}#`);
  const fragment = (page: Page) => new URLSearchParams(new URL(page.url()).hash.slice(1));
  /** The state cookies of social flows still in the browser (any path). */
  const flowCookies = async (context: BrowserContext) =>
    (await context.cookies()).filter((c) => c.name.startsWith('latchkey_oauth_'));

  async function setUp(
    tenantId: string,
    id: ProviderId,
    enabled: boolean,
    db: Database = other,
  ): Promise<void> {
    const p = providers[id];
    await setProvider(db.db, app.ctx.box, tenantId, id, {
      clientId: p.clientId,
      enabled,
      ...(id === 'apple'
        ? {
            teamId: providers.apple.teamId,
            keyId: providers.apple.keyId,
            privateKeyPem: providers.apple.privateKeyPem,
          }
        : { clientSecret: p.clientSecret }),
    });
  }

  async function withContext<T>(
    options: Parameters<Browser['newContext']>[0],
    use: (page: Page, context: BrowserContext) => Promise<T>,
  ): Promise<T> {
    const context = await browser.newContext(options);
    try {
      return await use(await context.newPage(), context);
    } finally {
      await context.close();
    }
  }

  /**
   * Runs `act` (a click or a key press on "Continue with …") and follows the browser through
   * the provider to where it stops: the caller's site, or a hosted page of ours. Returns our
   * callback's answer (303 onwards, or the refusal page).
   */
  async function through(
    page: Page,
    id: ProviderId,
    act: () => Promise<unknown>,
  ): Promise<PageResponse> {
    const answer = page.waitForResponse((r) =>
      r.url().startsWith(`${app.url}/oauth/${id}/callback`),
    );
    await act();
    const response = await answer;
    await page.waitForURL(
      (url) =>
        url.origin === caller.origin ||
        (url.origin === app.url && url.pathname === `/oauth/${id}/callback`),
    );
    return response;
  }

  const click = (page: Page, name: Name) =>
    page.getByRole('link', { name: `Continue with ${name}`, exact: true }).click();

  async function introspect(tenant: TestTenant, token: string | null) {
    return json(await postJson(app, '/api/auth/introspect', tenant.secretKey, { token }));
  }

  /** A password account made through the REST API with the secret key. */
  async function passwordUser(tenant: TestTenant, address: string): Promise<string> {
    const res = await postJson(app, '/v1/auth/sign-up', tenant.secretKey, {
      email: address,
      password: PASSWORD,
    });
    expect(res.status).toBe(201);
    return (await json(res)).userId as string;
  }

  const countRows = async (table: 'users' | 'identities', tenantId: string) =>
    Number(
      (
        await app.ctx.database.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('tenant_id', '=', tenantId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  /** Follows "Back to sign in" and checks that it leads to the same sign-in request. */
  async function backToSignIn(page: Page, tenant: TestTenant, state: string) {
    const back = page.getByRole('link', { name: 'Back to sign in', exact: true });
    expect(await back.count()).toBe(1);
    const [response] = await Promise.all([page.waitForNavigation(), back.click()]);
    expect(response?.status()).toBe(200);
    expect(await h1(page)).toBe('Sign in');
    const url = new URL(page.url());
    expect(url.origin + url.pathname).toBe(`${app.url}/sign-in`);
    expect(url.searchParams.get('pk')).toBe(tenant.publishableKey);
    expect(url.searchParams.get('state')).toBe(state);
  }

  beforeAll(async () => {
    const socket = reservePort();
    const base = `http://127.0.0.1:${socket.address().port}`;
    [providers, caller, browser] = await Promise.all([
      startProviders({ redirectUriFor: (id) => `${base}/oauth/${id}/callback` }),
      startCallerApp(),
      launchChromium(),
    ]);
    app = await startApp('sqlite', {
      socket,
      env: {
        LATCHKEY_PROVIDER_ENDPOINTS: providers.endpointsJson(),
      },
    });
    other = openDatabase(app.ctx.config.databaseUrl);
    t = await app.tenant({ allowedOrigins: [caller.origin] });
    for (const id of ['google', 'apple', 'github'] as const) await setUp(t.tenant.id, id, true);
    await setUp(t.tenant.id, 'facebook', false);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await other?.close();
    await app?.dispose();
    await Promise.all([providers?.close(), caller?.close()]);
  });

  it('offers exactly the enabled providers, reachable by keyboard; Google lands on the caller', async () => {
    const address = email('google');
    providers.google.next({
      sub: `g-${Date.now()}`,
      email: address,
      emailVerified: true,
      name: 'Ada Lovelace',
    });
    await withContext({}, async (page, context) => {
      expect((await page.goto(signInUrl(t, 'google-state')))?.status()).toBe(200);
      // In the server's stable order (Google, Facebook, GitHub, Apple, Microsoft).
      expect(await providerLinks(page)).toEqual([
        'Continue with Google',
        'Continue with GitHub',
        'Continue with Apple',
      ]);
      expect(await page.getByText('Continue with Facebook').count()).toBe(0);
      expect(await page.getByText('Continue with Microsoft').count()).toBe(0);

      // The caret starts in the e-mail field; the provider links come before it.
      await page.waitForFunction(() => document.activeElement?.id === 'email', undefined, {
        timeout: 5000,
      });
      const focused = () => page.evaluate(() => document.activeElement?.textContent?.trim());
      const order: (string | undefined)[] = [];
      for (let i = 0; i < 3; i++) {
        await page.keyboard.press('Shift+Tab');
        order.push(await focused());
      }
      expect(order).toEqual([
        'Continue with Apple',
        'Continue with GitHub',
        'Continue with Google',
      ]);

      const answer = await through(page, 'google', () => click(page, 'Google'));
      expect(answer.status()).toBe(303);
      expect(onCallback(page), `landed on ${page.url()}`).toBe(true);
      const hash = fragment(page);
      expect(hash.get('state')).toBe('google-state');
      expect(hash.get('tenant_id')).toBe(t.tenant.id);
      expect(hash.get('access_token')).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      // The token travels in the fragment only: the caller's server never sees it.
      expect(caller.requests.every((r) => !/token/.test(r))).toBe(true);
      expect(await introspect(t, hash.get('access_token'))).toMatchObject({
        active: true,
        email: address,
      });
      expect(await flowCookies(context)).toEqual([]);
    });
  });

  it('links GitHub to a verified password account with the same address (keyboard only)', async () => {
    const address = email('link');
    const userId = await passwordUser(t, address);
    await app.ctx.database.db
      .updateTable('users')
      .set({ email_verified_at: Date.now() })
      .where('id', '=', userId)
      .execute();
    providers.github.next({
      sub: String(700_000 + Math.floor(Math.random() * 100_000)),
      email: address,
      emailVerified: true,
      name: 'Linked Person',
    });
    await withContext({}, async (page) => {
      await page.goto(signInUrl(t, 'link-state'));
      await page.waitForFunction(() => document.activeElement?.id === 'email', undefined, {
        timeout: 5000,
      });
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Shift+Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe(
        'Continue with GitHub',
      );
      const answer = await through(page, 'github', () => page.keyboard.press('Enter'));
      expect(answer.status()).toBe(303);
      expect(onCallback(page), `landed on ${page.url()}`).toBe(true);
      expect(fragment(page).get('state')).toBe('link-state');
      const claims = await introspect(t, fragment(page).get('access_token'));
      expect(claims).toMatchObject({ active: true, sub: userId, email: address });
    });
    const db = app.ctx.database.db;
    const identities = await db
      .selectFrom('identities')
      .selectAll()
      .where('user_id', '=', userId)
      .execute();
    expect(identities).toHaveLength(1);
    expect(identities[0]).toMatchObject({ provider: 'github', email_verified: 1 });
    const events = await db
      .selectFrom('audit_events')
      .select('kind')
      .where('user_id', '=', userId)
      .execute();
    expect(events.map((e) => e.kind)).toContain('identity_linked');
  });

  it('refuses to take over an unverified password account (pre-hijacking)', async () => {
    const address = email('hijack');
    const userId = await passwordUser(t, address);
    const users = await countRows('users', t.tenant.id);
    const identities = await countRows('identities', t.tenant.id);
    providers.google.next({ sub: `g-victim-${Date.now()}`, email: address, emailVerified: true });
    await withContext({}, async (page, context) => {
      await page.goto(signInUrl(t, 'hijack-state'));
      const answer = await through(page, 'google', () => click(page, 'Google'));
      expect(answer.status()).toBe(400);
      expect(new URL(page.url()).origin).toBe(app.url);
      expect(await h1(page)).toBe('Sign-in did not work');
      expect(await alertText(page)).toContain('cannot be joined');
      // One message for every refusal here: it tells nothing about the account.
      // Not signed in: no browser session for this tenant.
      const cookies = await context.cookies(app.url);
      expect(cookies.some((c) => c.name.startsWith('latchkey_session'))).toBe(false);
      await backToSignIn(page, t, 'hijack-state');
    });
    expect(await countRows('users', t.tenant.id)).toBe(users);
    expect(await countRows('identities', t.tenant.id)).toBe(identities);
    const own = await app.ctx.database.db
      .selectFrom('identities')
      .selectAll()
      .where('user_id', '=', userId)
      .execute();
    expect(own).toEqual([]);
  });

  it('ends a cancel at GitHub and Google being down on a clear page whose way back works', async () => {
    const users = await countRows('users', t.tenant.id);
    await withContext({}, async (page) => {
      await page.goto(signInUrl(t, 'cancel-state'));
      providers.github.next('cancel');
      const cancelled = await through(page, 'github', () => click(page, 'GitHub'));
      expect(cancelled.status()).toBe(400);
      expect(await h1(page)).toBe('Sign-in did not work');
      expect(await alertText(page)).toBe('You cancelled signing in with GitHub.');
      await backToSignIn(page, t, 'cancel-state');

      providers.google.next('down');
      const down = await through(page, 'google', () => click(page, 'Google'));
      expect(down.status()).toBe(400);
      expect(await h1(page)).toBe('Sign-in did not work');
      expect(await alertText(page)).toMatch(/^Google could not be reached.*Try again\.$/);
      await backToSignIn(page, t, 'cancel-state');
    });
    expect(await countRows('users', t.tenant.id)).toBe(users);
    // And then it works, with the caller's state kept all along.
    const address = email('after');
    providers.github.next({
      sub: String(800_000 + Math.floor(Math.random() * 100_000)),
      email: address,
      emailVerified: true,
    });
    await withContext({}, async (page) => {
      await page.goto(signInUrl(t, 'cancel-state'));
      expect((await through(page, 'github', () => click(page, 'GitHub'))).status()).toBe(303);
      expect(onCallback(page)).toBe(true);
      expect(fragment(page).get('state')).toBe('cancel-state');
      expect(await introspect(t, fragment(page).get('access_token'))).toMatchObject({
        active: true,
        email: address,
      });
    });
  });

  it('refuses an answer opened in another browser (state not bound to it)', async () => {
    const address = email('tamper');
    providers.github.next({
      sub: String(900_000 + Math.floor(Math.random() * 50_000)),
      email: address,
      emailVerified: true,
    });
    const users = await countRows('users', t.tenant.id);
    await withContext({}, async (first, context) => {
      // The provider's answer is caught before it reaches the server in the first browser.
      // (Through CDP: page.route never sees a request that a redirect led to.)
      const cdp = await context.newCDPSession(first);
      let answer = '';
      cdp.on('Fetch.requestPaused', (event) => {
        answer = event.request.url;
        void cdp.send('Fetch.fulfillRequest', { requestId: event.requestId, responseCode: 204 });
      });
      await cdp.send('Fetch.enable', {
        patterns: [{ urlPattern: `${app.url}/oauth/github/callback?*`, requestStage: 'Request' }],
      });
      await first.goto(signInUrl(t, 'tamper-state'));
      await click(first, 'GitHub');
      await expect.poll(() => answer).not.toBe('');
      await cdp.send('Fetch.disable');
      await cdp.detach();
      expect(new URL(answer).searchParams.get('code')).toBeTruthy();
      expect(new URL(answer).searchParams.get('state')).toBeTruthy();

      await withContext({}, async (second) => {
        const res = await second.goto(answer);
        expect(res?.status()).toBe(400);
        expect(await h1(second)).toBe('Sign-in did not work');
        expect(await alertText(second)).toContain('another browser');
        // Unlike the other refusals, this page offers no "Back to sign in" (the server refuses
        // before it reads the flow's sign-in request), so it is not checked here.
        expect(onCallback(second)).toBe(false);
      });
      expect(await countRows('users', t.tenant.id)).toBe(users);

      // The browser that started it may still finish it.
      const res = await first.goto(answer);
      expect(res?.status()).toBe(200);
      expect(onCallback(first), `landed on ${first.url()}`).toBe(true);
      expect(fragment(first).get('state')).toBe('tamper-state');
    });
  });

  it('signs in with Apple, whose answer is a form POST', async () => {
    const address = email('apple');
    providers.apple.next({
      sub: `001234.${Date.now()}.apple`,
      email: address,
      emailVerified: true,
      name: 'Ada Lovelace',
    });
    await withContext({}, async (page, context) => {
      await page.goto(signInUrl(t, 'apple-state'));
      const answer = await through(page, 'apple', () => click(page, 'Apple'));
      expect(answer.request().method()).toBe('POST');
      expect(answer.status(), await answer.text().catch(() => '')).toBe(303);
      expect(onCallback(page), `landed on ${page.url()}`).toBe(true);
      expect(fragment(page).get('state')).toBe('apple-state');
      const claims = await introspect(t, fragment(page).get('access_token'));
      expect(claims).toMatchObject({ active: true, email: address });
      const user = await app.ctx.database.db
        .selectFrom('users')
        .select('name')
        .where('id', '=', claims.sub)
        .executeTakeFirstOrThrow();
      // Apple sends the name once, in the form (never in the ID token).
      expect(user.name).toBe('Ada Lovelace');
      // The SameSite=None state cookie that let the cross-site POST through is cleared.
      expect(await flowCookies(context)).toEqual([]);
    });
  });

  it('drops a provider that another process turned off', async () => {
    const off = await app.tenant({ allowedOrigins: [caller.origin] });
    await setUp(off.tenant.id, 'google', true);
    await setUp(off.tenant.id, 'github', true);
    await withContext({}, async (page) => {
      await page.goto(signInUrl(off, 'off-state'));
      expect(await providerLinks(page)).toEqual(['Continue with Google', 'Continue with GitHub']);

      // Turned off (as the CLI would) while the page is open: its stale button says so.
      await setProvider(other.db, app.ctx.box, off.tenant.id, 'google', { enabled: false });
      const [stale] = await Promise.all([page.waitForNavigation(), click(page, 'Google')]);
      expect(stale?.status()).toBe(400);
      expect(await alertText(page)).toContain('turned off');
      await backToSignIn(page, off, 'off-state');
      expect(await providerLinks(page)).toEqual(['Continue with GitHub']);

      const direct = await page.goto(
        `${app.url}/oauth/google/start?q=${encodeURIComponent(query(off, 'off-state'))}`,
      );
      expect(direct?.status()).toBe(400);
      expect(await h1(page)).toBe('Sign-in did not work');
      expect(await alertText(page)).toBe('Sign-in with Google is turned off for this application.');
      await backToSignIn(page, off, 'off-state');
    });
    expect(await countRows('users', off.tenant.id)).toBe(0);
  });

  it('has no serious or critical accessibility violations, and a screenshot', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const axePath = join(dirname(createRequire(import.meta.url).resolve('axe-core')), 'axe.min.js');
    const axe = readFileSync(axePath, 'utf8');
    await withContext({}, async (page) => {
      await page.goto(signInUrl(t));
      await page.screenshot({ path: join(ARTIFACTS, 'sign-in-providers.png'), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({
        path: join(ARTIFACTS, 'sign-in-providers-phone.png'),
        fullPage: true,
      });
    });
    await withContext({ bypassCSP: true }, async (page) => {
      const pages: [string, () => Promise<unknown>][] = [
        ['sign-in with providers', () => page.goto(signInUrl(t))],
        [
          'social refusal',
          async () => {
            await page.goto(signInUrl(t));
            providers.github.next('cancel');
            await through(page, 'github', () => click(page, 'GitHub'));
          },
        ],
      ];
      const found = await seriousViolations(page, pages, axe);
      if (found.length) console.error(found.join('\n'));
      expect(found).toEqual([]);
    });
  });

  it('logs the failures for operators, but no provider code, token or secret', () => {
    const logs = app.logs.text();
    expect(logs).toContain('/oauth/github/callback');
    // Google being down, with the reason.
    expect(logs).toContain('social sign-in failed at the provider');
    for (const id of ['google', 'github'] as const) {
      expect(logs).not.toContain(providers[id].clientSecret);
    }
    expect(logs).not.toMatch(/[?&]code=[\w-]{8}/);
    expect(logs).not.toContain('access_token=');
    expect(logs).not.toMatch(/gho_[\w-]{10}/);
  });
});
