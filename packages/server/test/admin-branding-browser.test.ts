/**
 * The Branding page's live preview in a real Chromium against the real server: as the
 * operator types, the frame shows the hosted page's own rendering and the buttons are
 * latchkey.js's own (the same shadow DOM as a real mount on the caller's page); the frame
 * runs nothing and sends nothing; without JavaScript it shows the saved values.
 * One database suffices: the HTTP suite (admin-branding.test.ts) runs on both.
 */
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../src/modules/tenants/index.js';
import { ADMIN_PASSWORD, type AdminClient, signedInAdmin } from './admin-support.js';
import { type CallerApp, HAVE_CHROMIUM, launchChromium, startCallerApp } from './browser.js';
import { email, startApp, type TestApp, type TestTenant } from './support.js';

declare function getComputedStyle(element: never): { backgroundColor: string };
interface Shadowed {
  shadowRoot: {
    innerHTML: string;
    adoptedStyleSheets: { cssRules: ArrayLike<{ cssText: string }> }[];
  };
  getAttribute(name: string): string | null;
}
declare const document: { querySelector(selector: string): Shadowed };
declare const window: {
  Latchkey(o: { publishableKey: string }): { mount(t: string, o: { redirectUrl: string }): void };
};
declare const history: { length: number };

/** The mounted buttons as drawn: their markup, the host's colours, and the style sheet. */
const drawn = (page: Page, selector: string) =>
  page.evaluate((s) => {
    const host = document.querySelector(s);
    return {
      html: host.shadowRoot.innerHTML,
      style: host.getAttribute('style'),
      css: Array.from(host.shadowRoot.adoptedStyleSheets, (sheet) =>
        Array.from(sheet.cssRules, (r) => r.cssText).join('\n'),
      ),
    };
  }, selector);

