/**
 * The operator's side of second factors (docs/design.md §13) in a real Chromium against the
 * real server, on SQLite and PostgreSQL: the Security section chosen and saved with the
 * mouse, a lost authenticator app reset from the user's page through the confirmation, and
 * axe-core and screenshots (desktop and phone) of both pages.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin } from '../src/modules/admin/index.js';
import {
  claimTotpStep,
  listFactors,
  matchTotp,
  replaceRecoveryCodes,
  startTotp,
} from '../src/modules/mfa/index.js';
import { getTenant } from '../src/modules/tenants/index.js';
import { getUser } from '../src/modules/users/index.js';
import { ADMIN_PASSWORD } from './admin-support.js';
import { HAVE_CHROMIUM, launchChromium, seriousViolations } from './browser.js';
import {
  DIALECTS,
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ARTIFACTS = join(ROOT, 'test-artifacts');

for (const dialect of DIALECTS) {
  describe.skipIf(!HAVE_CHROMIUM)(
    `admin Security and second factors in Chromium (${dialect})`,
    () => {
      let app: TestApp;
      let browser: Browser;
      let a: TestTenant;
      const adminEmail = email('security');

      beforeAll(async () => {
        [app, browser] = await Promise.all([startApp(dialect), launchChromium()]);
        a = await app.tenant();
        await createAdmin(
          { db: app.ctx.database.db, hasher: app.ctx.hasher },
          { email: adminEmail, password: ADMIN_PASSWORD, superuser: true, tenantIds: [] },
        );
      }, 60_000);
      afterAll(async () => {
        await browser?.close();
        await app?.dispose();
      });

      /** A user with a confirmed authenticator app (codes from otplib) and recovery codes. */
      async function userWithFactors(): Promise<{ userId: string; appId: string }> {
        const db = app.ctx.database.db;
        const up = await postJson(app, '/v1/auth/sign-up', a.secretKey, {
          email: email('phone-lost'),
          password: 'correct horse battery staple',
        });
        const { userId } = await json(up);
        const deps = { db, box: app.ctx.box };
        const tenant = await getTenant(db, a.tenant.id);
        const enrolment = await startTotp(deps, tenant, await getUser(db, a.tenant.id, userId));
        const match = await matchTotp(
          deps,
          a.tenant.id,
          userId,
          await generate({ secret: enrolment.secret }),
          enrolment.id,
        );
        if (!match || !(await claimTotpStep(db, match)))
          throw new Error('the app was not confirmed');
        await replaceRecoveryCodes(db, a.tenant.id, userId);
        return { userId, appId: enrolment.id };
      }

      async function signIn(page: Page) {
        await page.goto(`${app.url}/admin/sign-in`);
        await page.getByLabel('E-mail address').fill(adminEmail);
        await page.getByLabel('Password').fill(ADMIN_PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${app.url}/admin/tenants`);
      }

      it('an operator requires a second factor and turns passkeys off in Security, then resets a lost app', async () => {
        const { userId, appId } = await userWithFactors();
        const context = await browser.newContext();
        const page = await context.newPage();
        const problems: string[] = [];
        page.on('pageerror', (error) => problems.push(error.message));
        try {
          await signIn(page);
          await page.goto(`${app.url}/admin/tenants/${a.tenant.id}`);
          await page
            .getByRole('navigation', { name: 'Tenant' })
            .getByRole('link', { name: 'Security' })
            .click();
          expect(await page.locator('h1').textContent()).toBe('Security');
          const group = page.getByRole('group', { name: 'Second factors' });
          expect(await group.getByRole('radio', { name: 'Optional' }).isChecked()).toBe(true);
          expect(await page.getByRole('checkbox', { name: 'Passkeys' }).isChecked()).toBe(true);

          await group.getByRole('radio', { name: 'Required' }).check();
          await page.getByRole('checkbox', { name: 'Passkeys' }).uncheck();
          await page.getByRole('button', { name: 'Save security' }).click();
          await page.waitForURL(/\/security\?done=saved$/);
          expect(await page.getByRole('status').textContent()).toBe('Saved.');
          expect(await group.getByRole('radio', { name: 'Required' }).isChecked()).toBe(true);
          expect(await page.getByRole('checkbox', { name: 'Passkeys' }).isChecked()).toBe(false);
          expect(await getTenant(app.ctx.database.db, a.tenant.id)).toMatchObject({
            mfaPolicy: 'required',
            passkeysEnabled: false,
          });

          await page.goto(`${app.url}/admin/tenants/${a.tenant.id}/users/${userId}`);
          const factors = page.getByRole('region', { name: 'Second factors' });
          const appRow = factors.getByRole('row').filter({ hasText: 'Authenticator app' });
          const codesRow = factors.getByRole('row').filter({ hasText: 'Recovery codes' });
          expect(await codesRow.getByRole('cell').allTextContents()).toEqual(
            expect.arrayContaining(['recovery_code', 'Recovery codes', 'yes', '10']),
          );
          // Dismissing the confirmation removes nothing.
          const dialogs: string[] = [];
          page.once('dialog', (d) => {
            dialogs.push(d.message());
            void d.dismiss();
          });
          await codesRow.getByRole('button', { name: 'Reset' }).click();
          expect(dialogs).toEqual([
            "Delete this user's recovery codes? None of them works any more.",
          ]);
          expect(await listFactors(app.ctx.database.db, a.tenant.id, userId)).toHaveLength(2);

          page.once('dialog', (d) => {
            dialogs.push(d.message());
            void d.accept();
          });
          await appRow.getByRole('button', { name: 'Reset' }).click();
          await page.waitForURL(/\?done=factor-reset$/);
          expect(dialogs[1]).toBe(
            'Reset this authenticator app? The user can no longer sign in with its codes.',
          );
          expect(await page.getByRole('status').textContent()).toContain('The factor is removed.');
          expect(
            await factors.getByRole('row').filter({ hasText: 'Authenticator app' }).count(),
          ).toBe(0);
          expect(
            (await listFactors(app.ctx.database.db, a.tenant.id, userId)).map((f) => f.id),
          ).toEqual(['recovery_code']);
          expect(appId).not.toBe('recovery_code');

          await page.goto(`${app.url}/admin/audit?tenant=${a.tenant.id}&kind=factor_reset`);
          expect(await page.locator('main').textContent()).toContain(adminEmail);
          expect(problems).toEqual([]);
        } finally {
          await context.close();
        }
      }, 60_000);

      it('Security and a user with factors pass axe-core, are screenshotted on desktop and phone, and fit a phone', async () => {
        const { userId } = await userWithFactors();
        mkdirSync(ARTIFACTS, { recursive: true });
        const axe = readFileSync(
          join(dirname(createRequire(import.meta.url).resolve('axe-core')), 'axe.min.js'),
          'utf8',
        );
        const t = `${app.url}/admin/tenants/${a.tenant.id}`;
        const pages: [string, string][] = [
          ['security', `${t}/security`],
          ['user-factors', `${t}/users/${userId}`],
        ];
        const context = await browser.newContext({ bypassCSP: true });
        const page = await context.newPage();
        try {
          await signIn(page);
          const found = await seriousViolations(
            page,
            pages.map(([name, url]) => [name, () => page.goto(url)]),
            axe,
          );
          // The page of a refused save, with its alert.
          await page.goto(`${t}/security`);
          await page.evaluate(`document.querySelector('#mfa-off').value = 'sometimes'`);
          await page.getByRole('radio', { name: 'Off' }).check();
          await page.getByRole('button', { name: 'Save security' }).click();
          await page.getByRole('alert').waitFor();
          expect(await page.getByRole('alert').textContent()).toContain(
            'Choose Off, Optional or Required for Second factors.',
          );
          found.push(
            ...(await seriousViolations(page, [['security-refused', async () => {}]], axe)),
          );
          if (dialect === 'sqlite')
            await page.screenshot({
              path: join(ARTIFACTS, 'admin-security-refused.png'),
              fullPage: true,
            });

          for (const [width, height, suffix] of [
            [1280, 800, ''],
            [390, 844, '-phone'],
          ] as const) {
            await page.setViewportSize({ width, height });
            for (const [name, url] of pages) {
              await page.goto(url);
              if (dialect === 'sqlite')
                await page.screenshot({
                  path: join(ARTIFACTS, `admin-${name}${suffix}.png`),
                  fullPage: true,
                });
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
      }, 90_000);
    },
  );
}
