/**
 * RFC 6749 section 5.1: an answer that carries a token or a user's data is never stored by
 * a cache (`Cache-Control: no-store`), and no JSON answer is sniffed into another type.
 */
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Body,
  DIALECTS,
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const PASSWORD = 'correct horse battery staple';
const PRIVATE = /^(GET|POST|PATCH|DELETE) \/v1\/(auth|users|sessions)/;

describe.each(DIALECTS)('cache headers on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;

  beforeAll(async () => {
    app = await startApp(dialect);
    t = await app.tenant({ allowedOrigins: ['https://app.example'] });
  });
  afterAll(() => app.dispose());

  const call = (method: string, path: string, body?: unknown) =>
    app.request(path, {
      method,
      headers: {
        authorization: `Bearer ${t.secretKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  /** Every private route, called as a client that succeeds would call it. */
  async function successfulCalls(): Promise<Map<string, Response>> {
    const address = email();
    const seen = new Map<string, Response>();
    const record = async (route: string, res: Response, status: number) => {
      expect(res.status, route).toBe(status);
      seen.set(route, res);
      return res.status === 204 ? {} : ((await res.clone().json()) as Body);
    };
    const user = await record(
      'POST /v1/auth/sign-up',
      await call('POST', '/v1/auth/sign-up', { email: address, password: PASSWORD }),
      201,
    );
    const tokens = await record(
      'POST /v1/auth/sign-in',
      await call('POST', '/v1/auth/sign-in', { email: address, password: PASSWORD }),
      200,
    );
    const next = await record(
      'POST /v1/auth/token',
      await call('POST', '/v1/auth/token', { refreshToken: tokens.refreshToken }),
      200,
    );
    await record(
      'POST /v1/auth/sign-out',
      await call('POST', '/v1/auth/sign-out', { refreshToken: next.refreshToken }),
      204,
    );
    await record('GET /v1/users', await call('GET', `/v1/users?email=${address}`), 200);
    await record('GET /v1/users/:userId', await call('GET', `/v1/users/${user.userId}`), 200);
    await record(
      'PATCH /v1/users/:userId',
      await call('PATCH', `/v1/users/${user.userId}`, { name: 'Ada' }),
      200,
    );
    await record(
      'GET /v1/users/:userId/sessions',
      await call('GET', `/v1/users/${user.userId}/sessions`),
      200,
    );
    const again = await json(
      await call('POST', '/v1/auth/sign-in', { email: address, password: PASSWORD }),
    );
    await record(
      'DELETE /v1/sessions/:sessionId',
      await call('DELETE', `/v1/sessions/${again.sessionId}`),
      204,
    );
    await record(
      'DELETE /v1/users/:userId/sessions',
      await call('DELETE', `/v1/users/${user.userId}/sessions`),
      204,
    );
    // Second factors (docs/design.md §13): an app enrolled, confirmed, listed; codes; the
    // sign-in it then asks for, finished; the app removed.
    const factor = await record(
      'POST /v1/users/:userId/factors',
      await call('POST', `/v1/users/${user.userId}/factors`, { type: 'totp' }),
      201,
    );
    const step = Math.floor(Date.now() / 1000);
    await record(
      'POST /v1/users/:userId/factors/:factorId/confirm',
      await call('POST', `/v1/users/${user.userId}/factors/${factor.id}/confirm`, {
        code: generateSync({ secret: factor.secret, epoch: step - 30 }),
      }),
      200,
    );
    await record(
      'GET /v1/users/:userId/factors',
      await call('GET', `/v1/users/${user.userId}/factors`),
      200,
    );
    await record(
      'POST /v1/users/:userId/recovery-codes',
      await call('POST', `/v1/users/${user.userId}/recovery-codes`),
      201,
    );
    const pending = await json(
      await call('POST', '/v1/auth/sign-in', { email: address, password: PASSWORD }),
    );
    await record(
      'POST /v1/auth/sign-in/verify',
      await call('POST', '/v1/auth/sign-in/verify', {
        mfaToken: pending.mfaToken,
        code: generateSync({ secret: factor.secret, epoch: step }),
      }),
      200,
    );
    await record(
      'DELETE /v1/users/:userId/factors/:factorId',
      await call('DELETE', `/v1/users/${user.userId}/factors/${factor.id}`),
      204,
    );
    await record('DELETE /v1/users/:userId', await call('DELETE', `/v1/users/${user.userId}`), 204);
    return seen;
  }

  it('every answer of /v1/auth, /v1/users and /v1/sessions is no-store and nosniff', async () => {
    const seen = await successfulCalls();
    // Every such route of the app is called above: a new one must be added here.
    expect([...seen.keys()].sort()).toEqual(app.routes.filter((r) => PRIVATE.test(r)).sort());
    for (const [route, res] of seen) {
      expect(res.headers.get('cache-control'), route).toBe('no-store');
      expect(res.headers.get('x-content-type-options'), route).toBe('nosniff');
    }
  });

  it('introspection answers are no-store and nosniff on both of its paths', async () => {
    const address = email();
    await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD });
    const { accessToken } = await json(
      await postJson(app, '/v1/auth/sign-in', t.secretKey, { email: address, password: PASSWORD }),
    );
    // JSON takes the fast path; a form-encoded body goes through Fastify.
    const fast = await postJson(app, '/api/auth/introspect', t.secretKey, { token: accessToken });
    const form = await app.request('/api/auth/introspect', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${t.secretKey}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token: accessToken }),
    });
    for (const res of [fast, form]) {
      expect((await json(res)).active).toBe(true);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('every other JSON answer is nosniff too, and only public documents are cacheable', async () => {
    const answers = {
      config: await app.request(`/public/config?pk=${t.publishableKey}`),
      jwks: await app.request(`/t/${t.tenant.id}/.well-known/jwks.json`),
      discovery: await app.request(`/t/${t.tenant.id}/.well-known/openid-configuration`),
      openapi: await app.request('/v1/openapi.json'),
      health: await app.request('/healthz'),
      problem: await app.request('/v1/users', { headers: { authorization: 'Bearer nope' } }),
      unknown: await app.request('/v1/nothing-here'),
    };
    for (const [name, res] of Object.entries(answers)) {
      expect(res.headers.get('content-type'), name).toMatch(/json/);
      expect(res.headers.get('x-content-type-options'), name).toBe('nosniff');
    }
    expect(answers.config.headers.get('cache-control')).toMatch(/^public/);
    expect(answers.jwks.headers.get('cache-control')).toMatch(/^public/);
    for (const name of ['health', 'problem', 'unknown'] as const)
      expect(answers[name].headers.get('cache-control'), name).toBe('no-store');
  });
});
