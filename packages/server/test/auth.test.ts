import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localBus } from '../src/cache/invalidation.js';
import { createKey, revokeKey } from '../src/modules/keys/index.js';
import { openDatabase } from '../src/storage/index.js';
import {
  DIALECTS,
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const body = () => ({ email: email(), password: 'correct horse battery' });

describe.each(DIALECTS)('keys on the wire on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;

  beforeAll(async () => {
    app = await startApp(dialect);
    t = await app.tenant();
  });
  afterAll(() => app.dispose());

  async function expectProblem(res: Response, status: number, code: string) {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = await json(res);
    expect(problem).toMatchObject({ status, code });
    return problem;
  }

  it.each([
    ['no Authorization header', undefined],
    ['an empty bearer', 'Bearer '],
    ['another scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
    ['an unknown key of the right shape', `Bearer sk_test_${'A'.repeat(43)}`],
    ['garbage', 'Bearer !!!@@@###\u00ff'],
    ['a 4 KB bearer', `Bearer ${'k'.repeat(4096)}`],
    ['a key with a trailing character', 'TRAILING'],
  ])('%s -> 401 unauthorized', async (_name, header) => {
    const value = header === 'TRAILING' ? `Bearer ${t.secretKey}x` : header;
    const res = await app.request('/v1/auth/sign-up', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(value ? { authorization: value } : {}) },
      body: JSON.stringify(body()),
    });
    const problem = await expectProblem(res, 401, 'unauthorized');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(JSON.stringify(problem)).not.toContain(t.secretKey);
  });

  it('accepts the scheme in any case', async () => {
    const res = await app.request('/v1/auth/sign-up', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `bearer ${t.secretKey}` },
      body: JSON.stringify(body()),
    });
    expect(res.status).toBe(201);
  });

  it('refuses a publishable key on a secret endpoint with 403', async () => {
    await expectProblem(
      await postJson(app, '/v1/auth/sign-up', t.publishableKey, body()),
      403,
      'forbidden',
    );
  });

  it('refuses a secret key without the scope with 403', async () => {
    const { plaintext } = await createKey(app.ctx.database.db, t.tenant.id, {
      kind: 'secret',
      scopes: ['users:read'],
    });
    const problem = await expectProblem(
      await postJson(app, '/v1/auth/sign-up', plaintext, body()),
      403,
      'forbidden',
    );
    expect(problem.detail).toContain('users:write');
  });

  it('keeps several keys live at once, and a revoked one stops at once', async () => {
    const db = app.ctx.database.db;
    const second = await createKey(db, t.tenant.id, { kind: 'secret' });
    expect((await postJson(app, '/v1/auth/sign-up', t.secretKey, body())).status).toBe(201);
    expect((await postJson(app, '/v1/auth/sign-up', second.plaintext, body())).status).toBe(201);
    // Revoked the way the CLI does it: from another process's connection.
    const cli = openDatabase(app.ctx.config.databaseUrl, { poolSize: 1 });
    await revokeKey({ db: cli.db, bus: localBus({ cache: false }) }, t.tenant.id, second.key.id);
    await cli.close();
    await expectProblem(
      await postJson(app, '/v1/auth/sign-up', second.plaintext, body()),
      401,
      'unauthorized',
    );
    expect((await postJson(app, '/v1/auth/sign-up', t.secretKey, body())).status).toBe(201);
  });

  it('answers 401 before reading a body, so an unauthenticated 1 MB body costs nothing', async () => {
    const res = await postJson(app, '/v1/auth/sign-up', undefined, {
      email: 'a@example.com',
      password: 'x'.repeat(1024 * 1024),
    });
    await expectProblem(res, 401, 'unauthorized');
  });

  it('keys have at least 192 bits of randomness and never repeat', async () => {
    const db = app.ctx.database.db;
    const keys = await Promise.all(
      Array.from({ length: 20 }, () => createKey(db, t.tenant.id, { kind: 'secret' })),
    );
    const randoms = keys.map((k) => k.plaintext.slice('sk_test_'.length));
    expect(new Set(randoms).size).toBe(20);
    for (const r of randoms) expect(r.length * Math.log2(62)).toBeGreaterThanOrEqual(192);
    const production = await app.tenant({ environment: 'production' });
    expect(production.secretKey).toMatch(/^sk_prod_[0-9A-Za-z]{43}$/);
    expect(production.publishableKey).toMatch(/^pk_live_[0-9A-Za-z]{43}$/);
  });

  it('answers unknown routes and methods with problem documents', async () => {
    await expectProblem(await app.request('/v1/nothing-here'), 404, 'not_found');
    const wrongMethod = await app.request('/v1/auth/sign-up');
    await expectProblem(wrongMethod, 405, 'method_not_allowed');
    expect(wrongMethod.headers.get('allow')).toBe('POST');
  });
});
