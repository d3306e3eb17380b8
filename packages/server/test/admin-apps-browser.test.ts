/**
 * The admin "Applications" section (docs/design.md §12.2, §14) in a real Chromium against
 * the real server, kept short: an operator creates a web app and copies its secret, which
 * is gone on the next visit, rotates it with a grace period, and deletes the app through
 * its confirmation page; axe-core finds nothing serious, the pages fit a phone, and they
 * are screenshotted at desktop and phone width (into ADMIN_SHOTS, else test-artifacts).
 * One database only (SQLite): admin-apps.test.ts runs the same routes on both.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin } from '../src/modules/admin/index.js';
import { ADMIN_PASSWORD } from './admin-support.js';
import { HAVE_CHROMIUM, launchChromium, seriousViolations } from './browser.js';
import { email, startApp, type TestApp, type TestTenant } from './support.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SHOTS = process.env.ADMIN_SHOTS ?? join(ROOT, 'test-artifacts');

describe.skipIf(!HAVE_CHROMIUM)('admin Applications in Chromium (sqlite)', () => {
  let app: TestApp;
  let browser: Browser;
  let tenant: TestTenant;
  const adminEmail = email('apps-browser');

  beforeAll(async () => {
    [app, browser] = await Promise.all([startApp('sqlite'), launchChromium()]);
    tenant = await app.tenant();
    await createAdmin(
      { db: app.ctx.database.db, hasher: app.ctx.hasher },
      { email: adminEmail, password: ADMIN_PASSWORD, superuser: true, tenantIds: [] },
    );
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.dispose();
  });

  const h1 = (page: Page) => page.textContent('h1');
  const secretOf = (page: Page) => page.textContent('#new-secret');

  /** Screenshots at desktop and phone width; on the phone the page must not scroll sideways. */
  async function shoot(page: Page, name: string) {
    for (const [width, suffix] of [
      [1280, ''],
      [390, '-phone'],
    ] as const) {
      await page.setViewportSize({ width, height: 844 });
      await page.screenshot({ path: join(SHOTS, `admin-${name}${suffix}.png`), fullPage: true });
      if (suffix)
        expect(
          await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'),
          `${name} scrolls sideways`,
        ).toBeLessThanOrEqual(0);
    }
    await page.setViewportSize({ width: 1280, height: 844 });
  }

  it('an operator creates a web app, copies its secret once, rotates it and deletes the app', async () => {
    mkdirSync(SHOTS, { recursive: true });
    const axe = readFileSync(
      join(dirname(createRequire(import.meta.url).resolve('axe-core')), 'axe.min.js'),
      'utf8',
    );
    const context = await browser.newContext({
      permissions: ['clipboard-read', 'clipboard-write'],
      bypassCSP: true,
    });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    try {
      await page.setViewportSize({ width: 1280, height: 844 });
      await page.goto(`${app.url}/admin/sign-in`);
      await page.getByLabel('E-mail address').fill(adminEmail);
      await page.getByLabel('Password').fill(ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${app.url}/admin/tenants`);
      await page.goto(`${app.url}/admin/tenants/${tenant.tenant.id}`);
      await page
        .getByRole('navigation', { name: 'Tenant' })
        .getByRole('link', { name: 'Applications', exact: true })
        .click();
      expect(await h1(page)).toBe('Applications');
      const issuer = `${app.url}/t/${tenant.tenant.id}`;
      expect(await page.textContent('#issuer')).toBe(issuer);
      expect(await page.textContent('#discovery')).toBe(
        `${issuer}/.well-known/openid-configuration`,
      );

      await page.getByLabel('Name', { exact: true }).fill('Dashboard');
      await page.getByRole('radio', { name: 'Web server app (web)' }).check();
      await page
        .getByLabel('Redirect URIs', { exact: true })
        .fill('https://app.example.com/callback\nhttp://localhost:3000/callback');
      await page.getByRole('button', { name: 'Create application' }).click();
      expect(await h1(page)).toBe('Dashboard');
      const secret = (await secretOf(page)) as string;
      expect(secret).toMatch(/^[0-9A-Za-z]{43}$/);
      await page.getByRole('button', { name: 'Copy the client secret' }).click();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
      const clientId = (await page.textContent('#client-id')) as string;
      expect(clientId).toMatch(/^app_/);
      const found = await seriousViolations(page, [['app-created', async () => {}]], axe);
      await shoot(page, 'app-created');

      // Shown once: the app's own page, reached again, does not show it.
      await page.getByRole('link', { name: 'All applications' }).click();
      const row = page.getByRole('row').filter({ hasText: 'Dashboard' });
      expect(await row.getByRole('cell').allTextContents()).toEqual(
        expect.arrayContaining([
          'Dashboard',
          clientId,
          'web',
          'https://app.example.com/callbackhttp://localhost:3000/callback',
        ]),
      );
      await shoot(page, 'apps');
      await row.getByRole('link', { name: 'Dashboard' }).click();
      expect(await h1(page)).toBe('Dashboard');
      expect(await page.locator('#new-secret').count()).toBe(0);
      expect(await page.content()).not.toContain(secret);

      await page.getByLabel('Keep the old secret working for').selectOption('1h');
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      await page.locator('#new-secret').waitFor();
      const rotated = (await secretOf(page)) as string;
      expect(rotated).toMatch(/^[0-9A-Za-z]{43}$/);
      expect(rotated).not.toBe(secret);
      expect(await page.locator('main').textContent()).toContain(
        'The old secret keeps working until',
      );

      await page.getByRole('button', { name: 'Delete application' }).click();
      expect(await h1(page)).toBe('Delete Dashboard?');
      expect(await page.getByRole('alert').textContent()).toContain(clientId);
      await shoot(page, 'app-delete');
      await page.getByRole('button', { name: 'Delete Dashboard' }).click();
      await page.waitForURL(/\/apps\?done=app-deleted$/);
      expect(await page.getByRole('status').textContent()).toContain('The application is deleted');
      expect(await page.getByRole('row').filter({ hasText: 'Dashboard' }).count()).toBe(0);

      found.push(
        ...(await seriousViolations(
          page,
          [
            ['apps', () => page.goto(`${app.url}/admin/tenants/${tenant.tenant.id}/apps`)],
            [
              'apps-refused',
              async () => {
                await page.getByLabel('Name', { exact: true }).fill('Bad');
                await page.getByRole('button', { name: 'Create application' }).click();
                await page.getByRole('alert').waitFor();
              },
            ],
          ],
          axe,
        )),
      );
      expect(await page.getByRole('alert').textContent()).toContain(
        'a web app needs at least one redirect URI',
      );
      await shoot(page, 'apps-refused');
      expect(found).toEqual([]);
      expect(dialogs).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 30_000);
});
