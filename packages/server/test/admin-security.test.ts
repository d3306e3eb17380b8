/**
 * The operator's side of second factors (docs/design.md §13) over real HTTP on every
 * database: the admin Security section (policy and passkey switch, refused values change
 * nothing, audited), and a user's factors on their Users page with an audited Reset. The
 * authenticator app is enrolled through modules/mfa with codes from otplib, an
 * independent TOTP implementation.
 */
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  claimTotpStep,
  listFactors,
  matchTotp,
  replaceRecoveryCodes,
  startTotp,
} from '../src/modules/mfa/index.js';
import { getTenant, updateTenant } from '../src/modules/tenants/index.js';
import { getUser } from '../src/modules/users/index.js';
import { type AdminClient, signedInAdmin } from './admin-support.js';
import {
  DIALECTS,
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const PASSWORD = 'correct horse battery staple';

for (const dialect of DIALECTS) {
  describe(`admin Security and users' second factors (${dialect})`, () => {
    let app: TestApp;
    let a: TestTenant;
    let b: TestTenant;
    let root: AdminClient;
    let bound: AdminClient;
    const rootEmail = email('root');
    const boundEmail = email('bound');

    beforeAll(async () => {
      app = await startApp(dialect);
      [a, b] = [await app.tenant(), await app.tenant()];
      root = await signedInAdmin(app, rootEmail, { superuser: true });
      bound = await signedInAdmin(app, boundEmail, { tenantIds: [a.tenant.id] });
    }, 60_000);
    afterAll(() => app?.dispose());

    const db = () => app.ctx.database.db;
    const tenantRow = (id: string) =>
      db().selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const audit = (tenantId: string, kind: string) =>
      db()
        .selectFrom('audit_events')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('kind', '=', kind)
        .execute();
    const security = (id: string) => `/admin/tenants/${id}/security`;

    /** A user of `tenant` with a confirmed authenticator app, and its secret for otplib. */
    async function userWithApp(tenant: TestTenant) {
      const address = email('mfa');
      const up = await postJson(app, '/v1/auth/sign-up', tenant.secretKey, {
        email: address,
        password: PASSWORD,
      });
      expect(up.status).toBe(201);
      const { userId } = await json(up);
      const user = await getUser(db(), tenant.tenant.id, userId);
      const deps = { db: db(), box: app.ctx.box };
      const current = await getTenant(db(), tenant.tenant.id);
      const enrolment = await startTotp(deps, current, user);
      const code = await generate({ secret: enrolment.secret });
      const match = await matchTotp(deps, tenant.tenant.id, userId, code, enrolment.id);
      expect(match).toBeDefined();
      expect(await claimTotpStep(db(), match as NonNullable<typeof match>)).toBe(true);
      return { address, userId: userId as string, enrolment };
    }

    it('Security is in the tenant navigation and shows the saved policy and switch', async () => {
      const page = await root.get(security(a.tenant.id));
      expect(page.status).toBe(200);
      expect(page.html).toContain('<h1>Security</h1>');
      expect(page.html).toContain(
        `<a href="/admin/tenants/${a.tenant.id}/security" aria-current="page">Security</a>`,
      );
      expect(page.html).toContain('<legend>Second factors</legend>');
      // The default: optional, passkeys on.
      expect(page.html).toMatch(
        /<input type="radio" id="mfa-optional" name="mfaPolicy" value="optional" checked/,
      );
      expect(page.html).not.toMatch(/value="off" checked|value="required" checked/);
      expect(page.html).toMatch(/name="passkeysEnabled" value="on" checked/);
      for (const hint of [
        'No second factors',
        'Users may add an authenticator app',
        'Every user sets up a second factor at their next sign-in, before getting a token.',
      ])
        expect(page.html).toContain(hint);
      // Reached from the other sections too.
      expect((await root.get(`/admin/tenants/${a.tenant.id}/branding`)).html).toContain(
        `href="/admin/tenants/${a.tenant.id}/security">Security</a>`,
      );
    });

    it('saves the policy and the switch; the tenant reads them back; the change is audited with the admin e-mail', async () => {
      await root.get(security(a.tenant.id));
      const saved = await root.post(security(a.tenant.id), { mfaPolicy: 'required' });
      expect(saved.status).toBe(303);
      expect(saved.location).toBe(`${security(a.tenant.id)}?done=saved`);
      expect(await getTenant(db(), a.tenant.id)).toMatchObject({
        mfaPolicy: 'required',
        passkeysEnabled: false,
      });
      const page = await root.get(saved.location as string);
      expect(page.html).toContain('Saved.');
      expect(page.html).toMatch(/value="required" checked/);
      expect(page.html).not.toMatch(/name="passkeysEnabled" value="on" checked/);
      const [entry, ...none] = await audit(a.tenant.id, 'security_updated');
      expect(none).toEqual([]);
      expect(entry?.actor).toBe(rootEmail);
      expect(JSON.parse(entry?.detail ?? '')).toEqual({
        mfaPolicy: { from: 'optional', to: 'required' },
        passkeysEnabled: { from: true, to: false },
      });

      // A tenant-bound admin of this tenant may change it too.
      await bound.get(security(a.tenant.id));
      const back = await bound.post(security(a.tenant.id), {
        mfaPolicy: 'off',
        passkeysEnabled: 'on',
      });
      expect(back.status).toBe(303);
      expect(await getTenant(db(), a.tenant.id)).toMatchObject({
        mfaPolicy: 'off',
        passkeysEnabled: true,
      });
      const entries = await audit(a.tenant.id, 'security_updated');
      expect(entries.map((e) => e.actor).sort()).toEqual([rootEmail, boundEmail].sort());
      const log = await root.get(`/admin/audit?tenant=${a.tenant.id}&kind=security_updated`);
      expect(log.html).toContain(boundEmail);
    });

    it('refuses a policy other than off, optional or required, saying so, and changes nothing', async () => {
      const before = await tenantRow(a.tenant.id);
      const audited = (await audit(a.tenant.id, 'security_updated')).length;
      const refusals: Record<string, string>[] = [
        { mfaPolicy: 'always', passkeysEnabled: 'on' },
        { mfaPolicy: 'OPTIONAL' },
        { mfaPolicy: '' },
        {},
        { mfaPolicy: 'x'.repeat(5000) },
      ];
      for (const fields of refusals) {
        await root.get(security(a.tenant.id));
        const refused = await root.post(security(a.tenant.id), fields);
        expect(refused.status, JSON.stringify(fields).slice(0, 60)).toBe(422);
        expect(refused.html).toContain('Choose Off, Optional or Required for Second factors.');
        expect(refused.html).toContain('role="alert"');
        // None of the three is shown chosen: the refused value is not the saved one.
        expect(refused.html).not.toMatch(/name="mfaPolicy" value="\w+" checked/);
      }
      expect(await tenantRow(a.tenant.id)).toEqual(before);
      expect(await audit(a.tenant.id, 'security_updated')).toHaveLength(audited);
    });

    it("another tenant's Security answers 404 to a tenant-bound admin; a change needs the CSRF token", async () => {
      const before = await tenantRow(b.tenant.id);
      expect((await bound.get(security(b.tenant.id))).status).toBe(404);
      await bound.get(security(a.tenant.id));
      expect(
        (await bound.post(security(b.tenant.id), { mfaPolicy: 'off', passkeysEnabled: '' })).status,
      ).toBe(404);
      await root.get(security(b.tenant.id));
      const noToken = await root.post(security(b.tenant.id), { mfaPolicy: 'off', _csrf: '' });
      expect(noToken.status).toBe(403);
      expect(await tenantRow(b.tenant.id)).toEqual(before);
      expect(await audit(b.tenant.id, 'security_updated')).toHaveLength(0);
    });

    it("lists a user's factors without secrets, and Reset removes one even when it is the last under required, audited", async () => {
      const { address, userId, enrolment } = await userWithApp(b);
      const codes = await replaceRecoveryCodes(db(), b.tenant.id, userId);
      const userPath = `/admin/tenants/${b.tenant.id}/users/${userId}`;

      const page = await root.get(userPath);
      expect(page.status).toBe(200);
      expect(page.html).toContain('<h2>Second factors</h2>');
      expect(page.html).toContain("This tenant's policy: optional");
      const region = page.html.slice(page.html.indexOf('aria-label="Second factors"'));
      const rows = region.slice(0, region.indexOf('</table>'));
      expect(rows).toContain('<td data-label="Type"><code class="kind">totp</code></td>');
      expect(rows).toContain('<td data-label="Name">Authenticator app</td>');
      expect(rows).toContain('<td data-label="Confirmed">yes</td>');
      expect(rows).toContain('<td data-label="Type"><code class="kind">recovery_code</code></td>');
      expect(rows).toContain('<td data-label="Codes left">10</td>');
      expect(rows).toContain(`action="${userPath}/factors/${enrolment.id}/reset"`);
      expect(rows).toContain(`action="${userPath}/factors/recovery_code/reset"`);
      expect(rows).toContain('data-confirm="Reset this authenticator app?');
      // Never a secret: not the app's, not its sealed form, not a recovery code.
      const sealed = await db()
        .selectFrom('totp_factors')
        .select('secret_jwe')
        .where('id', '=', enrolment.id)
        .executeTakeFirstOrThrow();
      for (const secret of [enrolment.secret, enrolment.otpauthUri, sealed.secret_jwe, ...codes])
        expect(page.html).not.toContain(secret);

      // Under required, with the app the user's only factor: the user is asked for a code.
      await updateTenant({ db: db(), bus: app.ctx.bus }, b.tenant.id, { mfaPolicy: 'required' });
      const credentials = { email: address, password: PASSWORD };
      const asked = await postJson(app, '/v1/auth/sign-in', b.secretKey, credentials);
      expect((await json(asked)).code).toBe('mfa_required');

      const reset = await root.post(`${userPath}/factors/${enrolment.id}/reset`, {});
      expect(reset.status).toBe(303);
      expect(reset.location).toBe(`${userPath}?done=factor-reset`);
      expect((await listFactors(db(), b.tenant.id, userId)).map((f) => f.type)).toEqual([
        'recovery_code',
      ]);
      const after = await root.get(reset.location as string);
      expect(after.html).toContain('The factor is removed.');
      expect(after.html).not.toContain(`/factors/${enrolment.id}/reset`);
      // Recovery codes alone are no factor: the user now sets a new one up.
      const setup = await postJson(app, '/v1/auth/sign-in', b.secretKey, credentials);
      expect((await json(setup)).code).toBe('mfa_setup_required');

      await root.post(`${userPath}/factors/recovery_code/reset`, {});
      expect(await listFactors(db(), b.tenant.id, userId)).toEqual([]);
      expect((await root.get(userPath)).html).toContain('Second factors: none.');

      const entries = await audit(b.tenant.id, 'factor_reset');
      expect(
        entries
          .map((e) => [e.actor, e.user_id, JSON.parse(e.detail)])
          .sort((x, y) => (x[2].type < y[2].type ? -1 : 1)),
      ).toEqual([
        [rootEmail, userId, { email: address, type: 'recovery_code', factorId: 'recovery_code' }],
        [rootEmail, userId, { email: address, type: 'totp', factorId: enrolment.id }],
      ]);
      const log = await root.get(`/admin/audit?tenant=${b.tenant.id}&kind=factor_reset`);
      expect(log.html).toContain(rootEmail);
      expect(log.html).toContain('type: totp');
    });

    it("refuses to reset an unknown factor, another user's, another tenant's, or without the CSRF token", async () => {
      const owner = await userWithApp(a);
      const other = await userWithApp(a);
      const elsewhere = await userWithApp(b);
      const path = (tenant: TestTenant, userId: string, factorId: string) =>
        `/admin/tenants/${tenant.tenant.id}/users/${userId}/factors/${factorId}/reset`;
      const audited = (await audit(a.tenant.id, 'factor_reset')).length;
      await root.get(`/admin/tenants/${a.tenant.id}/users/${owner.userId}`);
      for (const target of [
        path(a, owner.userId, '00000000-0000-4000-8000-000000000000'),
        path(a, owner.userId, 'not-a-factor'),
        // No recovery codes: nothing to reset.
        path(a, owner.userId, 'recovery_code'),
        // Another user's app, through this user's page.
        path(a, owner.userId, other.enrolment.id),
        // Another tenant's user and app, through this tenant.
        path(a, elsewhere.userId, elsewhere.enrolment.id),
        path(a, owner.userId, elsewhere.enrolment.id),
      ]) {
        const refused = await root.post(target, {});
        expect(refused.status, target).toBe(404);
      }
      // A tenant-bound admin cannot reach another tenant's users.
      await bound.get(`/admin/tenants/${a.tenant.id}/users`);
      expect((await bound.post(path(b, elsewhere.userId, elsewhere.enrolment.id), {})).status).toBe(
        404,
      );
      const noToken = await root.post(path(a, owner.userId, owner.enrolment.id), { _csrf: '' });
      expect(noToken.status).toBe(403);
      for (const u of [owner, other])
        expect((await listFactors(db(), a.tenant.id, u.userId)).map((f) => f.id)).toEqual([
          u.enrolment.id,
        ]);
      expect((await listFactors(db(), b.tenant.id, elsewhere.userId)).map((f) => f.id)).toEqual([
        elsewhere.enrolment.id,
      ]);
      expect(await audit(a.tenant.id, 'factor_reset')).toHaveLength(audited);
      expect(await audit(b.tenant.id, 'factor_reset')).toHaveLength(2);
    });
  });
}
