import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../src/modules/keys/index.js';
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

describe.each(DIALECTS)('user management on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;
  const call = (method: string, path: string, body?: unknown, key = t.secretKey) =>
    app.request(path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  beforeAll(async () => {
    app = await startApp(dialect);
    t = await app.tenant();
  });
  afterAll(() => app.dispose());

  async function signUp(tenant = t, address = email()) {
    const res = await postJson(app, '/v1/auth/sign-up', tenant.secretKey, {
      email: address,
      password: PASSWORD,
      name: 'N',
    });
    return (await json(res)).userId as string;
  }

  it('gets a user, without any password material', async () => {
    const id = await signUp();
    const res = await call('GET', `/v1/users/${id}`);
    expect(res.status).toBe(200);
    const user = await json(res);
    expect(Object.keys(user).sort()).toEqual(
      [
        'createdAt',
        'disabled',
        'email',
        'emailVerified',
        'id',
        'metadata',
        'name',
        'roles',
        'updatedAt',
      ].sort(),
    );
    expect(JSON.stringify(user)).not.toMatch(/argon|password/i);
    expect((await call('GET', '/v1/users/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await call('GET', '/v1/users/not-a-uuid')).status).toBe(404);
  });

  it("never shows another tenant's user", async () => {
    const other = await app.tenant();
    const id = await signUp(other);
    expect((await call('GET', `/v1/users/${id}`)).status).toBe(404);
    expect((await call('PATCH', `/v1/users/${id}`, { name: 'x' })).status).toBe(404);
    expect((await call('DELETE', `/v1/users/${id}`)).status).toBe(404);
    expect((await call('GET', `/v1/users/${id}`, undefined, other.secretKey)).status).toBe(200);
  });

  it('lists users oldest first with a cursor, and filters by e-mail case-insensitively', async () => {
    const tenant = await app.tenant();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await signUp(tenant, `Page${i}@Example.com`));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=2&cursor=${cursor}` : '?limit=2';
      const page = await json(await call('GET', `/v1/users${query}`, undefined, tenant.secretKey));
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((u: { id: string }) => u.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    const filtered = await json(
      await call('GET', '/v1/users?email=PAGE3@example.COM', undefined, tenant.secretKey),
    );
    expect(filtered.data.map((u: { id: string }) => u.id)).toEqual([ids[3]]);
    for (const bad of [
      '?limit=0',
      '?limit=101',
      '?limit=abc',
      '?cursor=%%%',
      '?cursor=bm9wZQ',
      '?unknown=1',
    ]) {
      const res = await call('GET', `/v1/users${bad}`, undefined, tenant.secretKey);
      expect([400, 422], bad).toContain(res.status);
    }
  });

  it('updates name, metadata and roles; new tokens carry the roles', async () => {
    const address = email();
    const id = await signUp(t, address);
    const res = await call('PATCH', `/v1/users/${id}`, {
      name: ' Grace ',
      metadata: { tier: 2 },
      roles: ['admin', 'billing:read'],
    });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({
      name: 'Grace',
      metadata: { tier: 2 },
      roles: ['admin', 'billing:read'],
    });
    const signIn = await json(
      await postJson(app, '/v1/auth/sign-in', t.secretKey, { email: address, password: PASSWORD }),
    );
    const claims = await json(
      await postJson(app, '/api/auth/introspect', t.secretKey, { token: signIn.accessToken }),
    );
    expect(claims.roles).toEqual(['admin', 'billing:read']);
  });

  it('refuses bad updates and changes nothing', async () => {
    const id = await signUp();
    const before = await json(await call('GET', `/v1/users/${id}`));
    for (const [body, status] of [
      [{}, 422],
      [{ roles: ['has space'] }, 422],
      [{ roles: 'admin' }, 400],
      [{ disabled: 'yes' }, 400],
      [{ email: 'new@example.com' }, 422],
      [{ metadata: { constructor: 1 } }, 422],
      [{ name: 'n'.repeat(201) }, 422],
    ] as const) {
      const res = await call('PATCH', `/v1/users/${id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
    }
    expect(await json(await call('GET', `/v1/users/${id}`))).toEqual(before);
  });

  it('lists and revokes sessions, one or all', async () => {
    const address = email();
    const id = await signUp(t, address);
    const a = await json(
      await postJson(app, '/v1/auth/sign-in', t.secretKey, { email: address, password: PASSWORD }),
    );
    const b = await json(
      await postJson(app, '/v1/auth/sign-in', t.secretKey, { email: address, password: PASSWORD }),
    );
    const list = await json(await call('GET', `/v1/users/${id}/sessions`));
    expect(list.data.map((s: { id: string }) => s.id).sort()).toEqual(
      [a.sessionId, b.sessionId].sort(),
    );
    expect(list.data[0]).toMatchObject({ userId: id, revokedAt: null, ip: '127.0.0.1' });
    expect((await call('DELETE', `/v1/sessions/${a.sessionId}`)).status).toBe(204);
    expect((await call('DELETE', `/v1/users/${id}/sessions`)).status).toBe(204);
    const after = await json(await call('GET', `/v1/users/${id}/sessions`));
    expect(after.data.every((s: { revokedAt: string | null }) => s.revokedAt !== null)).toBe(true);
    const reasons = after.data.map((s: { id: string; revokedReason: string }) => [
      s.id,
      s.revokedReason,
    ]);
    expect(Object.fromEntries(reasons)).toEqual({
      [a.sessionId]: 'revoked',
      [b.sessionId]: 'revoked',
    });
    expect((await call('DELETE', '/v1/sessions/00000000-0000-4000-8000-000000000000')).status).toBe(
      404,
    );
  });

  it('deletes a user and every session; the address can sign up again', async () => {
    const address = email();
    const id = await signUp(t, address);
    expect((await call('DELETE', `/v1/users/${id}`)).status).toBe(204);
    expect((await call('GET', `/v1/users/${id}`)).status).toBe(404);
    expect((await call('DELETE', `/v1/users/${id}`)).status).toBe(404);
    expect(await signUp(t, address)).not.toBe(id);
  });

  it('enforces scopes: users:read cannot write, users:write cannot revoke sessions', async () => {
    const id = await signUp();
    const reader = await createKey(app.ctx.database.db, t.tenant.id, {
      kind: 'secret',
      scopes: ['users:read'],
    });
    const writer = await createKey(app.ctx.database.db, t.tenant.id, {
      kind: 'secret',
      scopes: ['users:write'],
    });
    expect((await call('GET', `/v1/users/${id}`, undefined, reader.plaintext)).status).toBe(200);
    expect((await call('PATCH', `/v1/users/${id}`, { name: 'x' }, reader.plaintext)).status).toBe(
      403,
    );
    expect((await call('GET', `/v1/users/${id}`, undefined, writer.plaintext)).status).toBe(403);
    expect(
      (await call('DELETE', `/v1/users/${id}/sessions`, undefined, writer.plaintext)).status,
    ).toBe(403);
  });
});

describe.each(DIALECTS)('failed sign-ins are slowed, then refused, on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;
  const waits: number[] = [];
  const policy = {
    windowSeconds: 60,
    account: { slowAfter: 2, challengeAfter: 4, perAddress: 2 },
    accountAddress: { refuseAfter: 6 },
    address: { refuseAfter: 8 },
    knownAddressSeconds: 3600,
    slowStepMs: 150,
    slowMaxMs: 1000,
    // The waits are recorded, not slept: the test asserts how long each attempt was held.
    wait: async (ms: number) => {
      waits.push(ms);
    },
  };
  const signIn = (address: string, password: string, ip?: string) =>
    app.request('/v1/auth/sign-in', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${t.secretKey}`,
        'content-type': 'application/json',
        ...(ip ? { 'latchkey-client-ip': ip } : {}),
      },
      body: JSON.stringify({ email: address, password }),
    });

  beforeAll(async () => {
    app = await startApp(dialect, { signInPolicy: policy });
    t = await app.tenant();
  });
  afterAll(() => app.dispose());

  it('per account: slowed after the threshold; past the limit a new address must confirm, even with the right password', async () => {
    const address = email();
    await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD });
    const held: number[][] = [];
    for (let i = 0; i < 4; i++) {
      waits.length = 0;
      expect((await signIn(address, 'wrong-password', `192.0.2.${i}`)).status).toBe(401);
      held.push([...waits]);
    }
    // The 3rd and 4th failures waited 150 and 300 ms before the work began.
    expect(held).toEqual([[], [], [150], [300]]);
    const asked = await signIn(address, PASSWORD, '192.0.2.99');
    expect(asked.status).toBe(403);
    expect((await json(asked)).code).toBe('confirmation_required');
  });

  it('failures from elsewhere never lock the owner out at an address they signed in from', async () => {
    const address = email();
    await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD });
    expect((await signIn(address, PASSWORD, '198.51.100.7')).status).toBe(200);
    for (let i = 0; i < 4; i++)
      expect((await signIn(address, 'wrong-password', `192.0.2.${50 + i}`)).status).toBe(401);
    // Addresses the account was never signed in from must confirm...
    expect((await signIn(address, PASSWORD, '192.0.2.200')).status).toBe(403);
    // ...but not for its owner's known address (the same /64 for IPv6).
    expect((await signIn(address, PASSWORD, '198.51.100.7')).status).toBe(200);
    // Guessing from a known address (the owner's shared network) still ends there.
    for (let i = 0; i < 6; i++)
      expect((await signIn(address, 'wrong-password', '198.51.100.7')).status).toBe(401);
    expect((await signIn(address, PASSWORD, '198.51.100.7')).status).toBe(429);
  });

  it('counts IPv6 addresses by their /64', async () => {
    for (let i = 1; i <= 8; i++)
      expect((await signIn(email('v6'), 'bad-password', `2001:db8:1:2::${i}`)).status).toBe(401);
    expect((await signIn(email('v6'), 'bad-password', '2001:db8:1:2:ffff::9')).status).toBe(429);
    expect((await signIn(email('v6'), 'bad-password', '2001:db8:1:3::1')).status).toBe(401);
  });

  it('a success before the limit clears the count', async () => {
    const address = email();
    await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD });
    for (let i = 0; i < 3; i++)
      expect((await signIn(address, 'bad-password', '198.51.100.1')).status).toBe(401);
    expect((await signIn(address, PASSWORD, '198.51.100.1')).status).toBe(200);
    for (let i = 0; i < 3; i++)
      expect((await signIn(address, 'bad-password', '198.51.100.1')).status).toBe(401);
    expect((await signIn(address, PASSWORD, '198.51.100.1')).status).toBe(200);
  });

  it('parallel guesses cannot slip under the account limit', async () => {
    const address = email();
    await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD });
    const statuses = await Promise.all(
      Array.from({ length: 12 }, () => signIn(address, 'guess-password')),
    );
    // Without the client's address each attempt counts on the account: past 4 the answer
    // asks for proof (403), past the 6 of one address it refuses (429); never 401 again.
    expect(statuses.filter((r) => r.status === 401).length).toBeLessThanOrEqual(4);
    expect(statuses.filter((r) => r.status === 403 || r.status === 429).length).toBe(
      12 - statuses.filter((r) => r.status === 401).length,
    );
    expect(statuses.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(6);
  });

  it("without the end user's address, failures never lock out other users of the tenant", async () => {
    const address = email();
    await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD });
    // Many failures on many accounts, all from the customer's one backend (no Latchkey-Client-IP).
    for (let i = 0; i < 12; i++)
      expect((await signIn(email('wrong'), 'bad-password')).status).toBe(401);
    expect((await signIn(address, PASSWORD)).status).toBe(200);
  });

  it('per client address: many accounts from one address are refused; other addresses are not', async () => {
    for (let i = 0; i < 8; i++)
      expect((await signIn(email('spray'), 'bad-password', '203.0.113.5')).status).toBe(401);
    expect((await signIn(email('spray'), 'bad-password', '203.0.113.5')).status).toBe(429);
    expect((await signIn(email('spray'), 'bad-password', '203.0.113.6')).status).toBe(401);
  });
});
