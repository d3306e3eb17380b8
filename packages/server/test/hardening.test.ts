/** Inputs that once reached the database or the stack unchecked: each gets a clear 4xx now. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

describe.each(DIALECTS)('hostile input on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;
  const get = (path: string) =>
    app.request(path, { headers: { authorization: `Bearer ${t.secretKey}` } });

  beforeAll(async () => {
    app = await startApp(dialect);
    t = await app.tenant();
  });
  afterAll(() => app.dispose());

  async function problem(res: Response, status: number, code: string) {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await json(res)).code).toBe(code);
  }

  it('refuses NUL characters in bodies, queries and paths', async () => {
    await problem(
      await postJson(app, '/v1/auth/sign-up', t.secretKey, {
        email: 'a\u0000@example.com',
        password: PASSWORD,
      }),
      400,
      'invalid_request',
    );
    await problem(
      await postJson(app, '/v1/auth/sign-in', t.secretKey, {
        email: 'a\u0000@example.com',
        password: PASSWORD,
      }),
      400,
      'invalid_request',
    );
    await problem(await get('/v1/users?email=a%00b'), 400, 'invalid_request');
    await problem(
      await app.request('/v1/sessions/%00', {
        method: 'DELETE',
        headers: { authorization: `Bearer ${t.secretKey}` },
      }),
      400,
      'invalid_request',
    );
  });

  it('refuses cursors it never issued, and unknown session ids', async () => {
    for (const forged of [
      [1e308, 'x'],
      [1, 'x\u0000'],
      [-1, '00000000-0000-4000-8000-000000000000'],
      'nope',
    ]) {
      const cursor = Buffer.from(JSON.stringify(forged)).toString('base64url');
      await problem(await get(`/v1/users?cursor=${cursor}`), 400, 'invalid_request');
    }
    await problem(
      await app.request('/v1/sessions/not-a-uuid', {
        method: 'DELETE',
        headers: { authorization: `Bearer ${t.secretKey}` },
      }),
      404,
      'not_found',
    );
  });

  it('refuses deeply nested metadata with 422, not a stack overflow', async () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const res = await postJson(
      app,
      '/v1/auth/sign-up',
      t.secretKey,
      `{"email":"${email()}","password":"${PASSWORD}","metadata":{"a":${deep}}}`,
    );
    await problem(res, 422, 'validation_failed');
    const ok = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
      email: email(),
      password: PASSWORD,
      metadata: { a: { b: { c: [1, [2]] } } },
    });
    expect(ok.status).toBe(201);
  });

  it('answers a malformed URL with a problem document that does not echo it', async () => {
    const res = await get('/v1/users/%ff%fe');
    await problem(res, 400, 'invalid_request');
  });

  it("introspection reports the user's current roles, not the token's", async () => {
    const address = email();
    const { userId } = await json(
      await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD }),
    );
    const { accessToken } = await json(
      await postJson(app, '/v1/auth/sign-in', t.secretKey, { email: address, password: PASSWORD }),
    );
    const roles = async () =>
      (await json(await postJson(app, '/api/auth/introspect', t.secretKey, { token: accessToken })))
        .roles;
    expect(await roles()).toEqual([]);
    const patch = await app.request(`/v1/users/${userId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${t.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ roles: ['admin'] }),
    });
    expect(patch.status).toBe(200);
    expect(await roles()).toEqual(['admin']);
  });
});
