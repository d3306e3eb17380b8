/**
 * The admin "Applications" section (docs/design.md §12.2, §14) over real HTTP on every
 * database: a tenant's OAuth clients listed with the issuer and discovery URLs, created
 * (a web or m2m app's secret shown once, only its hash stored), edited, rotated with a
 * grace period and deleted after a confirmation; refused input answers the form again
 * with every error and stores nothing; CSRF, re-authentication and tenant-bound access
 * hold; each change is in the audit log with the admin's e-mail, never a secret.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, type AdminClient, signedInAdmin } from './admin-support.js';
import { DIALECTS, email, startApp, type TestApp, type TestTenant } from './support.js';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const SECRET_IN_PAGE = /<code id="new-secret">([0-9A-Za-z]{43})<\/code>/;
/** What a form's textarea holds (its value as the page escaped it). */
const textareaOf = (html: string, name: string) =>
  new RegExp(`name="${name}"[^>]*>([^<]*)</textarea>`).exec(html)?.[1];
const APP_PATH = /^\/admin\/tenants\/[^/]+\/apps\/(app_[0-9A-Za-z]{24})\?done=app-created$/;

for (const dialect of DIALECTS) {
  describe(`admin Applications (${dialect})`, () => {
    let app: TestApp;
    let dev: TestTenant;
    let prod: TestTenant;
    let root: AdminClient;
    let bound: AdminClient;
    const rootEmail = email('apps-root');

    beforeAll(async () => {
      app = await startApp(dialect);
      [dev, prod] = [await app.tenant(), await app.tenant({ environment: 'production' })];
      root = await signedInAdmin(app, rootEmail, { superuser: true });
      bound = await signedInAdmin(app, email('apps-bound'), { tenantIds: [dev.tenant.id] });
    }, 60_000);
    afterAll(() => app?.dispose());

    const db = () => app.ctx.database.db;
    const apps = (tenant: TestTenant) => `/admin/tenants/${tenant.tenant.id}/apps`;
    const appRows = (tenantId: string) =>
      db().selectFrom('apps').selectAll().where('tenant_id', '=', tenantId).orderBy('id').execute();
    const appRow = (id: string) =>
      db().selectFrom('apps').selectAll().where('id', '=', id).executeTakeFirst();
    const audit = (tenantId: string, kind?: string) => {
      let q = db().selectFrom('audit_events').selectAll().where('tenant_id', '=', tenantId);
      if (kind) q = q.where('kind', '=', kind);
      return q.orderBy('created_at').execute();
    };

    /** A web app made through the page: its id and its secret. */
    async function webApp(tenant: TestTenant, name = 'Dashboard') {
      await root.get(apps(tenant));
      const made = await root.post(apps(tenant), {
        name,
        type: 'web',
        redirectUris: 'https://app.example.com/callback',
      });
      expect(made.status).toBe(201);
      const id = /<code id="client-id">(app_[0-9A-Za-z]{24})<\/code>/.exec(made.html)?.[1] ?? '';
      return { id, secret: SECRET_IN_PAGE.exec(made.html)?.[1] ?? '', page: made };
    }

    it('Applications is in the tenant navigation, with the issuer and discovery URLs to copy', async () => {
      const page = await root.get(apps(dev));
      expect(page.status).toBe(200);
      expect(page.html).toContain('<h1>Applications</h1>');
      expect(page.html).toContain(`<a href="${apps(dev)}" aria-current="page">Applications</a>`);
      const issuer = `${app.url}/t/${dev.tenant.id}`;
      expect(page.html).toContain(`<code id="issuer">${issuer}</code>`);
      expect(page.html).toContain(
        `<code id="discovery">${issuer}/.well-known/openid-configuration</code>`,
      );
      expect(page.html).toContain('data-copy="issuer"');
      expect(page.html).toContain('data-copy="discovery"');
      expect(page.html).toContain('Applications: none.');
      for (const label of ['Name', 'Redirect URIs', 'Post-logout redirect URIs'])
        expect(page.html).toContain(`>${label}</label>`);
      // Reached from the other sections.
      expect((await root.get(`/admin/tenants/${dev.tenant.id}/keys`)).html).toContain(
        `<a href="${apps(dev)}">Applications</a>`,
      );
    });

    it('creates a web app: its secret shown once with a copy button, only its hash stored, audited without it', async () => {
      const { id, secret, page } = await webApp(dev);
      expect(id).toMatch(/^app_/);
      expect(secret).toMatch(/^[0-9A-Za-z]{43}$/);
      expect(page.html).toContain('it is shown only this once');
      expect(page.html).toContain('data-copy="new-secret"');
      expect(page.html).toContain('data-copy="client-id"');
      expect(page.res.headers.get('cache-control')).toBe('no-store');
      const row = await appRow(id);
      expect(row).toMatchObject({
        tenant_id: dev.tenant.id,
        name: 'Dashboard',
        type: 'web',
        secret_hash: sha256(secret),
        redirect_uris: '["https://app.example.com/callback"]',
      });
      // Never again: not on the list, not on the app's page.
      const list = await root.get(apps(dev));
      expect(list.html).not.toContain(secret);
      expect(list.html).toContain(`<a href="${apps(dev)}/${id}">Dashboard</a>`);
      expect(list.html).toContain('<code>https://app.example.com/callback</code>');
      const shown = await root.get(`${apps(dev)}/${id}`);
      expect(shown.status).toBe(200);
      expect(shown.html).not.toContain(secret);
      expect(shown.html).not.toMatch(SECRET_IN_PAGE);
      expect(shown.html).toContain(`<code id="client-id">${id}</code>`);
      expect(shown.html).toContain(`<code id="issuer">${app.url}/t/${dev.tenant.id}</code>`);

      const [entry, ...more] = await audit(dev.tenant.id, 'app_created');
      expect(more).toEqual([]);
      expect(entry?.actor).toBe(rootEmail);
      expect(JSON.parse(entry?.detail ?? '')).toEqual({
        appId: id,
        name: 'Dashboard',
        type: 'web',
        redirectUris: ['https://app.example.com/callback'],
        postLogoutRedirectUris: [],
      });
      expect(JSON.stringify(await audit(dev.tenant.id))).not.toContain(secret);
    });

    it('creates a spa app (no secret) and an m2m app (a secret, no redirect URIs); a unicode name stays as typed', async () => {
      await root.get(apps(dev));
      const spa = await root.post(apps(dev), {
        name: 'Café ☕ 日本語 <b>',
        type: 'spa',
        redirectUris: 'https://spa.example.com/\r\nhttp://localhost:5173/',
        postLogoutRedirectUris: 'https://spa.example.com/',
      });
      expect(spa.status).toBe(303);
      const id = APP_PATH.exec(spa.location ?? '')?.[1] ?? '';
      expect(await appRow(id)).toMatchObject({
        name: 'Café ☕ 日本語 <b>',
        secret_hash: null,
        redirect_uris: '["https://spa.example.com/","http://localhost:5173/"]',
        post_logout_redirect_uris: '["https://spa.example.com/"]',
      });
      const page = await root.get(spa.location as string);
      expect(page.html).toContain('The application is created.');
      expect(page.html).toContain('<h1>Café ☕ 日本語 &lt;b&gt;</h1>');
      expect(page.html).not.toContain('<b>');
      expect(page.html).not.toMatch(SECRET_IN_PAGE);
      // A public client has no secret to rotate: no form, and a forged post changes nothing.
      expect(page.html).not.toContain('Rotate secret');
      const rotate = await root.post(`${apps(dev)}/${id}/rotate-secret`, { grace: '0' });
      expect(rotate.status).toBe(409);
      expect(rotate.html).toContain('a public client has no secret to rotate');
      expect(rotate.html).not.toMatch(SECRET_IN_PAGE);
      expect((await appRow(id))?.secret_hash).toBeNull();
      expect(await audit(dev.tenant.id, 'app_secret_rotated')).toEqual([]);

      const m2m = await root.post(apps(dev), { name: 'Worker', type: 'm2m' });
      expect(m2m.status).toBe(201);
      expect(m2m.html).toMatch(SECRET_IN_PAGE);
      expect(m2m.html).toContain('An m2m app signs no one in');
    });

    it.each([
      {
        what: 'an empty name and no redirect URI',
        tenant: 'dev',
        fields: { name: '  ', type: 'web', redirectUris: '' },
        errors: ['an app needs a name', 'a web app needs at least one redirect URI'],
      },
      {
        what: 'http on a production tenant, and a fragment',
        tenant: 'prod',
        fields: {
          name: 'Live',
          type: 'web',
          redirectUris: 'http://app.example.com/cb\nhttps://app.example.com/cb#frag',
          postLogoutRedirectUris: 'http://localhost:3000/',
        },
        errors: [
          'http://app.example.com/cb http is allowed only',
          'https://app.example.com/cb#frag must not contain a fragment (#)',
          'http://localhost:3000/ http is allowed only on development tenants',
        ],
      },
      {
        what: 'a name far too long, and a huge redirect URI',
        tenant: 'dev',
        fields: {
          name: 'n'.repeat(5000),
          type: 'spa',
          redirectUris: `https://app.example.com/${'x'.repeat(2100)}`,
        },
        errors: ['name must be 1 to 100 characters', 'is longer than 2000 characters'],
      },
      {
        what: 'too many redirect URIs',
        tenant: 'dev',
        fields: {
          name: 'Many',
          type: 'spa',
          redirectUris: Array.from({ length: 21 }, (_, i) => `https://a.example.com/${i}`).join(
            '\n',
          ),
        },
        errors: ['an app may have at most 20 redirect URIs'],
      },
      {
        what: 'an m2m app with a redirect URI',
        tenant: 'dev',
        fields: { name: 'Bot', type: 'm2m', redirectUris: 'https://a.example.com/' },
        errors: ['an m2m app signs no one in: it has no redirect URIs'],
      },
      {
        what: 'a type that is not one of the four',
        tenant: 'dev',
        fields: { name: 'Typeless', type: 'desktop', redirectUris: 'https://a.example.com/' },
        errors: ['type must be one of spa, native, web, m2m'],
      },
    ] as {
      what: string;
      tenant: string;
      fields: Record<string, string> & { name: string };
      errors: string[];
    }[])(
      'refuses $what: the form again with every error, nothing stored or audited',
      async ({ tenant, fields, errors }) => {
        const target = tenant === 'prod' ? prod : dev;
        const before = await appRows(target.tenant.id);
        const audited = (await audit(target.tenant.id)).length;
        await root.get(apps(target));
        const refused = await root.post(apps(target), fields);
        expect(refused.status).toBe(422);
        expect(refused.html).toContain('role="alert"');
        expect(refused.html).toContain('Please correct the following:');
        for (const error of errors) expect(refused.html).toContain(error);
        expect(refused.html).not.toMatch(SECRET_IN_PAGE);
        // The values as typed are in the form again (the name cut past the longest valid one).
        const name = fields.name.length > 200 ? fields.name.slice(0, 101) : fields.name;
        expect(refused.html).toContain(`name="name" type="text" value="${name}"`);
        expect(textareaOf(refused.html, 'redirectUris')).toBe(fields.redirectUris);
        expect(await appRows(target.tenant.id)).toEqual(before);
        expect(await audit(target.tenant.id)).toHaveLength(audited);
      },
    );

    it('a form over the body limit is refused and stores nothing', async () => {
      const before = await appRows(dev.tenant.id);
      await root.get(apps(dev));
      const huge = await root.post(apps(dev), {
        name: 'Huge',
        type: 'spa',
        redirectUris: `https://a.example.com/${'y'.repeat(40_000)}`,
      });
      expect(huge.status).toBe(413);
      // The admin area's page for a refused request, as for any over-long form.
      expect(huge.html).toContain('<h1>Something is wrong with this request</h1>');
      expect(await appRows(dev.tenant.id)).toEqual(before);
    });

    it('edits the name and redirect URIs; a refused edit lists every error and changes nothing', async () => {
      const { id } = await webApp(dev, 'Before');
      const path = `${apps(dev)}/${id}`;
      await root.get(path);
      const saved = await root.post(path, {
        name: 'After',
        redirectUris: 'https://new.example.com/cb\nhttps://new.example.com/other',
        postLogoutRedirectUris: 'https://new.example.com/',
      });
      expect(saved.status).toBe(303);
      expect(saved.location).toBe(`${path}?done=saved`);
      const row = await appRow(id);
      expect(row).toMatchObject({
        name: 'After',
        type: 'web',
        redirect_uris: '["https://new.example.com/cb","https://new.example.com/other"]',
        post_logout_redirect_uris: '["https://new.example.com/"]',
      });
      const page = await root.get(saved.location as string);
      expect(page.html).toContain('Saved.');
      expect(textareaOf(page.html, 'redirectUris')).toBe(
        'https://new.example.com/cb\nhttps://new.example.com/other',
      );
      const [entry] = await audit(dev.tenant.id, 'app_updated');
      expect(entry?.actor).toBe(rootEmail);
      expect(JSON.parse(entry?.detail ?? '')).toEqual({
        appId: id,
        name: { from: 'Before', to: 'After' },
        redirectUris: {
          from: ['https://app.example.com/callback'],
          to: ['https://new.example.com/cb', 'https://new.example.com/other'],
        },
        postLogoutRedirectUris: { from: [], to: ['https://new.example.com/'] },
      });

      const audited = (await audit(dev.tenant.id)).length;
      const refused = await root.post(path, {
        name: '',
        redirectUris: 'https://new.example.com/cb#x\nftp://new.example.com/',
        postLogoutRedirectUris: '',
      });
      expect(refused.status).toBe(422);
      for (const error of [
        'an app needs a name',
        'https://new.example.com/cb#x must not contain a fragment (#)',
        'ftp://new.example.com/',
      ])
        expect(refused.html).toContain(error);
      expect(textareaOf(refused.html, 'redirectUris')).toBe(
        'https://new.example.com/cb#x\nftp://new.example.com/',
      );
      expect(await appRow(id)).toEqual(row);
      expect(await audit(dev.tenant.id)).toHaveLength(audited);
    });

    it('rotates a secret with the grace chosen; the new one is shown once; a bad choice changes nothing', async () => {
      const { id, secret } = await webApp(dev, 'Rotor');
      const path = `${apps(dev)}/${id}`;
      const page = await root.get(path);
      expect(page.html).toContain('<option value="24h" selected>24 hours</option>');

      const refused = await root.post(`${path}/rotate-secret`, { grace: '1y' });
      expect(refused.status).toBe(422);
      expect(refused.html).toContain('Choose how long the old secret keeps working');
      expect((await appRow(id))?.secret_hash).toBe(sha256(secret));

      const before = Date.now();
      const rotated = await root.post(`${path}/rotate-secret`, { grace: '1h' });
      expect(rotated.status).toBe(200);
      const fresh = SECRET_IN_PAGE.exec(rotated.html)?.[1] ?? '';
      expect(fresh).toMatch(/^[0-9A-Za-z]{43}$/);
      expect(fresh).not.toBe(secret);
      expect(rotated.html).toContain('The old secret keeps working until');
      const row = await appRow(id);
      expect(row).toMatchObject({
        secret_hash: sha256(fresh),
        previous_secret_hash: sha256(secret),
      });
      const until = Number(row?.previous_secret_expires_at);
      expect(until).toBeGreaterThanOrEqual(before + 3_600_000);
      expect(until).toBeLessThanOrEqual(Date.now() + 3_600_000);
      expect((await root.get(path)).html).not.toContain(fresh);

      const now = await root.post(`${path}/rotate-secret`, { grace: '0' });
      expect(now.status).toBe(200);
      expect(now.html).toContain('The old secret has stopped working.');
      const last = SECRET_IN_PAGE.exec(now.html)?.[1] ?? '';
      expect(await appRow(id)).toMatchObject({
        secret_hash: sha256(last),
        previous_secret_hash: null,
        previous_secret_expires_at: null,
      });

      const entries = await audit(dev.tenant.id, 'app_secret_rotated');
      expect(entries.map((e) => e.actor)).toEqual([rootEmail, rootEmail]);
      expect(JSON.parse(entries[0]?.detail ?? '')).toEqual({
        appId: id,
        name: 'Rotor',
        oldSecretUntil: new Date(until).toISOString(),
      });
      expect(JSON.parse(entries[1]?.detail ?? '').oldSecretUntil).toBe('now');
      for (const s of [secret, fresh, last])
        expect(JSON.stringify(await audit(dev.tenant.id))).not.toContain(s);
    });

    it('a secret is shown only after the password again when the sign-in is older than 10 minutes', async () => {
      const { id, secret } = await webApp(dev, 'Stale');
      const path = `${apps(dev)}/${id}`;
      const before = await appRows(dev.tenant.id);
      await db()
        .updateTable('admin_sessions')
        .set({ authenticated_at: Date.now() - 11 * 60_000 })
        .execute();
      expect((await root.get(path)).html).toContain('Your password');
      const rotate = await root.post(`${path}/rotate-secret`, { grace: '24h' });
      expect(rotate.status).toBe(403);
      expect(rotate.html).toContain('Type your password again to do this.');
      const create = await root.post(apps(dev), {
        name: 'Needs password',
        type: 'm2m',
        reauth_password: 'wrong password',
      });
      expect(create.status).toBe(403);
      expect(create.html).toContain('That password is wrong; nothing was done.');
      expect(create.html).toContain('value="Needs password"');
      expect(await appRows(dev.tenant.id)).toEqual(before);
      expect((await appRow(id))?.secret_hash).toBe(sha256(secret));

      // A public client shows no secret: no password asked.
      const spa = await root.post(apps(dev), {
        name: 'Public',
        type: 'spa',
        redirectUris: 'https://a.example.com/',
      });
      expect(spa.status).toBe(303);
      const right = await root.post(`${path}/rotate-secret`, {
        grace: '24h',
        reauth_password: ADMIN_PASSWORD,
      });
      expect(right.status).toBe(200);
      expect(right.html).toMatch(SECRET_IN_PAGE);
    });

    it('deletes an app after a confirmation page, with what the provider stored for it, audited', async () => {
      const { id } = await webApp(dev, 'Doomed');
      const path = `${apps(dev)}/${id}`;
      await db()
        .insertInto('oauth_artifacts')
        .values({
          tenant_id: dev.tenant.id,
          model: 'Grant',
          id: `grant-${id}`,
          payload: '{}',
          grant_id: `grant-${id}`,
          uid: null,
          client_id: id,
          session_id: null,
          expires_at: null,
          consumed_at: null,
          created_at: Date.now(),
        })
        .execute();
      const confirm = await root.get(`${path}/delete`);
      expect(confirm.status).toBe(200);
      expect(confirm.html).toContain('<h1>Delete Doomed?</h1>');
      expect(confirm.html).toContain(`its client ID <code>${id}</code> stops working at once`);
      expect(confirm.html).toContain(`action="${path}/delete"`);
      // Looking at the confirmation deletes nothing.
      expect(await appRow(id)).toBeDefined();

      const deleted = await root.post(`${path}/delete`, {});
      expect(deleted.status).toBe(303);
      expect(deleted.location).toBe(`${apps(dev)}?done=app-deleted`);
      expect(await appRow(id)).toBeUndefined();
      const left = await db()
        .selectFrom('oauth_artifacts')
        .select('id')
        .where('client_id', '=', id)
        .execute();
      expect(left).toEqual([]);
      const list = await root.get(deleted.location as string);
      expect(list.html).toContain('The application is deleted');
      expect(list.html).not.toContain(id);
      const [entry] = await audit(dev.tenant.id, 'app_deleted');
      expect(entry?.actor).toBe(rootEmail);
      expect(JSON.parse(entry?.detail ?? '')).toEqual({ appId: id, name: 'Doomed', type: 'web' });
      const log = await root.get(`/admin/audit?tenant=${dev.tenant.id}&kind=app_deleted`);
      expect(log.html).toContain(rootEmail);
      expect((await root.get(path)).status).toBe(404);
      expect((await root.post(`${path}/delete`, {})).status).toBe(404);
    });

    it('every change needs the CSRF token; another tenant and its apps answer 404 to a tenant-bound admin', async () => {
      const { id: prodApp, secret } = await webApp(prod, 'Theirs');
      const { id: devApp } = await webApp(dev, 'Ours');
      const rows = [await appRows(dev.tenant.id), await appRows(prod.tenant.id)];
      const audited = [(await audit(dev.tenant.id)).length, (await audit(prod.tenant.id)).length];
      await root.get(apps(dev));
      const base = `${apps(dev)}/${devApp}`;
      for (const [path, fields] of [
        [apps(dev), { name: 'Forged', type: 'spa', redirectUris: 'https://a.example.com/' }],
        [base, { name: 'Forged', redirectUris: 'https://evil.example.com/' }],
        [`${base}/rotate-secret`, { grace: '0' }],
        [`${base}/delete`, {}],
      ] as const) {
        const forged = await root.post(path, { ...fields, _csrf: '' });
        expect(forged.status, path).toBe(403);
        const other = await root.post(path, { ...fields, _csrf: 'x'.repeat(40) });
        expect(other.status, path).toBe(403);
      }

      const theirs = `${apps(prod)}/${prodApp}`;
      expect((await bound.get(apps(prod))).status).toBe(404);
      expect((await bound.get(theirs)).status).toBe(404);
      expect((await bound.get(`${theirs}/delete`)).status).toBe(404);
      // Their app through our tenant's path is not found either.
      expect((await bound.get(`${apps(dev)}/${prodApp}`)).status).toBe(404);
      await bound.get(apps(dev));
      for (const [path, fields] of [
        [apps(prod), { name: 'X', type: 'spa', redirectUris: 'https://a.example.com/' }],
        [theirs, { name: 'Hijacked' }],
        [`${theirs}/rotate-secret`, { grace: '0', reauth_password: ADMIN_PASSWORD }],
        [`${theirs}/delete`, {}],
        [`${apps(dev)}/${prodApp}/delete`, {}],
      ] as const)
        expect((await bound.post(path, fields)).status, path).toBe(404);
      expect((await bound.get(apps(dev))).status).toBe(200);

      expect([await appRows(dev.tenant.id), await appRows(prod.tenant.id)]).toEqual(rows);
      expect((await appRow(prodApp))?.secret_hash).toBe(sha256(secret));
      expect([(await audit(dev.tenant.id)).length, (await audit(prod.tenant.id)).length]).toEqual(
        audited,
      );
    });
  });
}
