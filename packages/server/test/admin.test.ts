/**
 * The admin area's rules over real HTTP on every database: accounts and the CLI, sign-in,
 * tenant-bound access (404), CSRF and same-origin checks, re-authentication, write-only
 * secrets, the audit log, and the Test sign-in preview held to the real linking policy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/index.js';
import { previewProfile, retryingRace, userForProfileIn } from '../src/modules/social/index.js';
import { transact } from '../src/storage/index.js';
import { ADMIN_PASSWORD, AdminClient, signedInAdmin } from './admin-support.js';
import {
  DIALECTS,
  email,
  json,
  postJson,
  SECRET,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const GITHUB_SECRET = 'gh-secret-value-that-must-never-show';

for (const dialect of DIALECTS) {
  describe(`admin area (${dialect})`, () => {
    let app: TestApp;
    let a: TestTenant;
    let b: TestTenant;
    let root: AdminClient;
    let bound: AdminClient;
    const rootEmail = email('root');

    beforeAll(async () => {
      app = await startApp(dialect);
      [a, b] = [await app.tenant(), await app.tenant()];
      root = await signedInAdmin(app, rootEmail, { superuser: true });
      bound = await signedInAdmin(app, email('bound'), { tenantIds: [a.tenant.id] });
    }, 60_000);
    afterAll(() => app?.dispose());

    const auditKinds = async (tenantId: string) =>
      (
        await app.ctx.database.db
          .selectFrom('audit_events')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .execute()
      ).map((r) => ({ kind: r.kind, actor: r.actor, detail: r.detail }));

    it('signs in with an HttpOnly SameSite=Strict cookie; a wrong password is refused; signed out goes to sign-in', async () => {
      const anonymous = new AdminClient(app);
      const page = await anonymous.get('/admin/tenants');
      expect(page.status).toBe(303);
      expect(page.res.headers.get('location')).toBe('/admin/sign-in?next=%2Fadmin%2Ftenants');
      const wrong = await anonymous.signIn(rootEmail, 'not the password');
      expect(wrong.status).toBe(401);
      expect(wrong.html).toContain('The e-mail address or the password is wrong.');
      const ok = await anonymous.signIn(rootEmail);
      expect(ok.status).toBe(303);
      const cookie = ok.res.headers.getSetCookie().find((c) => c.startsWith('latchkey_admin='));
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/SameSite=Strict/);
      const tenants = await anonymous.get('/admin/tenants');
      expect(tenants.status).toBe(200);
      expect(tenants.html).toContain('<h1>Tenants</h1>');
      const out = await anonymous.post('/admin/sign-out', {});
      expect(out.location).toBe('/admin/sign-in');
      expect((await anonymous.get('/admin/tenants')).status).toBe(303);
    });

    it('a tenant-bound admin sees only its tenants; every page of another tenant answers 404', async () => {
      const list = await bound.get('/admin/tenants');
      expect(list.html).toContain(a.tenant.name);
      expect(list.html).not.toContain(b.tenant.name);
      expect(list.html).not.toContain('Create a tenant');
      for (const section of ['', '/branding', '/social', '/keys', '/users']) {
        expect((await bound.get(`/admin/tenants/${b.tenant.id}${section}`)).status).toBe(404);
        expect((await bound.get(`/admin/tenants/${a.tenant.id}${section}`)).status).toBe(200);
      }
      const post = await bound.post(`/admin/tenants/${b.tenant.id}/branding`, { name: 'Hijacked' });
      expect(post.status).toBe(404);
      expect(
        (
          await bound.post('/admin/tenants', {
            name: 'Mine',
            environment: 'development',
            plan: 'free',
          })
        ).status,
      ).toBe(404);
      const audit = await bound.get(`/admin/audit?tenant=${b.tenant.id}`);
      expect(audit.html).not.toContain(b.tenant.id);
    });

    it('refuses a change without the CSRF token, or from another origin', async () => {
      const before = (await root.get(`/admin/tenants/${a.tenant.id}/branding`)).html;
      expect(before).toContain('Branding');
      const noToken = await root.post(`/admin/tenants/${a.tenant.id}/branding`, {
        name: 'X',
        _csrf: '',
      });
      expect(noToken.status).toBe(403);
      const crossSite = await root.post(
        `/admin/tenants/${a.tenant.id}/branding`,
        { name: 'X' },
        { origin: 'https://evil.example' },
      );
      expect(crossSite.status).toBe(403);
      expect(crossSite.html).toContain('This form came from another site');
      const page = await root.get(`/admin/tenants/${a.tenant.id}/branding`);
      expect(page.html).not.toContain('value="X"');
    });

    it('creates a tenant and saves its settings, each written to the audit log with the admin e-mail', async () => {
      await root.get('/admin/tenants');
      const bad = await root.post('/admin/tenants', {
        name: '',
        environment: 'development',
        plan: 'free',
      });
      expect(bad.status).toBe(422);
      const made = await root.post('/admin/tenants', {
        name: 'Acme prod',
        environment: 'production',
        plan: 'pro',
      });
      expect(made.status).toBe(303);
      const id = /\/admin\/tenants\/([0-9a-f-]{36})/.exec(made.location ?? '')?.[1] as string;
      const page = await root.get(`/admin/tenants/${id}`);
      expect(page.html).toMatch(/pk_live_[A-Za-z0-9]{43}/);
      expect(page.html).not.toMatch(/sk_prod_/);
      const refused = await root.post(`/admin/tenants/${id}`, {
        name: 'Acme prod',
        plan: 'pro',
        allowedOrigins: 'http://localhost:3000',
        accessTokenTtl: '600',
      });
      expect(refused.status).toBe(422);
      expect(refused.html).toContain('http is allowed only on development tenants');
      const saved = await root.post(`/admin/tenants/${id}`, {
        name: 'Acme prod',
        plan: 'enterprise',
        rps: '42',
        rpm: '900',
        allowedOrigins: 'https://app.acme.example\nhttps://admin.acme.example',
        accessTokenTtl: '300',
        requireEmailVerification: 'on',
        passwordEnabled: 'on',
      });
      expect(saved.location).toBe(`/admin/tenants/${id}?done=saved`);
      const shown = (await root.get(`/admin/tenants/${id}`)).html;
      expect(shown).toContain('value="42"');
      expect(shown).toContain('https://admin.acme.example');
      const entries = await auditKinds(id);
      expect(entries.map((e) => e.kind)).toEqual(
        expect.arrayContaining(['tenant_created', 'tenant_updated']),
      );
      expect(entries.every((e) => e.actor === rootEmail)).toBe(true);
    });

    it('asks for the password again before showing a new secret key when the sign-in is older than 10 minutes', async () => {
      const path = `/admin/tenants/${a.tenant.id}/keys`;
      await root.get(path);
      const fresh = await root.post(path, { keyName: 'fresh', 'scope_users:read': 'on' });
      expect(fresh.status).toBe(201);
      const secret = /sk_test_[A-Za-z0-9]{43}/.exec(fresh.html)?.[0] as string;
      expect(secret).toBeDefined();
      // The key works over REST, with exactly its scope.
      expect(
        (await app.request('/v1/users', { headers: { authorization: `Bearer ${secret}` } })).status,
      ).toBe(200);
      expect((await postJson(app, '/api/auth/introspect', secret, { token: 'x' })).status).toBe(
        403,
      );
      // The list shows prefix and last four only.
      const list = (await root.get(path)).html;
      expect(list).not.toContain(secret);
      expect(list).toContain(`${secret.slice(0, 12)}…${secret.slice(-4)}`);

      await app.ctx.database.db
        .updateTable('admin_sessions')
        .set({ authenticated_at: Date.now() - 11 * 60_000 })
        .execute();
      const page = await root.get(path);
      expect(page.html).toContain('Your password');
      const without = await root.post(path, { keyName: 'stale', 'scope_users:read': 'on' });
      expect(without.status).toBe(403);
      expect(without.html).not.toMatch(/sk_test_[A-Za-z0-9]{43}/);
      const wrong = await root.post(path, {
        keyName: 'stale',
        'scope_users:read': 'on',
        reauth_password: 'wrong password',
      });
      expect(wrong.status).toBe(403);
      const right = await root.post(path, {
        keyName: 'stale',
        'scope_users:read': 'on',
        reauth_password: ADMIN_PASSWORD,
      });
      expect(right.status).toBe(201);
      expect(right.html).toMatch(/sk_test_[A-Za-z0-9]{43}/);
      const names = (
        await app.ctx.database.db
          .selectFrom('api_keys')
          .select('name')
          .where('tenant_id', '=', a.tenant.id)
          .execute()
      ).map((k) => k.name);
      expect(names.filter((n) => n === 'stale')).toHaveLength(1);
      const audit = await auditKinds(a.tenant.id);
      expect(JSON.stringify(audit)).not.toContain(secret);
    });

    it('keeps a provider secret write-only: shown as saved, never in a page or the audit log', async () => {
      const path = `/admin/tenants/${b.tenant.id}/social`;
      const page = await root.get(path);
      expect(page.html).toContain(`${app.url}/oauth/github/callback`);
      const saved = await root.post(`${path}/github`, {
        enabled: 'on',
        clientId: 'gh-client',
        clientSecret: GITHUB_SECRET,
      });
      expect(saved.status).toBe(303);
      const after = (await root.get(path)).html;
      expect(after).not.toContain(GITHUB_SECRET);
      expect(after).toContain('Saved. Leave empty to keep it');
      // Saving without a secret keeps it; a stale sign-in may still change non-secret fields.
      await app.ctx.database.db
        .updateTable('admin_sessions')
        .set({ authenticated_at: Date.now() - 11 * 60_000 })
        .execute();
      expect(
        (await root.post(`${path}/github`, { enabled: 'on', clientId: 'gh-client-2' })).status,
      ).toBe(303);
      const stale = await root.post(`${path}/github`, {
        enabled: 'on',
        clientId: 'gh-client-2',
        clientSecret: 'another',
      });
      expect(stale.status).toBe(403);
      const row = await app.ctx.database.db
        .selectFrom('provider_settings')
        .selectAll()
        .where('tenant_id', '=', b.tenant.id)
        .executeTakeFirstOrThrow();
      expect(
        await app.ctx.box.open(
          row.secret_jwe as string,
          'provider-secret',
          `${b.tenant.id}/github`,
        ),
      ).toBe(GITHUB_SECRET);
      const audit = JSON.stringify(await auditKinds(b.tenant.id));
      expect(audit).toContain('provider_updated');
      expect(audit).toContain('replaced');
      expect(audit).not.toContain(GITHUB_SECRET);
      expect(app.logs.text()).not.toContain(GITHUB_SECRET);
    });

    it('user actions call the REST workflows: disable revokes sessions; each is audited', async () => {
      const address = email('someone');
      const signUp = await postJson(app, '/v1/auth/sign-up', a.secretKey, {
        email: address,
        password: 'correct horse battery',
      });
      const { userId } = await json(signUp);
      const signIn = await postJson(app, '/v1/auth/sign-in', a.secretKey, {
        email: address,
        password: 'correct horse battery',
      });
      const { accessToken } = await json(signIn);
      const found = await root.get(
        `/admin/tenants/${a.tenant.id}/users?email=${encodeURIComponent(address.toUpperCase())}`,
      );
      expect(found.html).toContain(`/users/${userId}`);
      const user = await root.get(`/admin/tenants/${a.tenant.id}/users/${userId}`);
      expect(user.html).toContain('Client address');
      const disabled = await root.post(`/admin/tenants/${a.tenant.id}/users/${userId}/disable`, {});
      expect(disabled.location).toContain('done=disabled');
      expect(
        await json(
          await postJson(app, '/api/auth/introspect', a.secretKey, { token: accessToken }),
        ),
      ).toEqual({ active: false });
      await root.post(`/admin/tenants/${a.tenant.id}/users/${userId}/send-password-reset`, {});
      const mail = await app.ctx.database.db
        .selectFrom('mail_outbox')
        .selectAll()
        .where('recipient', '=', address)
        .execute();
      expect(mail).toHaveLength(1);
      const outbox = await root.get('/admin/outbox');
      expect(outbox.html).toMatch(/<a href="http:\/\/127\.0\.0\.1:\d+\/reset-password\?token=/);
      expect((await bound.get('/admin/outbox')).html).not.toContain(b.tenant.name);
      const audit = await root.get(`/admin/audit?tenant=${a.tenant.id}&kind=user_disabled`);
      expect(audit.html).toContain(address);
      expect(audit.html).toContain(rootEmail);
    });

    it('records a burst of failed sign-ins in the audit log', async () => {
      const address = email('victim');
      await postJson(app, '/v1/auth/sign-up', b.secretKey, {
        email: address,
        password: 'correct horse battery',
      });
      for (let i = 0; i < app.ctx.signInPolicy.account.slowAfter; i++) {
        await postJson(app, '/v1/auth/sign-in', b.secretKey, {
          email: address,
          password: 'wrong guess',
        });
      }
      const page = await root.get(`/admin/audit?kind=sign_in_failures&tenant=${b.tenant.id}`);
      expect(page.html).toContain(address);
    }, 30_000);

    it('the Test sign-in preview gives the answer the linking policy gives', async () => {
      const db = app.ctx.database.db;
      const tenant = a.tenant;
      const profile = (subject: string, address: string | null, verified = true) => ({
        issuer: 'https://github.com',
        subject,
        email: address,
        emailVerified: verified,
        name: null,
        picture: null,
      });
      const avatar = 'https://avatars.githubusercontent.com/u/1?v=4';
      const newcomer = { ...profile('1', email('new')), picture: avatar };
      expect((await previewProfile(db, tenant, 'github', newcomer)).action).toBe('create');
      const created = await retryingRace(() =>
        transact(db, app.ctx.bus, (tx) => userForProfileIn(tx, tenant, 'github', newcomer)),
      );
      // The user's page lists the identity's picture URL as text (the CSP loads no remote image).
      const page = await root.get(`/admin/tenants/${tenant.id}/users/${created.id}`);
      expect(page.html).toContain(`<td data-label="Picture"><code>${avatar}</code></td>`);
      expect(await previewProfile(db, tenant, 'github', newcomer)).toEqual({
        action: 'sign_in',
        userId: created.id,
        email: created.email,
      });
      const unverified = email('pw');
      await postJson(app, '/v1/auth/sign-up', a.secretKey, {
        email: unverified,
        password: 'correct horse battery',
      });
      const joining = profile('2', unverified);
      expect((await previewProfile(db, tenant, 'github', joining)).action).toBe('refuse');
      await expect(
        transact(db, app.ctx.bus, (tx) => userForProfileIn(tx, tenant, 'github', joining)),
      ).rejects.toThrow();
      expect((await previewProfile(db, tenant, 'github', profile('3', null))).action).toBe(
        'refuse',
      );
    });
  });
}

describe('latchkey admin (CLI)', () => {
  it('creates with a generated password printed once, lists, resets and deletes', async () => {
    const app = await startApp('sqlite');
    const env = {
      DATABASE_URL: app.ctx.config.databaseUrl,
      LATCHKEY_SECRET: SECRET,
      PUBLIC_URL: app.url,
    };
    const lines: string[] = [];
    const output = {
      out: (l: string) => lines.push(l),
      err: (l: string) => lines.push(`ERR ${l}`),
    };
    try {
      expect(await runCli(['admin', 'create', '--email', 'ops@example.com'], env, output)).toBe(2);
      const t = await app.tenant();
      expect(
        await runCli(
          ['admin', 'create', '--email', 'ops@example.com', '--tenant', t.tenant.id],
          env,
          output,
        ),
      ).toBe(0);
      const password = /password\s+(\S+)\s+\(shown only now\)/.exec(
        lines.join('\n'),
      )?.[1] as string;
      expect(password).toHaveLength(24);
      const client = new AdminClient(app);
      expect((await client.signIn('ops@example.com', password)).status).toBe(303);
      lines.length = 0;
      expect(await runCli(['admin', 'list'], env, output)).toBe(0);
      expect(lines.join('\n')).toContain(`ops@example.com  tenants: ${t.tenant.id}`);
      expect(lines.join('\n')).not.toContain(password);
      expect(
        await runCli(
          [
            'admin',
            'reset-password',
            '--email',
            'ops@example.com',
            '--password',
            'a brand new password',
          ],
          env,
          output,
        ),
      ).toBe(0);
      // The reset ends the admin's sessions.
      expect((await client.get('/admin/tenants')).status).toBe(303);
      expect((await client.signIn('ops@example.com', 'a brand new password')).status).toBe(303);
      expect(await runCli(['admin', 'delete', '--email', 'ops@example.com'], env, output)).toBe(0);
      expect((await client.get('/admin/tenants')).status).toBe(303);
    } finally {
      await app.dispose();
    }
  });
});
