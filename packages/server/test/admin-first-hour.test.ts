/**
 * What an operator meets in the admin area's first hour, over real HTTP on every database:
 * API Keys in two groups, publishable keys made there, the last live one revoked only after
 * a page that says what stops working; limits editable on enterprise tenants only; users
 * found by part of an address or name; sessions named by their browser; logos served from
 * the developer's machine on development tenants only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../src/modules/users/index.js';
import { LAST_PUBLISHABLE_EFFECT } from '../src/views/admin/keys.js';
import { type AdminClient, signedInAdmin } from './admin-support.js';
import { DIALECTS, email, json, startApp, type TestApp } from './support.js';

const csp = (res: Response) =>
  Object.fromEntries(
    (res.headers.get('content-security-policy') ?? '').split(/;\s*/).map((d) => {
      const [name, ...values] = d.split(' ');
      return [name, values.join(' ')];
    }),
  );

/** The text of a page, without its markup (entities as the page wrote them). */
const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

for (const dialect of DIALECTS) {
  describe(`admin area, the first hour (${dialect})`, () => {
    let app: TestApp;
    let root: AdminClient;

    beforeAll(async () => {
      app = await startApp(dialect);
      root = await signedInAdmin(app, email('root'), { superuser: true });
    }, 60_000);
    afterAll(() => app?.dispose());

    const liveKeys = async (tenantId: string, kind: 'publishable' | 'secret') =>
      app.ctx.database.db
        .selectFrom('api_keys')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('kind', '=', kind)
        .where('revoked_at', 'is', null)
        .execute();

    it('lists publishable and secret keys in groups; makes publishable keys; confirms the last one on its own page', async () => {
      const t = await app.tenant();
      const path = `/admin/tenants/${t.tenant.id}/keys`;
      const page = await root.get(path);
      const publishableAt = page.html.indexOf('<h2 id="publishable-keys">Publishable keys</h2>');
      const secretAt = page.html.indexOf('<h2 id="secret-keys">Secret keys</h2>');
      expect(publishableAt).toBeGreaterThan(0);
      expect(secretAt).toBeGreaterThan(publishableAt);
      expect(page.html.indexOf(t.publishableKey)).toBeGreaterThan(publishableAt);
      expect(page.html.indexOf(t.publishableKey)).toBeLessThan(secretAt);
      // The only live publishable key has no script dialog: its page confirms instead.
      const pkRow = page.html.slice(publishableAt, secretAt);
      expect(pkRow).not.toContain('data-confirm');
      // Secret keys' confirmation names the key and what stops.
      expect(page.html.slice(secretAt)).toMatch(
        /data-confirm="Revoke secret key sk_test_\w{4}…\w{4}\? Servers that call the API with it are refused \(401\) at once\."/,
      );

      // A second publishable key, made here (no password again: it is public).
      const made = await root.post(path, { kind: 'publishable', keyName: 'marketing site' });
      expect(made.status).toBe(303);
      expect(made.location).toBe(`${path}?done=publishable-created`);
      const live = await liveKeys(t.tenant.id, 'publishable');
      expect(live).toHaveLength(2);
      const second = live.find((k) => k.name === 'marketing site');
      expect(second?.publishable).toMatch(/^pk_test_[A-Za-z0-9]{43}$/);
      expect(second?.scopes).toBe('');
      const listed = await root.get(`${path}?done=publishable-created`);
      expect(listed.html).toContain(second?.publishable as string);
      expect(listed.html).toContain('A new publishable key is created');
      // It works: the hosted page answers with it.
      const hosted = await app.request(
        `/sign-in?${new URLSearchParams({ pk: second?.publishable as string })}`,
      );
      expect(hosted.status).not.toBe(404);
      // Two live: each one's dialog says the other keeps working.
      expect(listed.html).toContain('your other live publishable key keeps working.');
      const first = live.find((k) => k.publishable === t.publishableKey);
      const revokedFirst = await root.post(`${path}/${first?.id}/revoke`, {});
      expect(revokedFirst.status).toBe(303);
      expect(await liveKeys(t.tenant.id, 'publishable')).toHaveLength(1);

      // The last live one: a page that says exactly what stops working, and nothing revoked.
      const asked = await root.post(`${path}/${second?.id}/revoke`, {});
      expect(asked.status).toBe(200);
      expect(text(asked.html)).toContain(text(LAST_PUBLISHABLE_EFFECT));
      expect(asked.html).toContain('hosted sign-in page links with pk=');
      expect(asked.html).toContain('the script tag (latchkey.js) and React apps');
      expect(asked.html).toContain('name="confirm" value="last-publishable"');
      expect(await liveKeys(t.tenant.id, 'publishable')).toHaveLength(1);
      const confirmed = await root.post(`${path}/${second?.id}/revoke`, {
        confirm: 'last-publishable',
      });
      expect(confirmed.status).toBe(303);
      expect(await liveKeys(t.tenant.id, 'publishable')).toHaveLength(0);
      const empty = await root.get(path);
      expect(empty.html).toContain('This tenant has no live publishable key');

      // And the way back, from the admin area alone.
      expect((await root.post(path, { kind: 'publishable' })).status).toBe(303);
      expect(await liveKeys(t.tenant.id, 'publishable')).toHaveLength(1);
      // A secret key's form still needs a scope; a publishable key takes none.
      expect((await root.post(path, { kind: 'secret', keyName: 'no scopes' })).status).toBe(422);
      const audit = await app.ctx.database.db
        .selectFrom('audit_events')
        .select(['kind', 'detail'])
        .where('tenant_id', '=', t.tenant.id)
        .execute();
      expect(audit.filter((e) => e.kind === 'key_created')).toHaveLength(2);
      expect(audit.filter((e) => e.kind === 'key_revoked')).toHaveLength(2);
    });

    it('edits limits on enterprise tenants only; other plans show theirs read-only and the server refuses', async () => {
      const free = await app.tenant({ plan: 'free' });
      const path = `/admin/tenants/${free.tenant.id}`;
      const page = await root.get(path);
      expect(page.html).not.toContain('name="rps"');
      expect(text(page.html)).toContain('10 requests per second, 600 per minute');
      expect(page.html).toContain('choose Enterprise above and save');
      const form = {
        name: free.tenant.name,
        plan: 'free',
        accessTokenTtl: '600',
        passwordEnabled: 'on',
      };
      const refused = await root.post(path, { ...form, rps: '5000', rpm: '9000' });
      expect(refused.status).toBe(422);
      expect(refused.html).toContain('custom rps/rpm need the enterprise plan');
      const row = await app.ctx.database.db
        .selectFrom('tenants')
        .select(['rate_rps', 'rate_rpm', 'plan'])
        .where('id', '=', free.tenant.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ rate_rps: null, rate_rpm: null, plan: 'free' });

      // Enterprise: the fields are there and count; moving back to pro drops them.
      expect((await root.post(path, { ...form, plan: 'enterprise' })).status).toBe(303);
      expect((await root.get(path)).html).toContain('name="rps"');
      expect((await root.post(path, { ...form, plan: 'enterprise', rps: '77' })).status).toBe(303);
      expect((await root.get(path)).html).toContain('value="77"');
      const pro = await root.post(path, { ...form, plan: 'pro', rps: '77', rpm: '' });
      expect(pro.status).toBe(303);
      const after = await root.get(path);
      expect(after.html).not.toContain('name="rps"');
      expect(text(after.html)).toContain('100 requests per second, 6000 per minute');

      // A tenant-bound admin sees the limits read-only, and cannot send any.
      const bound = await signedInAdmin(app, email('bound'), { tenantIds: [free.tenant.id] });
      const theirs = await bound.get(path);
      expect(theirs.html).not.toContain('name="rps"');
      const sent = await bound.post(path, { ...form, plan: 'pro', rps: '5000' });
      expect(sent.status).toBe(422);
    });

    it('finds users by part of an address or a name, in any case, with LIKE characters as typed', async () => {
      const t = await app.tenant();
      const deps = { db: app.ctx.database.db, hasher: app.ctx.hasher, breached: app.ctx.breached };
      const people = [
        ['Ada.Lovelace@Example.com', 'Ada Lovelace'],
        ['grace@navy.example', 'Grace Hopper'],
        ['percent%sign@example.com', 'Per Cent'],
        ['under_score@example.com', 'Under Score'],
        ['underXscore@example.com', 'Under X'],
        ['emile@zola.example', '\u00c9mile Zola'],
      ] as const;
      for (const [address, name] of people)
        await signUp(deps, t.tenant, { email: address, password: 'a long password 1', name });
      const search = async (q: string) => {
        const res = await root.get(
          `/admin/tenants/${t.tenant.id}/users?${new URLSearchParams({ q })}`,
        );
        expect(res.status).toBe(200);
        return people.filter(([address]) => res.html.includes(`>${address}</a>`)).map((p) => p[0]);
      };
      expect(await search('lovelace@')).toEqual(['Ada.Lovelace@Example.com']);
      expect(await search('EXAMPLE.COM')).toEqual([
        'Ada.Lovelace@Example.com',
        'percent%sign@example.com',
        'under_score@example.com',
        'underXscore@example.com',
      ]);
      expect(await search('hopp')).toEqual(['grace@navy.example']);
      // A name beyond ASCII, typed as it is written (SQLite folds only ASCII letters).
      expect(await search('\u00c9mile')).toEqual(['emile@zola.example']);
      expect(await search('\u00c9MILE ZOLA')).toEqual(['emile@zola.example']);
      expect(await search('%')).toEqual(['percent%sign@example.com']);
      expect(await search('under_')).toEqual(['under_score@example.com']);
      expect(await search('\\')).toEqual([]);
      expect(await search('nobody')).toEqual([]);
      expect((await search('')).length).toBe(6);
      const none = await root.get(`/admin/tenants/${t.tenant.id}/users?q=nobody`);
      expect(none.html).toContain('contains &ldquo;nobody&rdquo;');
      // The REST API's e-mail filter stays exact (docs/design.md §18.5).
      const exact = await json(
        await app.request('/v1/users?email=lovelace%40example.com', {
          headers: { authorization: `Bearer ${t.secretKey}` },
        }),
      );
      expect(exact.data).toEqual([]);
      // REST's query finds what the admin area's search finds, page by page.
      const rest = async (params: Record<string, string>) =>
        json(
          await app.request(`/v1/users?${new URLSearchParams(params)}`, {
            headers: { authorization: `Bearer ${t.secretKey}` },
          }),
        );
      const first = await rest({ query: 'UNDER', limit: '1' });
      expect(first.data.map((u: { email: string }) => u.email)).toEqual([
        'under_score@example.com',
      ]);
      const second = await rest({ query: 'UNDER', limit: '1', cursor: first.nextCursor });
      expect(second.data.map((u: { email: string }) => u.email)).toEqual([
        'underXscore@example.com',
      ]);
      expect(second.nextCursor).toBeNull();
      expect((await rest({ query: '_' })).data).toHaveLength(1);
    });

    it("names a session's browser from the User-Agent its sign-in sent", async () => {
      const t = await app.tenant();
      const address = email('ua');
      await signUp(
        { db: app.ctx.database.db, hasher: app.ctx.hasher, breached: app.ctx.breached },
        t.tenant,
        {
          email: address,
          password: 'a long password 1',
        },
      );
      const signIn = (userAgent: string) =>
        app.request('/v1/auth/sign-in', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${t.secretKey}`,
            'user-agent': userAgent,
          },
          body: JSON.stringify({ email: address, password: 'a long password 1' }),
        });
      expect(
        (
          await signIn(
            'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
          )
        ).status,
      ).toBe(200);
      expect((await signIn('curl/8.5.0')).status).toBe(200);
      const [user] = (
        await json(
          await app.request(`/v1/users?email=${encodeURIComponent(address)}`, {
            headers: { authorization: `Bearer ${t.secretKey}` },
          }),
        )
      ).data;
      const page = await root.get(`/admin/tenants/${t.tenant.id}/users/${user.id}`);
      expect(page.html).toContain('>Chrome 131 on macOS</span>');
      expect(page.html).toContain('>curl/8.5.0</span>');
    });

    it('takes an http://localhost logo on development tenants only, and the hosted page allows it only there', async () => {
      const dev = await app.tenant({
        environment: 'development',
        allowedOrigins: ['http://localhost:3000'],
      });
      const prod = await app.tenant({
        environment: 'production',
        allowedOrigins: ['https://app.example.com'],
      });
      const logo = 'http://localhost:5173/logo.png';
      const save = (id: string, logoUrl: string) =>
        root.get(`/admin/tenants/${id}/branding`).then(() =>
          root.post(`/admin/tenants/${id}/branding`, {
            name: 'Logo Co',
            logoUrl,
            primaryColor: '#4f46e5',
          }),
        );
      const devPage = await root.get(`/admin/tenants/${dev.tenant.id}/branding`);
      expect(devPage.html).toContain(
        'http://localhost and http://127.0.0.1 on this development tenant',
      );
      expect(csp(devPage.res)['img-src']).toBe('https: http://localhost:* http://127.0.0.1:*');
      expect((await save(dev.tenant.id, logo)).status).toBe(303);
      expect((await save(dev.tenant.id, 'http://127.0.0.1:8080/l.svg')).status).toBe(303);
      const elsewhere = await save(dev.tenant.id, 'http://cdn.example/logo.png');
      expect(elsewhere.status).toBe(422);
      expect(elsewhere.html).toContain(
        'The Logo URL must start with https:// (or http://localhost or http://127.0.0.1 on this development tenant)',
      );
      expect((await save(dev.tenant.id, logo)).status).toBe(303);

      const prodPage = await root.get(`/admin/tenants/${prod.tenant.id}/branding`);
      expect(csp(prodPage.res)['img-src']).toBe('https:');
      expect(prodPage.html).toContain('https only;');
      const refused = await save(prod.tenant.id, logo);
      expect(refused.status).toBe(422);
      expect(refused.html).toContain(
        'The Logo URL must start with https:// (a production tenant shows no http logo)',
      );
      const row = await app.ctx.database.db
        .selectFrom('tenants')
        .select('logo_url')
        .where('id', '=', prod.tenant.id)
        .executeTakeFirstOrThrow();
      expect(row.logo_url).toBeNull();

      // The hosted page: the logo, its alt text the name, and the CSP lets that origin in.
      const hosted = await app.request(
        `/sign-in?${new URLSearchParams({ pk: dev.publishableKey, redirect_url: 'http://localhost:3000/cb' })}`,
      );
      expect(hosted.status).toBe(200);
      const html = await hosted.text();
      expect(html).toContain(`<img class="logo" src="${logo}" alt="Logo Co">`);
      expect(csp(hosted)['img-src']).toBe('http://localhost:5173');

      // A production tenant's page never shows (nor lets in) an http logo, even one written
      // to the database some other way.
      await app.ctx.database.db
        .updateTable('tenants')
        .set({ logo_url: logo })
        .where('id', '=', prod.tenant.id)
        .execute();
      const prodHosted = await app.request(
        `/sign-in?${new URLSearchParams({ pk: prod.publishableKey, redirect_url: 'https://app.example.com/cb' })}`,
      );
      expect(prodHosted.status).toBe(200);
      const prodHtml = await prodHosted.text();
      expect(prodHtml).not.toContain('<img');
      expect(prodHtml).toContain('<p class="tenant">Tenant ');
      expect(csp(prodHosted)['img-src']).toBe("'none'");
      // Nor do the libraries' buttons, which draw the logo /public/config gives.
      const config = async (pk: string) =>
        (await json(
          await app.request('/public/config', { headers: { 'x-latchkey-publishable-key': pk } }),
        )) as { branding: { logoUrl: string | null } };
      expect((await config(prod.publishableKey)).branding.logoUrl).toBeNull();
      expect((await config(dev.publishableKey)).branding.logoUrl).toBe(logo);
    });
  });
}
