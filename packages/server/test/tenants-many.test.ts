/**
 * Many tenants (docs/design.md §21) on every database: the tenants list paged by keyset and
 * searched by name or id, in the admin area and over the operator REST API with its key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperatorKey, revokeOperatorKey } from '../src/modules/operators/index.js';
import { createTenant, searchTenants } from '../src/modules/tenants/index.js';
import { signedInAdmin } from './admin-support.js';
import { type Body, DIALECTS, json, startApp, type TestApp, type TestTenant } from './support.js';

const NAMES = ['100% Juice', '100 Percent', 'snake_case Ltd', 'snakeXcase Ltd', 'back\\slash'];

describe.each(DIALECTS)('many tenants on %s', (dialect) => {
  let app: TestApp;
  let operatorKey: string;
  let revokedKey: string;
  let tenantKeys: TestTenant;
  const ids: string[] = [];
  /** Every tenant in the order of the list: by creation, ties (one millisecond) by id. */
  let ordered: string[] = [];

  const operator = (path: string, init: RequestInit & { key?: string | null } = {}) => {
    const { key = operatorKey, ...rest } = init;
    return app.request(path, {
      ...rest,
      headers: {
        ...(rest.body ? { 'content-type': 'application/json' } : {}),
        ...(key ? { authorization: `Bearer ${key}` } : {}),
      },
    });
  };
  const tenantCount = async () =>
    Number(
      (
        await app.ctx.database.db
          .selectFrom('tenants')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  beforeAll(async () => {
    app = await startApp(dialect);
    tenantKeys = await app.tenant();
    ids.push(tenantKeys.tenant.id);
    const db = app.ctx.database.db;
    // Created quickly, many in the same millisecond: the id breaks ties in the order.
    for (let i = 0; i < 120; i++) ids.push((await createTenant(db, { name: `Bulk ${i}` })).id);
    for (const name of NAMES) ids.push((await createTenant(db, { name })).id);
    operatorKey = (await createOperatorKey(db, 'tests')).plaintext;
    const revoked = await createOperatorKey(db, 'old');
    await revokeOperatorKey(db, revoked.key.id);
    revokedKey = revoked.plaintext;
    ordered = (await searchTenants(db, { limit: 1000 })).data.map((t) => t.id);
  });
  afterAll(async () => {
    await app?.dispose();
  });

  it('pages through every tenant once, in creation order, by keyset', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const page = await searchTenants(app.ctx.database.db, { after, limit: 7 });
      seen.push(...page.data.map((t) => t.id));
      if (!page.next) break;
      expect(page.data).toHaveLength(7);
      after = page.next;
    }
    expect(seen).toHaveLength(ids.length);
    expect(new Set(seen).size).toBe(ids.length);
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(seen).toEqual(ordered);
  });

  it('searches names and ids in any case, matching % _ and \\ as typed', async () => {
    const names = async (query: string) =>
      (await searchTenants(app.ctx.database.db, { query, limit: 50 })).data.map((t) => t.name);
    expect(await names('100%')).toEqual(['100% Juice']);
    expect(await names('SNAKE_')).toEqual(['snake_case Ltd']);
    expect(await names('%')).toEqual(['100% Juice']);
    expect(await names('\\')).toEqual(['back\\slash']);
    expect((await names('bulk 11')).sort()).toEqual([
      'Bulk 11',
      ...Array.from({ length: 10 }, (_, i) => `Bulk 11${i}`),
    ]);
    const id = ids[42] as string;
    expect(
      (
        await searchTenants(app.ctx.database.db, { query: id.slice(4, 20).toUpperCase(), limit: 5 })
      ).data.map((t) => t.id),
    ).toEqual([id]);
  });

  it('refuses an after that is no tenant', async () => {
    await expect(
      searchTenants(app.ctx.database.db, { after: 'nope', limit: 5 }),
    ).rejects.toMatchObject({ code: 'validation_failed' });
  });

  it('admin Tenants: 50 a page with Next, searchable; a tenant-bound admin sees only its own', async () => {
    const admin = await signedInAdmin(app, `root-${dialect}@example.com`, { superuser: true });
    const first = await admin.get('/admin/tenants');
    expect(first.status).toBe(200);
    expect(first.html.match(/<a href="\/admin\/tenants\/[0-9a-f-]{36}">/g)).toHaveLength(50);
    const next = /<a href="([^"]+)" rel="next">Next<\/a>/.exec(first.html)?.[1];
    expect(next).toBe(`/admin/tenants?after=${ordered[49]}`);
    const second = await admin.get((next as string).replaceAll('&amp;', '&'));
    expect(second.html).toContain(`/admin/tenants/${ordered[50]}"`);
    expect(second.html).not.toContain(`/admin/tenants/${ordered[49]}"`);
    const found = await admin.get(`/admin/tenants?q=${encodeURIComponent('100%')}`);
    expect(found.html).toContain('100% Juice');
    expect(found.html).not.toContain('100 Percent');
    expect(found.html).not.toContain('rel="next"');
    const none = await admin.get('/admin/tenants?q=zzzz');
    expect(none.html).toContain("No tenant's name or id contains");
    const bad = await admin.get('/admin/tenants?after=nope');
    expect(bad.status).toBe(422);
    // The audit log's tenant filter is a typed id when the tenants exceed a page.
    const audit = await admin.get('/admin/audit');
    expect(audit.html).toContain('Tenant id');
    expect(audit.html).not.toContain('Bulk 99');

    const bound = await signedInAdmin(app, `bound-${dialect}@example.com`, {
      tenantIds: [ids[3] as string],
    });
    const own = await bound.get('/admin/tenants?q=bulk');
    expect(own.html.match(/<a href="\/admin\/tenants\/[0-9a-f-]{36}">/g)).toEqual([
      `<a href="/admin/tenants/${ids[3]}">`,
    ]);
    expect((await bound.get('/admin/audit')).html).toContain('Bulk 2');
  });

  it('operator REST: creates a tenant whole, returns its keys once, and audits it', async () => {
    const res = await operator('/v1/operator/tenants', {
      method: 'POST',
      body: JSON.stringify({
        name: 'Made by REST',
        environment: 'production',
        plan: 'enterprise',
        rps: 50,
        rpm: 2000,
        allowedOrigins: ['https://app.example.com'],
      }),
    });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body.secretKey).toMatch(/^sk_prod_[0-9A-Za-z]{43}$/);
    expect(body.publishableKey).toMatch(/^pk_live_[0-9A-Za-z]{43}$/);
    expect(body.tenant).toMatchObject({ name: 'Made by REST', limits: { rps: 50, rpm: 2000 } });
    // The secret key works on the tenant's routes; the operator key does not.
    const users = await app.request('/v1/users', {
      headers: { authorization: `Bearer ${body.secretKey}` },
    });
    expect(users.status).toBe(200);
    const asOperator = await app.request('/v1/users', {
      headers: { authorization: `Bearer ${operatorKey}` },
    });
    expect(asOperator.status).toBe(401);
    expect(asOperator.headers.get('content-type')).toContain('application/problem+json');
    const jwks = await app.request(`/t/${body.tenant.id}/.well-known/jwks.json`);
    expect((await json(jwks)).keys).toHaveLength(1);
    const audit = await app.ctx.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('tenant_id', '=', body.tenant.id)
      .execute();
    expect(audit).toMatchObject([
      { kind: 'tenant_created', actor: expect.stringMatching(/^operator key lko_/) },
    ]);
    expect(JSON.stringify(audit)).not.toContain(operatorKey);
  });

  it('operator REST: lists by page and search, gets and updates with an audit entry', async () => {
    const page = await json(await operator('/v1/operator/tenants?limit=10'));
    expect(page.data.map((t: Body) => t.id)).toEqual(ordered.slice(0, 10));
    expect(page.next).toBe(ordered[9]);
    const after = await json(await operator(`/v1/operator/tenants?limit=10&after=${page.next}`));
    expect(after.data[0].id).toBe(ordered[10]);
    const searched = await json(await operator('/v1/operator/tenants?search=snake_'));
    expect(searched).toEqual({
      data: [expect.objectContaining({ name: 'snake_case Ltd' })],
      next: null,
    });
    const id = ids[5] as string;
    expect((await json(await operator(`/v1/operator/tenants/${id}`))).name).toBe('Bulk 4');
    const patched = await operator(`/v1/operator/tenants/${id}`, {
      method: 'PATCH',
      body: JSON.stringify({ name: 'Renamed', allowedOrigins: ['http://localhost:3000'] }),
    });
    expect(patched.status).toBe(200);
    expect(await json(patched)).toMatchObject({
      name: 'Renamed',
      allowedOrigins: ['http://localhost:3000'],
    });
    const audit = await app.ctx.database.db
      .selectFrom('audit_events')
      .select(['kind', 'detail'])
      .where('tenant_id', '=', id)
      .execute();
    expect(audit).toHaveLength(1);
    expect(JSON.parse(audit[0]?.detail as string).name).toEqual({ from: 'Bulk 4', to: 'Renamed' });
    expect(
      (await operator('/v1/operator/tenants/00000000-0000-4000-8000-000000000000')).status,
    ).toBe(404);
  });

  it.each([
    ['no key', 401, null],
    ['a wrong key', 401, `lko_${'x'.repeat(43)}`],
    ['a revoked key', 401, 'REVOKED'],
    ["a tenant's secret key", 403, 'TENANT'],
  ])(
    'operator REST with %s answers %i problem+json and creates nothing',
    async (_, status, key) => {
      const before = await tenantCount();
      const presented =
        key === 'REVOKED' ? revokedKey : key === 'TENANT' ? tenantKeys.secretKey : key;
      for (const [path, init] of [
        ['/v1/operator/tenants', { method: 'POST', body: JSON.stringify({ name: 'Nope' }) }],
        ['/v1/operator/tenants', {}],
        [
          `/v1/operator/tenants/${ids[1]}`,
          { method: 'PATCH', body: JSON.stringify({ name: 'x' }) },
        ],
      ] as const) {
        const res = await operator(path, { ...init, key: presented });
        expect(res.status).toBe(status);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        const problem = await json(res);
        expect(problem.code).toBe(status === 401 ? 'unauthorized' : 'forbidden');
        if (presented) expect(JSON.stringify(problem)).not.toContain(presented);
      }
      expect(await tenantCount()).toBe(before);
    },
  );

  it.each([
    ['no name', 422, {}],
    ['an unknown plan', 422, { name: 'X', plan: 'gold' }],
    ['limits off the enterprise plan', 422, { name: 'X', plan: 'free', rps: 5 }],
    ['a bad origin', 422, { name: 'X', allowedOrigins: ['ftp://x'] }],
    ['an unknown field', 422, { name: 'X', colour: 'red' }],
    ['a wrong type', 400, { name: 42 }],
  ])('operator REST refuses a create with %s (%i) and creates nothing', async (_, status, body) => {
    const before = await tenantCount();
    const res = await operator('/v1/operator/tenants', {
      method: 'POST',
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(await tenantCount()).toBe(before);
  });

  it('operator REST refuses a bad update (422) and changes nothing', async () => {
    const id = ids[7] as string;
    const before = await json(await operator(`/v1/operator/tenants/${id}`));
    const res = await operator(`/v1/operator/tenants/${id}`, {
      method: 'PATCH',
      body: JSON.stringify({ name: 'Fine', accessTokenTtl: 5 }),
    });
    expect(res.status).toBe(422);
    expect((await json(res)).errors[0].path).toBe('/accessTokenTtl');
    expect(await json(await operator(`/v1/operator/tenants/${id}`))).toEqual(before);
  });
});