describe.skipIf(!HAVE_CHROMIUM)('admin Branding preview in Chromium', () => {
  let app: TestApp;
  let a: TestTenant;
  let caller: CallerApp;
  let browser: Browser;
  const adminEmail = email('brand');

  beforeAll(async () => {
    [app, caller, browser] = await Promise.all([
      startApp('sqlite'),
      startCallerApp(),
      launchChromium(),
    ]);
    a = await app.tenant({ allowedOrigins: [caller.origin] });
    await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, a.tenant.id, {
      name: 'Saved Co',
    });
    const admin: AdminClient = await signedInAdmin(app, adminEmail, { superuser: true });
    await admin.get(`/admin/tenants/${a.tenant.id}/social`);
    await admin.post(`/admin/tenants/${a.tenant.id}/social/github`, {
      enabled: 'on',
      clientId: 'gh-client',
      clientSecret: 'gh-secret',
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.dispose();
    await caller?.close();
  });

  async function signIn(context: BrowserContext): Promise<Page> {
    const page = await context.newPage();
    await page.goto(`${app.url}/admin/sign-in`);
    await page.getByLabel('E-mail address').fill(adminEmail);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${app.url}/admin/tenants`);
    return page;
  }
  const background = (target: Locator) =>
    target.evaluate((b) => getComputedStyle(b as never).backgroundColor);

  it('shows the real hosted page and the real buttons as the operator types', async () => {
    const context = await browser.newContext();
    const page = await signIn(context);
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) problems.push(m.text());
    });
    try {
      await page.goto(`${app.url}/admin/tenants/${a.tenant.id}/branding`);
      const frame = page.frameLocator('#hosted-preview');
      expect(await frame.locator('.tenant').textContent()).toBe('Saved Co');
      expect(await frame.getByRole('link', { name: 'Continue with GitHub' }).count()).toBe(1);
      await page.locator('#buttons-preview [data-latchkey]').waitFor();
      const before = await page.evaluate(() => history.length);

      await page.getByLabel('Name').fill('Typed Co');
      await page.getByLabel('Logo URL').fill('https://cdn.example/logo.png');
      await page.getByLabel('Primary color').fill('#0a7d33');
      // With a logo, the logo stands for the name (its alt text).
      await expect.poll(() => frame.locator('img.logo').getAttribute('alt')).toBe('Typed Co');
      await expect
        .poll(() => background(frame.locator('button[type=submit]')))
        .toBe('rgb(10, 125, 51)');
      expect(await frame.locator('img.logo').getAttribute('src')).toBe(
        'https://cdn.example/logo.png',
      );
      // The buttons of latchkey.js, in the typed colour, name and logo.
      const buttons = page.locator('#buttons-preview');
      expect(await buttons.locator('h2').textContent()).toBe('Sign in to Typed Co');
      expect(await buttons.locator('img').getAttribute('src')).toBe('https://cdn.example/logo.png');
      expect(await background(buttons.getByRole('button', { name: 'Continue with e-mail' }))).toBe(
        'rgb(10, 125, 51)',
      );
      expect(await buttons.getByRole('button').allTextContents()).toEqual([
        'Continue with GitHub',
        'Continue with e-mail',
      ]);
      // A preview's buttons sign nobody in; typing left no entries in the history.
      await buttons.getByRole('button', { name: 'Continue with GitHub' }).click();
      expect(page.url()).toBe(`${app.url}/admin/tenants/${a.tenant.id}/branding`);
      expect(await page.evaluate(() => history.length)).toBe(before);

      // A development tenant's logo may come from the developer's machine.
      await page.getByLabel('Logo URL').fill('http://localhost:5173/logo.png');
      await expect
        .poll(() => buttons.locator('img').getAttribute('src'))
        .toBe('http://localhost:5173/logo.png');
      await expect
        .poll(() => frame.locator('img.logo').getAttribute('src'))
        .toBe('http://localhost:5173/logo.png');

      // What a save would refuse is said in the frame.
      await page.getByLabel('Logo URL').fill('http://cdn.example/logo.png');
      await expect.poll(() => frame.locator('h1').textContent()).toBe('No preview yet');
      expect(await frame.locator('main').textContent()).toContain(
        'The Logo URL must start with https://',
      );

      // The frame runs nothing and sends nothing: its form stays where it is.
      await page.getByLabel('Logo URL').fill('');
      await expect.poll(() => frame.locator('.tenant').textContent()).toBe('Typed Co');
      await frame.getByLabel('E-mail address').fill('someone@example.com');
      await frame.getByLabel('Password').fill('whatever password');
      await frame.getByRole('button', { name: 'Sign in' }).click();
      expect(await frame.locator('h1').textContent()).toBe('Sign in');
      const row = await app.ctx.database.db
        .selectFrom('tenants')
        .select(['name', 'primary_color'])
        .where('id', '=', a.tenant.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ name: 'Saved Co', primary_color: null });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it("draws the same buttons as a real mount of latchkey.js on the caller's page", async () => {
    await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, a.tenant.id, {
      primaryColor: '#0a7d33',
    });
    await app.ctx.bus.publish(`tenant:${a.tenant.id}`);
    const context = await browser.newContext();
    try {
      const page = await signIn(context);
      await page.goto(`${app.url}/admin/tenants/${a.tenant.id}/branding`);
      await page.locator('#buttons-preview [data-latchkey]').getByRole('button').first().waitFor();
      const preview = await drawn(page, '#buttons-preview [data-latchkey]');

      const site = await context.newPage();
      await site.goto(`${caller.origin}/callback`);
      await site.addScriptTag({ url: `${app.url}/sdk/latchkey.js` });
      await site.evaluate(
        ({ pk, redirectUrl }) =>
          window.Latchkey({ publishableKey: pk }).mount('body', { redirectUrl }),
        { pk: a.publishableKey, redirectUrl: `${caller.origin}/callback` },
      );
      await site.locator('[data-latchkey]').getByRole('button').first().waitFor();
      const real = await drawn(site, '[data-latchkey]');
      expect(preview).toEqual(real);
      expect(real.html).toContain('Continue with GitHub');
      expect(real.style).toContain('--lk-c: #0a7d33');
    } finally {
      await context.close();
    }
  }, 60_000);

  it('without JavaScript, the frame shows the saved values', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await signIn(context);
      await page.goto(`${app.url}/admin/tenants/${a.tenant.id}/branding`);
      const frame = page.frameLocator('#hosted-preview');
      expect(await frame.locator('.tenant').textContent()).toBe('Saved Co');
      await page.getByLabel('Name').fill('Not Sent');
      expect(await frame.locator('.tenant').textContent()).toBe('Saved Co');
      expect(await page.locator('#buttons-preview').textContent()).toContain(
        'they show when JavaScript runs',
      );
    } finally {
      await context.close();
    }
  }, 60_000);
});
