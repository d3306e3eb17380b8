/**
 * The admin "Webhooks" section (docs/design.md §12.2, §17) in a real Chromium against the
 * real server and a real receiver on loopback: an operator adds an endpoint and copies its
 * secret (gone on the next visit), sees a REST sign-up delivered with its 200 attempt, then
 * the receiver answering 500: the failed attempt, the endpoint disabled because it only
 * failed and the notice saying so, "Enable" from the notice, "Resend" arriving with the
 * same webhook-id; rotates the secret, disables and enables, deletes through the
 * confirmation page; refused input is shown on the form. axe-core finds nothing serious,
 * the pages fit a phone, and they are screenshotted at desktop and phone width (into
 * ADMIN_SHOTS, else test-artifacts). One database only (SQLite): admin-webhooks.test.ts
 * runs the same routes on both.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin } from '../src/modules/admin/index.js';
import { ADMIN_PASSWORD } from './admin-support.js';
import { HAVE_CHROMIUM, launchChromium, seriousViolations } from './browser.js';
import { email, eventually, postJson, startApp, type TestApp, type TestTenant } from './support.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SHOTS = process.env.ADMIN_SHOTS ?? join(ROOT, 'test-artifacts');

describe.skipIf(!HAVE_CHROMIUM)('admin Webhooks in Chromium (sqlite)', () => {
  let app: TestApp;
  let browser: Browser;
  let tenant: TestTenant;
  const adminEmail = email('hooks-browser');
  const got: { headers: IncomingHttpHeaders; body: string }[] = [];
  let answer = 200;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res
        .writeHead(answer, { 'content-type': 'application/json' })
        .end(answer === 200 ? '{"received":true}' : '{"error":"database unavailable"}');
    });
  });
  let receiverUrl = '';

  beforeAll(async () => {
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/latchkey`;
    // No retries: a failed attempt fails its delivery (the schedule is webhooks.test.ts's).
    [app, browser] = await Promise.all([
      startApp('sqlite', { webhooks: { retryDelaysMs: [], pollMs: 20 } }),
      launchChromium(),
    ]);
    tenant = await app.tenant();
    await createAdmin(
      { db: app.ctx.database.db, hasher: app.ctx.hasher },
      { email: adminEmail, password: ADMIN_PASSWORD, superuser: true, tenantIds: [] },
    );
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.dispose();
    receiver.closeAllConnections();
    await new Promise((done) => receiver.close(done));
  });

  const h1 = (page: Page) => page.textContent('h1');
  const signUp = async () => {
    const address = email('hooked');
    const res = await postJson(app, '/v1/auth/sign-up', tenant.secretKey, {
      email: address,
      password: 'correct horse battery staple',
    });
    expect(res.status).toBe(201);
    return address;
  };
  /** Reloads `page` until the newest delivery has this status (deliveries come after the answer). */
  const reloadUntil = (page: Page, status: string) =>
    eventually(async () => {
      await page.reload();
      const badge = page.locator('.delivery').first().locator('h3 .badge');
      return (await badge.count()) > 0 && (await badge.textContent()) === status ? true : undefined;
    });

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

  it('an operator adds an endpoint, watches deliveries fail and succeed, resends, rotates and deletes', async () => {
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
        .getByRole('link', { name: 'Webhooks', exact: true })
        .click();
      expect(await h1(page)).toBe('Webhooks');
      const listUrl = page.url();

      // Refused input is shown on the form, as typed.
      await page.getByLabel('Endpoint URL').fill('ftp://example.com/in');
      await page.getByRole('checkbox', { name: 'user.deleted' }).check();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('alert').textContent()).toContain(
        'url must be an absolute http or https URL',
      );
      expect(await page.getByLabel('Endpoint URL').inputValue()).toBe('ftp://example.com/in');
      expect(await page.getByRole('checkbox', { name: 'user.deleted' }).isChecked()).toBe(true);
      const found = await seriousViolations(page, [['webhooks-refused', async () => {}]], axe);
      await shoot(page, 'webhooks-refused');

      await page.getByLabel('Endpoint URL').fill(receiverUrl);
      await page.getByRole('checkbox', { name: 'user.deleted' }).uncheck();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      expect(await h1(page)).toBe('Webhook endpoint');
      const secret = (await page.textContent('#new-secret')) as string;
      expect(secret).toMatch(/^whsec_/);
      await page.getByRole('button', { name: 'Copy the signing secret' }).click();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
      found.push(...(await seriousViolations(page, [['webhook-created', async () => {}]], axe)));
      await shoot(page, 'webhook-created');

      // A sign-up through the REST API is delivered, signed with that secret.
      const first = await signUp();
      await page.getByRole('link', { name: 'All endpoints' }).click();
      await page.getByRole('link', { name: receiverUrl }).click();
      expect(await page.locator('#new-secret').count()).toBe(0);
      expect(await page.content()).not.toContain(secret);
      await reloadUntil(page, 'succeeded');
      const ok = got.find((r) => r.body.includes(first)) as (typeof got)[number];
      new Webhook(secret).verify(ok.body, ok.headers as Record<string, string>);
      const okCard = page.locator('.delivery').first();
      expect(await okCard.textContent()).toContain(ok.headers['webhook-id'] as string);
      expect(await okCard.getByRole('cell').allTextContents()).toEqual(
        expect.arrayContaining(['200', '{"received":true}', expect.stringMatching(/^\d+ ms$/)]),
      );

      // The receiver fails: with no retries left the endpoint is disabled, and the notice
      // on the tenant's page and the list offers to enable it again.
      answer = 500;
      const second = await signUp();
      await reloadUntil(page, 'failed');
      const failedId = got.find((r) => r.body.includes(second))?.headers['webhook-id'] as string;
      const failedCard = page.locator('.delivery').first();
      expect(await failedCard.textContent()).toContain(failedId);
      expect(await failedCard.getByRole('cell').allTextContents()).toEqual(
        expect.arrayContaining(['500', '{"error":"database unavailable"}']),
      );
      await page.goto(`${app.url}/admin/tenants/${tenant.tenant.id}`);
      const notice = page.getByRole('region', { name: 'A webhook endpoint was disabled' });
      expect(await notice.getByRole('link').textContent()).toBe(receiverUrl);
      await page.goto(listUrl);
      expect(await page.getByRole('row').filter({ hasText: receiverUrl }).textContent()).toContain(
        'disabled: it only failed',
      );
      found.push(...(await seriousViolations(page, [['webhooks-failing', async () => {}]], axe)));
      await shoot(page, 'webhooks-failing');
      answer = 200;
      await page
        .getByRole('region', { name: 'A webhook endpoint was disabled' })
        .getByRole('button', { name: 'Enable' })
        .click();
      expect(await page.getByRole('status').textContent()).toContain('The endpoint is enabled');

      // Resend: the same webhook-id arrives again.
      const before = got.length;
      await page.locator('.delivery').first().getByRole('button', { name: 'Resend' }).click();
      expect(await page.getByRole('status').textContent()).toContain('same webhook-id');
      await eventually(async () =>
        got.slice(before).find((r) => r.headers['webhook-id'] === failedId),
      );
      await reloadUntil(page, 'succeeded');
      expect(await page.locator('.delivery').first().textContent()).toContain(failedId);
      found.push(...(await seriousViolations(page, [['webhook-endpoint', async () => {}]], axe)));
      await shoot(page, 'webhook-endpoint');

      await page.getByLabel('Keep signing with the old secret for').selectOption('1h');
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      await page.locator('#new-secret').waitFor();
      const rotated = (await page.textContent('#new-secret')) as string;
      expect(rotated).toMatch(/^whsec_/);
      expect(rotated).not.toBe(secret);
      expect(await page.locator('main').textContent()).toContain(
        'every delivery is signed with the old secret too',
      );

      await page.getByRole('button', { name: 'Disable' }).click();
      expect(await page.locator('main').textContent()).toContain('disabled by an operator');
      await page.getByRole('button', { name: 'Enable' }).click();
      expect(await page.getByRole('status').textContent()).toContain('The endpoint is enabled');

      await page.goto(listUrl);
      found.push(...(await seriousViolations(page, [['webhooks', async () => {}]], axe)));
      await shoot(page, 'webhooks');

      await page.getByRole('link', { name: receiverUrl }).click();
      await page.getByRole('button', { name: 'Delete endpoint' }).click();
      expect(await h1(page)).toBe('Delete this endpoint?');
      await page.getByRole('button', { name: 'Delete endpoint' }).click();
      await page.waitForURL(/\/webhooks\?done=endpoint-deleted$/);
      expect(await page.getByRole('status').textContent()).toContain('The endpoint is deleted');
      expect(await page.getByRole('row').filter({ hasText: receiverUrl }).count()).toBe(0);

      expect(found).toEqual([]);
      expect(dialogs).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
