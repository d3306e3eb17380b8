/**
 * The Branding page's live preview over real HTTP on every database: the hosted sign-in
 * page rendered by the hosted view from unsaved values, checked like a save, framed by the
 * admin area only and sandboxed; the buttons drawn by @latchkey/js's preview build.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../src/modules/tenants/index.js';
import { type AdminClient, signedInAdmin } from './admin-support.js';
import { DIALECTS, email, startApp, type TestApp, type TestTenant } from './support.js';

const csp = (res: Response) =>
  Object.fromEntries(
    (res.headers.get('content-security-policy') ?? '').split(/;\s*/).map((d) => {
      const [name, ...values] = d.split(' ');
      return [name, values.join(' ')];
    }),
  );

for (const dialect of DIALECTS) {
  describe(`admin Branding preview (${dialect})`, () => {
    let app: TestApp;
    let a: TestTenant;
    let b: TestTenant;
    let root: AdminClient;
    let bound: AdminClient;

    beforeAll(async () => {
      app = await startApp(dialect);
      [a, b] = [await app.tenant(), await app.tenant()];
      await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, a.tenant.id, {
        name: 'Saved Name',
      });
      root = await signedInAdmin(app, email('root'), { superuser: true });
      bound = await signedInAdmin(app, email('bound'), { tenantIds: [a.tenant.id] });
    }, 60_000);
    afterAll(() => app?.dispose());

    const preview = (id: string, values: Record<string, string> = {}) =>
      `/admin/tenants/${id}/branding/preview?${new URLSearchParams(values)}`;

    it('the page frames the preview of the saved values in a sandbox, and loads the real buttons', async () => {
      const page = await root.get(`/admin/tenants/${a.tenant.id}/branding`);
      expect(page.status).toBe(200);
      expect(csp(page.res)['frame-src']).toBe("'self'");
      expect(page.html).toMatch(
        new RegExp(
          `<iframe id="hosted-preview" src="/admin/tenants/${a.tenant.id}/branding/preview"[^>]* sandbox=""`,
        ),
      );
      expect(page.html).toContain('src="/admin/assets/latchkey-preview.js"');
      const script = await root.get('/admin/assets/latchkey-preview.js');
      expect(script.status).toBe(200);
      expect(script.res.headers.get('content-type')).toMatch(/^text\/javascript/);
      expect(script.html).toContain('LatchkeyPreview');
      // The buttons' build is not in the script tag's library.
      const sdk = await (await app.request('/sdk/latchkey.js')).text();
      expect(sdk).not.toContain('LatchkeyPreview');

      const saved = await root.get(preview(a.tenant.id));
      expect(saved.status).toBe(200);
      expect(saved.html).toContain('<p class="tenant">Saved Name</p>');
      expect(saved.html).toContain('<h1>Sign in</h1>');
    });

    it('renders the hosted view with the typed name, logo and colour, and saves nothing', async () => {
      const res = await root.get(
        preview(a.tenant.id, {
          name: 'Typed <Name>',
          logoUrl: 'https://cdn.example/logo.png',
          primaryColor: '#0a7d33',
        }),
      );
      expect(res.status).toBe(200);
      expect(res.html).not.toContain('<p class="tenant">');
      expect(res.html).toContain(
        '<img class="logo" src="https://cdn.example/logo.png" alt="Typed &lt;Name&gt;">',
      );
      expect(res.html).toContain('--brand:#0a7d33;--on-brand:#ffffff');
      expect(res.html).toContain('<button type="submit">Sign in</button>');
      const policy = csp(res.res);
      expect(policy['frame-ancestors']).toBe("'self'");
      expect(policy.sandbox).toBe('');
      expect(policy['form-action']).toBe("'none'");
      expect(policy['img-src']).toBe('https://cdn.example');
      expect(policy['script-src']).toBeUndefined();
      expect(policy['default-src']).toBe("'none'");
      expect(res.res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      const row = await app.ctx.database.db
        .selectFrom('tenants')
        .select(['name', 'logo_url', 'primary_color'])
        .where('id', '=', a.tenant.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ name: 'Saved Name', logo_url: null, primary_color: null });
    });

    it('shows the enabled providers, as the hosted page does', async () => {
      await root.get(`/admin/tenants/${a.tenant.id}/social`);
      await root.post(`/admin/tenants/${a.tenant.id}/social/github`, {
        enabled: 'on',
        clientId: 'gh-client',
        clientSecret: 'gh-secret',
      });
      await root.post(`/admin/tenants/${a.tenant.id}/social/google`, {
        clientId: 'google-client',
        clientSecret: 'google-secret',
      });
      const res = await root.get(preview(a.tenant.id, { name: 'With GitHub' }));
      expect(res.html).toContain('Continue with GitHub');
      expect(res.html).not.toContain('Continue with Google');
      const page = await root.get(`/admin/tenants/${a.tenant.id}/branding`);
      expect(page.html).toContain('&quot;providers&quot;:[{&quot;id&quot;:&quot;github&quot;');
    });

    it('refuses what a save refuses: a logo that is not https, a colour that is not #rrggbb, no name', async () => {
      for (const [values, message] of [
        [{ logoUrl: 'http://cdn.example/logo.png' }, 'The Logo URL must start with https://'],
        [{ logoUrl: 'javascript:alert(1)' }, 'The Logo URL must start with https://'],
        [{ primaryColor: 'red' }, 'primary colour must be #rrggbb'],
        [{ name: '   ' }, 'name must be 1 to'],
      ] as const) {
        const res = await root.get(preview(a.tenant.id, values));
        expect(res.status, JSON.stringify(values)).toBe(422);
        expect(res.html).toContain(message);
        expect(res.html).not.toContain('javascript:');
        expect(csp(res.res).sandbox).toBe('');
        // The save refuses the same values.
        await root.get(`/admin/tenants/${a.tenant.id}/branding`);
        const save = await root.post(`/admin/tenants/${a.tenant.id}/branding`, {
          name: 'Saved Name',
          logoUrl: '',
          primaryColor: '#4f46e5',
          ...values,
        });
        expect(save.status).toBe(422);
      }
    });

    it("answers 404 for another admin's tenant, and asks a signed-out browser to sign in", async () => {
      expect((await bound.get(preview(b.tenant.id))).status).toBe(404);
      expect((await bound.get(preview(a.tenant.id))).status).toBe(200);
      const anonymous = await app.request(preview(a.tenant.id), { redirect: 'manual' });
      expect(anonymous.status).toBe(303);
      expect(anonymous.headers.get('location')).toMatch(/^\/admin\/sign-in/);
    });
  });
}
