/**
 * The admin area in a real Chromium against the real server, on SQLite and PostgreSQL: an
 * operator's whole journey (tenant, branding seen on the hosted page, GitHub through the
 * local GitHub-shaped provider with "Test sign-in", a key used over REST, a user disabled
 * and their token inactive, all of it in the audit log); a tenant-bound admin refused; a
 * cross-site form refused; axe-core and screenshots (desktop and phone) of every page.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin } from '../src/modules/admin/index.js';
import { ADMIN_PASSWORD } from './admin-support.js';
import {
  type CallerApp,
  HAVE_CHROMIUM,
  launchChromium,
  seriousViolations,
  startCallerApp,
} from './browser.js';
import { type ProviderServer, startProvider } from './providers.js';
import { DIALECTS, email, json, postJson, reservePort, startApp, type TestApp } from './support.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
declare function getComputedStyle(element: never): { backgroundColor: string };

/** A page on another site whose form posts to the admin area (as an attacker's would). */
async function startAttacker(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><html lang="en"><title>Win a prize</title><form method="post" action="${target}"><input type="hidden" name="name" value="Pwned"><button>Claim</button></form></html>`,
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${port}/`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

for (const dialect of DIALECTS) {
  describe.skipIf(!HAVE_CHROMIUM)(`admin area in Chromium (${dialect})`, () => {
    let app: TestApp;
    let github: ProviderServer;
    let caller: CallerApp;
    let browser: Browser;
    const adminEmail = email('operator');
    /** Filled by the journey, used by the later tests. */
    const made = {
      tenantId: '',
      otherTenantId: '',
      userId: '',
      testResultUrl: '',
      keysTenantId: '',
      pages: [] as string[],
    };

    beforeAll(async () => {
      const socket = reservePort();
      const base = `http://127.0.0.1:${socket.address().port}`;
      [github, caller, browser] = await Promise.all([
        startProvider('github', { redirectUri: `${base}/oauth/github/callback` }),
        startCallerApp(),
        launchChromium(),
      ]);
      app = await startApp(dialect, {
        socket,
        env: {
          LATCHKEY_PROVIDER_ENDPOINTS: JSON.stringify({ github: github.endpoints }),
        },
      });
      await createAdmin(
        { db: app.ctx.database.db, hasher: app.ctx.hasher },
        { email: adminEmail, password: ADMIN_PASSWORD, superuser: true, tenantIds: [] },
      );
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await app?.dispose();
      await Promise.all([github?.close(), caller?.close()]);
    });

    async function signIn(page: Page, address = adminEmail) {
      await page.goto(`${app.url}/admin`);
      await page.getByLabel('E-mail address').fill(address);
      await page.getByLabel('Password').fill(ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${app.url}/admin/tenants`);
    }
    const h1 = (page: Page) => page.textContent('h1');
    const nav = (page: Page, name: string) =>
      page
        .getByRole('navigation', { name: 'Tenant' })
        .getByRole('link', { name, exact: true })
        .click();

    it('an operator sets up a tenant, GitHub, a key, and disables a user: all in the audit log', async () => {
      const context = await browser.newContext({
        permissions: ['clipboard-read', 'clipboard-write'],
      });
      const page = await context.newPage();
      const cspErrors: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
      });
      try {
        await signIn(page);
        expect(await h1(page)).toBe('Tenants');

        // Tenants: create one; its id and publishable key, with copy buttons.
        await page.getByLabel('Name').fill('Journey Co');
        await page.getByLabel('Environment').selectOption('development');
        await page.getByLabel('Plan').selectOption('free');
        await page.getByRole('button', { name: 'Create tenant' }).click();
        expect(await h1(page)).toBe('Journey Co');
        made.tenantId = (await page.textContent('#tenant-id')) as string;
        const pk = (await page.textContent('#publishable-key')) as string;
        expect(pk).toMatch(/^pk_test_/);
        await page.getByRole('button', { name: 'Copy Publishable key' }).click();
        expect(await page.evaluate('navigator.clipboard.readText()')).toBe(pk);
        expect(await page.textContent('#snippet-0')).toContain(`pk=${pk}`);
        await page.getByLabel('Allowed origins').fill(caller.origin);
        await page.getByRole('button', { name: 'Save settings' }).click();
        await expect.poll(() => page.textContent('[role=status]')).toBe('Saved.');
        // An enterprise plan at the largest limits: the form's own bounds let them through,
        // and the server keeps them (read back after a reload, not from the filled form).
        // From the page without the previous save's ?done=saved, so that waiting for that
        // address waits for this save (a reload during its redirect would be lost).
        await page.goto(`${app.url}/admin/tenants/${made.tenantId}`);
        // On the free plan the limits are the plan's, shown read-only.
        expect(await page.getByLabel('Custom limit: requests per second').count()).toBe(0);
        expect(await page.textContent('.limits')).toBe('10 requests per second, 600 per minute');
        await page.getByLabel('Plan').selectOption('enterprise');
        await Promise.all([
          page.waitForURL(/done=saved/),
          page.getByRole('button', { name: 'Save settings' }).click(),
        ]);
        await page.goto(`${app.url}/admin/tenants/${made.tenantId}`);
        await page.getByLabel('Custom limit: requests per second').fill('1000000');
        await page.getByLabel('Custom limit: requests per minute').fill('60000000');
        expect(await page.evaluate("document.getElementById('f-rpm').form.checkValidity()")).toBe(
          true,
        );
        await Promise.all([
          page.waitForURL(/done=saved/),
          page.getByRole('button', { name: 'Save settings' }).click(),
        ]);
        await page.reload();
        expect(await page.getByLabel('Custom limit: requests per second').inputValue()).toBe(
          '1000000',
        );
        expect(await page.getByLabel('Custom limit: requests per minute').inputValue()).toBe(
          '60000000',
        );

        // Branding, seen in the live preview and then on the hosted page.
        await nav(page, 'Branding');
        expect(await h1(page)).toBe('Branding');
        await page.getByLabel('Primary color').fill('#0a7d33');
        await page.getByLabel('Name').fill('Journey Branded');
        // The hosted page's own rendering and the script's own buttons, before the save.
        await expect
          .poll(() => page.frameLocator('#hosted-preview').locator('.tenant').textContent())
          .toBe('Journey Branded');
        expect(await page.locator('#buttons-preview h2').textContent()).toBe(
          'Sign in to Journey Branded',
        );
        await page.getByRole('button', { name: 'Save branding' }).click();
        await expect.poll(() => page.textContent('[role=status]')).toBe('Saved.');
        const hostedUrl = `${app.url}/sign-in?${new URLSearchParams({ pk, redirect_url: `${caller.origin}/callback` })}`;
        const hosted = await context.newPage();
        await hosted.goto(hostedUrl);
        expect(await hosted.textContent('.tenant')).toBe('Journey Branded');
        expect(
          await hosted
            .locator('button[type=submit]')
            .evaluate((b) => getComputedStyle(b as never).backgroundColor),
        ).toBe('rgb(10, 125, 51)');

        // Social Login: GitHub with the local provider, "Test sign-in" (creates nothing)
        // before it is Enabled, then Enabled.
        await nav(page, 'Social Login');
        expect(await h1(page)).toBe('Social Login');
        const panel = page.getByRole('region', { name: 'GitHub' });
        expect(await panel.locator('#github-callback').textContent()).toBe(
          `${app.url}/oauth/github/callback`,
        );
        await panel.getByLabel('Client ID').fill(github.clientId);
        await panel.getByLabel('Client secret').fill(github.clientSecret);
        await panel.getByRole('button', { name: 'Save GitHub' }).click();
        await expect.poll(() => page.textContent('[role=status]')).toBe('Saved.');
        expect(await page.content()).not.toContain(github.clientSecret);
        const person = {
          sub: '31337',
          email: email('octo'),
          emailVerified: true,
          name: 'Octo Cat',
        };
        github.next(person);
        await page
          .getByRole('region', { name: 'GitHub' })
          .getByRole('button', { name: 'Test sign-in with GitHub' })
          .click();
        await page.waitForURL(/\/social\/github\/test\//);
        made.testResultUrl = page.url();
        expect(await h1(page)).toBe('Test sign-in: GitHub');
        expect(await page.textContent('main')).toContain(person.email);
        expect(await page.textContent('main')).toContain('Would create a new account');
        const users = await app.ctx.database.db
          .selectFrom('users')
          .select('id')
          .where('tenant_id', '=', made.tenantId)
          .execute();
        expect(users).toEqual([]);
        await hosted.goto(hostedUrl);
        expect(await hosted.getByRole('link', { name: 'Continue with GitHub' }).count()).toBe(0);
        await nav(page, 'Social Login');
        await page
          .getByRole('region', { name: 'GitHub' })
          .getByLabel('Live', { exact: true })
          .check();
        await page.getByRole('button', { name: 'Save GitHub' }).click();
        await expect.poll(() => page.textContent('[role=status]')).toBe('Saved.');

        // The same person signs in for real on the hosted page.
        github.next(person);
        await hosted.goto(hostedUrl);
        await hosted.getByRole('link', { name: 'Continue with GitHub' }).click();
        await hosted.waitForURL((u) => u.origin === caller.origin);
        const accessToken = new URLSearchParams(new URL(hosted.url()).hash.slice(1)).get(
          'access_token',
        ) as string;
        expect(accessToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
        // A returning visit goes straight back, until an operator revokes the session (below).
        await hosted.goto(hostedUrl);
        await hosted.waitForURL((u) => u.origin === caller.origin);

        // API Keys: a new secret key, shown once, used over REST.
        await nav(page, 'API Keys');
        expect(await h1(page)).toBe('API Keys');
        expect(
          await page.getByRole('group', { name: 'Scopes' }).getByRole('checkbox').count(),
        ).toBe(4);
        await page
          .getByRole('form', { name: 'Create a secret key' })
          .getByLabel('Name')
          .fill('journey backend');
        await page.getByRole('button', { name: 'Create secret key' }).click();
        const secret = (await page.textContent('#new-secret')) as string;
        expect(secret).toMatch(/^sk_test_/);
        const listed = await json(
          await app.request(`/v1/users?email=${encodeURIComponent(person.email)}`, {
            headers: { authorization: `Bearer ${secret}` },
          }),
        );
        expect(listed.data).toHaveLength(1);
        made.userId = listed.data[0].id;
        await page.reload();
        expect(await page.content()).not.toContain(secret);
        expect(await page.textContent('main')).toContain(
          `${secret.slice(0, 12)}…${secret.slice(-4)}`,
        );

        // Users: find the person, disable them; their token is inactive at once.
        await nav(page, 'Users');
        // Part of the name finds them, in any case.
        await page.getByLabel('E-mail or name').fill('cTo c');
        await page.getByRole('button', { name: 'Search' }).click();
        await page.getByRole('link', { name: person.email }).click();
        expect(await h1(page)).toBe(person.email);
        expect(await page.textContent('main')).toContain('github');
        // The session of the hosted sign-in names its browser.
        expect(await page.getByRole('region', { name: 'Sessions' }).textContent()).toMatch(
          /Chrome \d+ on Linux/,
        );
        // Revoking the session locks out the browser that holds it: the hosted page asks again.
        await page.getByRole('button', { name: 'Revoke' }).click();
        await expect.poll(() => page.textContent('[role=status]')).toContain('revoked');
        await hosted.goto(hostedUrl);
        expect(new URL(hosted.url()).pathname).toBe('/sign-in');
        expect(await hosted.getByRole('link', { name: 'Continue with GitHub' }).count()).toBe(1);
        page.once('dialog', (d) => void d.accept());
        await page.getByRole('button', { name: 'Disable' }).click();
        await expect.poll(() => page.textContent('[role=status]')).toContain('disabled');
        expect(
          await json(await postJson(app, '/api/auth/introspect', secret, { token: accessToken })),
        ).toEqual({ active: false });

        // The audit log tells it all, with the operator's e-mail.
        await page
          .getByRole('navigation', { name: 'Main' })
          .getByRole('link', { name: 'Audit log' })
          .click();
        expect(await h1(page)).toBe('Audit log');
        await page.getByLabel('Tenant').selectOption(made.tenantId);
        await page.getByRole('button', { name: 'Filter' }).click();
        const log = (await page.textContent('table')) as string;
        for (const kind of [
          'tenant_created',
          'tenant_updated',
          'branding_updated',
          'provider_updated',
          'key_created',
          'identity_created',
          'user_disabled',
        ])
          expect(log).toContain(kind);
        expect(log).toContain(adminEmail);
        expect(log).not.toContain(secret);
        expect(log).not.toContain(github.clientSecret);
        await page.getByLabel('Kind').selectOption('user_disabled');
        await page.getByRole('button', { name: 'Filter' }).click();
        expect(await page.locator('tbody tr').count()).toBe(1);
        expect(cspErrors).toEqual([]);
      } finally {
        await context.close();
      }
    }, 60_000);

    it('a tenant-bound admin gets 404 on another tenant; a cross-site form with the cookie is refused', async () => {
      const other = await app.tenant();
      made.otherTenantId = other.tenant.id;
      const boundEmail = email('bound');
      await createAdmin(
        { db: app.ctx.database.db, hasher: app.ctx.hasher },
        {
          email: boundEmail,
          password: ADMIN_PASSWORD,
          superuser: false,
          tenantIds: [made.tenantId],
        },
      );
      const context = await browser.newContext();
      const page = await context.newPage();
      const attacker = await startAttacker(`${app.url}/admin/tenants/${made.tenantId}/branding`);
      try {
        await signIn(page, boundEmail);
        expect(await page.locator('tbody tr').count()).toBe(1);
        const refused = await page.goto(`${app.url}/admin/tenants/${other.tenant.id}/keys`);
        expect(refused?.status()).toBe(404);
        expect(await h1(page)).toBe('Not found');
        expect((await page.goto(`${app.url}/admin/tenants/${made.tenantId}/keys`))?.status()).toBe(
          200,
        );

        await page.goto(attacker.url);
        const [answer] = await Promise.all([
          page.waitForResponse((r) => r.url().startsWith(`${app.url}/admin/`)),
          page.getByRole('button', { name: 'Claim' }).click(),
        ]);
        expect([303, 403]).toContain(answer.status());
        const tenant = await app.ctx.database.db
          .selectFrom('tenants')
          .select('name')
          .where('id', '=', made.tenantId)
          .executeTakeFirstOrThrow();
        expect(tenant.name).toBe('Journey Branded');
        // The admin is still signed in: the refusal changed nothing.
        expect((await page.goto(`${app.url}/admin/tenants/${made.tenantId}`))?.status()).toBe(200);
      } finally {
        await context.close();
        await attacker.close();
      }
    }, 30_000);

    it('API Keys: a publishable key made in the page; the last one revoked only after its own page says what stops', async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      const t = await app.tenant({ plan: 'free' });
      made.keysTenantId = t.tenant.id;
      const context = await browser.newContext();
      const page = await context.newPage();
      const dialogs: string[] = [];
      page.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.accept();
      });
      const keys = `${app.url}/admin/tenants/${t.tenant.id}/keys`;
      const publishable = () =>
        page.locator('section', { has: page.locator('h2#publishable-keys') });
      try {
        await signIn(page);
        await page.goto(keys);
        expect(await page.locator('h2').allTextContents()).toEqual([
          'Publishable keys',
          'Secret keys',
        ]);
        expect(await publishable().textContent()).toContain(t.publishableKey);

        // A second publishable key, from the admin area.
        await page
          .getByRole('form', { name: 'Create a publishable key' })
          .getByLabel('Name')
          .fill('docs site');
        await page.getByRole('button', { name: 'Create publishable key' }).click();
        await expect
          .poll(() => page.textContent('[role=status]'))
          .toContain('A new publishable key is created');
        expect(await publishable().locator('tbody tr').count()).toBe(2);

        // Not the last one: the dialog names it and says the other keeps working.
        await publishable()
          .locator('tbody tr')
          .first()
          .getByRole('button', { name: 'Revoke' })
          .click();
        await expect.poll(() => page.textContent('[role=status]')).toBe('The key is revoked.');
        expect(dialogs).toHaveLength(1);
        expect(dialogs[0]).toMatch(/^Revoke publishable key pk_test_\w{4}…\w{4}\?/);
        expect(dialogs[0]).toContain('your other live publishable key keeps working');

        // The last one: its own page says what stops; "Keep the key" keeps it.
        await publishable().getByRole('button', { name: 'Revoke' }).click();
        await expect.poll(() => h1(page)).toBe('Revoke the last publishable key?');
        expect(dialogs).toHaveLength(1);
        const warning = (await page.textContent('[role=alert]')) as string;
        expect(warning).toContain('hosted sign-in page links with pk=');
        expect(warning).toContain('the script tag (latchkey.js) and React apps');
        await page.screenshot({
          path: join(ARTIFACTS, 'admin-revoke-last-publishable.png'),
          fullPage: true,
        });
        await page.setViewportSize({ width: 390, height: 844 });
        await page.screenshot({
          path: join(ARTIFACTS, 'admin-revoke-last-publishable-phone.png'),
          fullPage: true,
        });
        await page.setViewportSize({ width: 1280, height: 800 });
        await page.getByRole('link', { name: 'Keep the key' }).click();
        await expect.poll(() => h1(page)).toBe('API Keys');
        const live = await app.ctx.database.db
          .selectFrom('api_keys')
          .select('id')
          .where('tenant_id', '=', t.tenant.id)
          .where('kind', '=', 'publishable')
          .where('revoked_at', 'is', null)
          .execute();
        expect(live).toHaveLength(1);

        // Revoked anyway: the page says nothing can sign in, and how to mend it.
        await publishable().getByRole('button', { name: 'Revoke' }).click();
        await page.getByRole('button', { name: 'Revoke it anyway' }).click();
        await expect.poll(() => page.textContent('[role=status]')).toBe('The key is revoked.');
        expect(await page.textContent('[role=alert]')).toContain(
          'This tenant has no live publishable key',
        );
        // A secret key's dialog names the key and what stops.
        await page
          .locator('section', { has: page.locator('h2#secret-keys') })
          .getByRole('button', { name: 'Revoke' })
          .click();
        await expect.poll(() => dialogs.length).toBe(2);
        expect(dialogs[1]).toMatch(
          /^Revoke secret key sk_test_\w{4}…\w{4}\? Servers that call the API with it are refused \(401\) at once\.$/,
        );
      } finally {
        await context.close();
      }
    }, 60_000);

    it.skipIf(dialect !== 'sqlite')(
      'every page passes axe-core and is screenshotted on desktop and phone',
      async () => {
        mkdirSync(ARTIFACTS, { recursive: true });
        const axePath = join(
          dirname(createRequire(import.meta.url).resolve('axe-core')),
          'axe.min.js',
        );
        const axe = readFileSync(axePath, 'utf8');
        const t = `${app.url}/admin/tenants/${made.tenantId}`;
        const pages: [string, string][] = [
          ['tenants', `${app.url}/admin/tenants`],
          ['tenant', t],
          ['branding', `${t}/branding`],
          ['social-login', `${t}/social`],
          ['social-test-result', made.testResultUrl],
          ['api-keys', `${t}/keys`],
          ['api-keys-none-publishable', `${app.url}/admin/tenants/${made.keysTenantId}/keys`],
          ['tenant-free-plan', `${app.url}/admin/tenants/${made.keysTenantId}`],
          ['users', `${t}/users`],
          ['users-search', `${t}/users?q=octo`],
          ['users-search-none', `${t}/users?q=nobody`],
          ['user', `${t}/users/${made.userId}`],
          ['tenant-other', `${app.url}/admin/tenants/${made.otherTenantId}`],
          ['audit-log', `${app.url}/admin/audit`],
          ['outbox', `${app.url}/admin/outbox`],
          ['not-found', `${app.url}/admin/tenants/00000000-0000-4000-8000-000000000000`],
        ];
        // A mail in the dev outbox, so that its page shows one.
        await app.ctx.mailer.send({
          tenantId: made.tenantId,
          to: email('reader'),
          subject: 'Reset your password',
          text: `Someone asked to reset your password. Open this link within an hour:\n${app.url}/reset-password?token=example-token-for-the-screenshot\n\nIf it was not you, ignore this mail.`,
        });
        const context = await browser.newContext({ bypassCSP: true });
        const page = await context.newPage();
        try {
          await page.goto(`${app.url}/admin/sign-in`);
          const found = await seriousViolations(page, [['sign-in', () => Promise.resolve()]], axe);
          await page.screenshot({ path: join(ARTIFACTS, 'admin-sign-in.png'), fullPage: true });
          await page.setViewportSize({ width: 390, height: 844 });
          await page.screenshot({
            path: join(ARTIFACTS, 'admin-sign-in-phone.png'),
            fullPage: true,
          });
          await page.setViewportSize({ width: 1280, height: 800 });
          await signIn(page);
          found.push(
            ...(await seriousViolations(
              page,
              pages.map(([name, url]) => [name, () => page.goto(url)]),
              axe,
            )),
          );
          for (const [width, height, suffix] of [
            [1280, 800, ''],
            [390, 844, '-phone'],
          ] as const) {
            await page.setViewportSize({ width, height });
            for (const [name, url] of pages) {
              await page.goto(url);
              await page.screenshot({
                path: join(ARTIFACTS, `admin-${name}${suffix}.png`),
                fullPage: true,
              });
              // Usable at phone width: nothing wider than the screen but the scrollable tables.
              if (suffix) {
                const overflow = await page.evaluate<number>(
                  'document.documentElement.scrollWidth - window.innerWidth',
                );
                expect(overflow, `${name} scrolls sideways`).toBeLessThanOrEqual(0);
              }
            }
          }
          if (found.length) console.error(found.join('\n'));
          expect(found).toEqual([]);
        } finally {
          await context.close();
        }
      },
      90_000,
    );
  });
}
