/**
 * The sign-in fast path (node:http in front of Fastify): it answers a password sign-in
 * exactly as the Fastify route does, with the route's own signIn(); a refusal signIn()
 * reached is written by Fastify without the attempt being made or counted twice; and
 * everything it does not take goes to Fastify before any work, body replayed and plan
 * counted once.
 */
import { createLocalJWKSet, decodeJwt, type JSONWebKeySet, jwtVerify } from 'jose';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaults } from '../src/config/defaults.js';
import { signInFastPath } from '../src/http/sign-in-fast-path.js';
import type { DialectName } from '../src/storage/index.js';
import {
  DIALECTS,
  email,
  type FastPathServer,
  fastPathServer,
  HAVE_REDIS,
  json,
  postJson,
  REDIS_URL,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const PATH = '/v1/auth/sign-in';
const PASSWORD = 'correct horse battery staple';
const codeOf = (secret: string, offset = 0) =>
  generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + offset * 30 });
// PostgreSQL instances cache keys (and so take the fast path) only while Redis carries invalidations.
const MODES: { name: string; dialect: DialectName; env: Record<string, string> }[] = [];
for (const dialect of DIALECTS) {
  if (dialect === 'sqlite') MODES.push({ name: 'sqlite', dialect, env: {} });
  else if (HAVE_REDIS) MODES.push({ name: 'postgres + redis', dialect, env: { REDIS_URL } });
}

describe.each(MODES)('sign-in fast path on $name', ({ dialect, env }) => {
  let app: TestApp;
  let t: TestTenant;
  let server: FastPathServer;

  const headersOf = (tenant: TestTenant, more: Record<string, string> = {}) => ({
    authorization: `Bearer ${tenant.secretKey}`,
    'content-type': 'application/json',
    ...more,
  });
  const db = () => app.ctx.database.db;

  /** A new user of the tenant, signed up through the API. */
  async function signedUp(password = PASSWORD) {
    const address = email('fast');
    const up = await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password });
    expect(up.status).toBe(201);
    return address;
  }

  beforeAll(async () => {
    // Failures are slowed past five on an account: not waited for here.
    app = await startApp(dialect, {
      env,
      signInPolicy: { ...defaults.signInFailures, wait: async () => {} },
    });
    t = await app.tenant();
    // The real fast path over the real Fastify router, counting who answered.
    server = await fastPathServer(app, PATH, (hooks) =>
      signInFastPath(app.ctx, { ...hooks, log: app.app.log }),
    );
    // The key in memory: its first use goes the long way.
    await signedUp();
    await server.send('{}', headersOf(t));
  });
  afterAll(async () => {
    await server.close();
    await app.dispose();
  });

  const send = (body: string, headers: Record<string, string> = headersOf(t)) =>
    server.send(body, headers);
  const signIn = (address: string, password = PASSWORD, headers?: Record<string, string>) =>
    send(JSON.stringify({ email: address, password }), headers);
  /** The same request through Fastify alone. */
  const viaFastify = (body: unknown, headers: Record<string, string> = headersOf(t)) =>
    app.app.inject({
      method: 'POST',
      url: PATH,
      headers,
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('answers a sign-in itself, as the Fastify route does', async () => {
    const address = await signedUp();
    const fast = await signIn(address);
    expect(fast).toMatchObject({ status: 200, fast: 1, before: 0, after: 0 });
    const injected = await viaFastify({ email: address, password: PASSWORD });
    expect(injected.statusCode).toBe(200);
    const slow = JSON.parse(injected.body);
    // The same fields in the same order, the same user, the same kind of tokens.
    expect(Object.keys(fast.body)).toEqual(Object.keys(slow));
    expect(fast.body.user).toEqual(slow.user);
    expect(fast.body).toMatchObject({ tokenType: 'Bearer', expiresIn: slow.expiresIn });
    expect(fast.body.sessionId).not.toBe(slow.sessionId);
    expect(fast.body.refreshToken).toMatch(/^lkr_[\w-]{43}$/);
    for (const name of ['content-type', 'cache-control', 'x-content-type-options']) {
      expect(fast.headers.get(name)).toBe(injected.headers[name]);
    }
    expect(fast.headers.get('ratelimit-policy')).toBe(injected.headers['ratelimit-policy']);
    expect(fast.headers.get('ratelimit')).toMatch(/^"second";r=\d+;t=1, "minute";r=\d+;t=\d+$/);

    // Its access token: RFC 9068, signed by the tenant's key, for this session.
    const jwks = createLocalJWKSet(
      (await json(await app.request(`/t/${t.tenant.id}/.well-known/jwks.json`))) as JSONWebKeySet,
    );
    const issuer = `${app.ctx.config.publicUrl}/t/${t.tenant.id}`;
    const { payload } = await jwtVerify(fast.body.accessToken, jwks, {
      issuer,
      audience: `${issuer}/api`,
      typ: 'at+jwt',
      algorithms: ['RS256'],
    });
    const other = await jwtVerify(slow.accessToken, jwks, { issuer, typ: 'at+jwt' });
    expect(Object.keys(payload)).toEqual(Object.keys(other.payload));
    expect(payload).toMatchObject({
      sub: fast.body.user.id,
      sid: fast.body.sessionId,
      amr: ['pwd'],
    });
    // Its session is live, its refresh token works, and the user's last sign-in is recorded.
    const seen = await postJson(app, '/api/auth/introspect', t.secretKey, {
      token: fast.body.accessToken,
    });
    expect(await json(seen)).toMatchObject({ active: true, sid: fast.body.sessionId });
    const refreshed = await postJson(app, '/v1/auth/token', t.secretKey, {
      refreshToken: fast.body.refreshToken,
    });
    expect(refreshed.status).toBe(200);
  });

  it('records the address the caller names, else the peer, as the route does', async () => {
    const address = await signedUp();
    const named = await signIn(
      address,
      PASSWORD,
      headersOf(t, { 'latchkey-client-ip': ' 203.0.113.9 ' }),
    );
    const peer = await signIn(address);
    expect([named.fast, peer.fast]).toEqual([1, 1]);
    const ips = await db()
      .selectFrom('sessions')
      .select(['id', 'ip'])
      .where('id', 'in', [named.body.sessionId, peer.body.sessionId])
      .execute();
    const ipOf = (id: string) => ips.find((row) => row.id === id)?.ip;
    expect(ipOf(named.body.sessionId)).toBe('203.0.113.9');
    expect(ipOf(peer.body.sessionId)).toBe('127.0.0.1');
  });

  it("logs its answer at info as Fastify logs the route's answers", async () => {
    const address = await signedUp();
    const linesOf = () =>
      app.logs.lines
        .map((line) => JSON.parse(line))
        .filter((line) => line.req?.url === PATH && line.res?.statusCode === 200);
    const before = linesOf().length;
    const fast = await signIn(address);
    expect(fast.fast).toBe(1);
    // The same request through Fastify alone.
    const slow = await viaFastify({ email: address, password: PASSWORD });
    expect(slow.statusCode).toBe(200);
    const [ours, fastify] = linesOf().slice(before);
    expect(linesOf().length).toBe(before + 2);
    expect(Object.keys(ours).sort()).toEqual(Object.keys(fastify).sort());
    expect(ours).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { method: 'POST', url: PATH, remoteAddress: '127.0.0.1' },
      res: { statusCode: 200 },
    });
    expect(ours.reqId).toMatch(/^[0-9a-f-]{36}$/);
    expect(ours.responseTime).toBeGreaterThan(0);
    // Never the password, nor the tokens.
    expect(JSON.stringify(ours)).not.toContain(PASSWORD);
    expect(JSON.stringify(ours)).not.toContain(fast.body.refreshToken);
  });

  it('hands a refusal it reached to Fastify, counted once', async () => {
    const address = await signedUp();
    const headers = headersOf(t, { 'latchkey-client-ip': '198.51.100.7' });
    // One address may fail 10 times on one account; counted twice, it would be refused at 6.
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push(await signIn(address, 'wrong password!', headers));
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 401, fast: 0, before: 0, after: 1 });
      expect(answer.body).toMatchObject({ code: 'invalid_credentials' });
      expect(answer.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    }
    const injected = await viaFastify({ email: address, password: 'wrong password!' }, headers);
    expect(injected.statusCode).toBe(429);
    const eleventh = await signIn(address, PASSWORD, headers);
    expect(eleventh).toMatchObject({ status: 429, after: 1 });
    expect(eleventh.headers.get('retry-after')).toMatch(/^\d+$/);
    // An unknown address gets the same refusal, the same way.
    const unknown = await signIn(email('nobody'));
    expect(unknown).toMatchObject({ status: 401, after: 1 });
    expect(unknown.body.code).toBe('invalid_credentials');
  });

  it('asks for the second factor once: one challenge, its token redeemable', async () => {
    const address = await signedUp();
    const user = await db()
      .selectFrom('users')
      .select('id')
      .where('tenant_id', '=', t.tenant.id)
      .where('email', '=', address)
      .executeTakeFirstOrThrow();
    const started = await postJson(app, `/v1/users/${user.id}/factors`, t.secretKey, {
      type: 'totp',
    });
    const factor = await json(started);
    const confirmed = await postJson(
      app,
      `/v1/users/${user.id}/factors/${factor.id}/confirm`,
      t.secretKey,
      { code: codeOf(factor.secret) },
    );
    expect(confirmed.status).toBe(200);
    const challenges = async () =>
      Number(
        (
          await db()
            .selectFrom('mfa_challenges')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('user_id', '=', user.id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const answer = await signIn(address);
    expect(answer).toMatchObject({ status: 403, fast: 0, before: 0, after: 1 });
    expect(answer.body).toMatchObject({ code: 'mfa_required', factors: ['totp'] });
    expect(await challenges()).toBe(1);
    const verified = await postJson(app, '/v1/auth/sign-in/verify', t.secretKey, {
      mfaToken: answer.body.mfaToken,
      code: codeOf(factor.secret, 1),
    });
    expect(verified.status).toBe(200);
    expect(decodeJwt((await json(verified)).accessToken).amr).toEqual(['pwd', 'otp', 'mfa']);
  });

  it('leaves to Fastify, before any work, what the route refuses or reads differently', async () => {
    const address = await signedUp();
    const cases: { body: string; headers?: Record<string, string>; status: number }[] = [
      { body: JSON.stringify({ email: address }), status: 422 },
      { body: JSON.stringify({ email: address, password: PASSWORD, extra: 1 }), status: 422 },
      { body: JSON.stringify({ email: address, password: 42 }), status: 400 },
      { body: JSON.stringify({ email: '', password: PASSWORD }), status: 422 },
      { body: JSON.stringify({ email: 'x'.repeat(255), password: PASSWORD }), status: 422 },
      { body: JSON.stringify({ email: address, password: '\u0000' }), status: 400 },
      { body: JSON.stringify([address, PASSWORD]), status: 400 },
      { body: '{"email": "a@b.c", "password": ', status: 400 },
      {
        body: `{"email": ${JSON.stringify(address)}, "password": "${PASSWORD}", "__proto__": {"a": 1}}`,
        status: 400,
      },
    ];
    for (const c of cases) {
      const answer = await send(c.body, c.headers);
      const injected = await viaFastify(c.body, c.headers);
      expect({ body: c.body, status: answer.status, fast: answer.fast }).toEqual({
        body: c.body,
        status: injected.statusCode,
        fast: injected.statusCode === 200 ? 1 : 0,
      });
      expect(answer.status).toBe(c.status);
      if (answer.status !== 200) {
        expect(answer.after).toBe(1);
        expect(answer.body).toEqual(JSON.parse(injected.body));
      }
    }
    // A browser's request (Origin) with a secret key, a wrong key, another type: never read.
    const browser = await signIn(
      address,
      PASSWORD,
      headersOf(t, { origin: 'https://app.example' }),
    );
    expect(browser).toMatchObject({ status: 403, before: 1, after: 0 });
    const wrongKey = await signIn(address, PASSWORD, {
      authorization: 'Bearer sk_test_wrong',
      'content-type': 'application/json',
    });
    expect(wrongKey).toMatchObject({ status: 401, before: 1 });
    const form = await send(`email=${encodeURIComponent(address)}&password=x`, {
      authorization: `Bearer ${t.secretKey}`,
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form).toMatchObject({ status: 415, before: 1 });
    // A password of astral characters longer than the limit in UTF-16 units, not in code
    // points: Fastify's schema decides (and accepts it).
    const astral = '😀'.repeat(600);
    const long = await signedUp(astral);
    const accepted = await signIn(long, astral);
    expect(accepted).toMatchObject({ status: 200, fast: 0, after: 1 });
  });
});

describe('sign-in fast path behind a trusted proxy', () => {
  it('leaves the request to Fastify, which reads the address from X-Forwarded-For', async () => {
    const app = await startApp('sqlite', { env: { TRUST_PROXY: 'true' } });
    try {
      const t = await app.tenant();
      const server = await fastPathServer(app, PATH, (hooks) =>
        signInFastPath(app.ctx, { ...hooks, log: app.app.log }),
      );
      const address = email('proxied');
      await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD });
      const headers = {
        authorization: `Bearer ${t.secretKey}`,
        'content-type': 'application/json',
        'x-forwarded-for': '192.0.2.44',
      };
      const body = JSON.stringify({ email: address, password: PASSWORD });
      // Twice: the first brings the key into memory.
      const first = await server.send(body, headers);
      const second = await server.send(body, headers);
      expect(second.status).toBe(200);
      expect([first, second].map((a) => [a.fast, a.before])).toEqual([
        [0, 1],
        [0, 1],
      ]);
      const { sessionId } = JSON.parse(second.text);
      const row = await app.ctx.database.db
        .selectFrom('sessions')
        .select('ip')
        .where('id', '=', sessionId)
        .executeTakeFirstOrThrow();
      expect(row.ip).toBe('192.0.2.44');
      await server.close();
    } finally {
      await app.dispose();
    }
  });
});

describe('sign-in fast path during shutdown', () => {
  it('answers a refusal it already reached as it is, not 503, and logs its whole time', async () => {
    let onSlowed: (() => Promise<void>) | undefined;
    // The sixth failure on an account is slowed: the shutdown starts during that wait.
    const app = await startApp('sqlite', {
      signInPolicy: { ...defaults.signInFailures, wait: async () => onSlowed?.() },
    });
    let closed: Promise<void> | undefined;
    try {
      const t = await app.tenant();
      const address = email('closing');
      await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD });
      const wrong = () =>
        postJson(app, PATH, t.secretKey, { email: address, password: 'wrong password!' });
      for (let i = 0; i < 5; i++) expect((await wrong()).status).toBe(401);
      onSlowed = async () => {
        closed = app.app.close();
        await new Promise((resolve) => setTimeout(resolve, 150));
      };
      const sixth = await wrong();
      expect(sixth.status).toBe(401);
      expect((await json(sixth)).code).toBe('invalid_credentials');
      // Its line counts from its arrival: the wait included, not from the hand-over.
      const line = app.logs.lines
        .map((l) => JSON.parse(l))
        .filter((l) => l.req?.url === PATH && l.res?.statusCode === 401)
        .at(-1);
      expect(line.responseTime).toBeGreaterThanOrEqual(150);
      await closed;
    } finally {
      await (closed ?? app.app.close()).catch(() => {});
      await app.dispose().catch(() => {});
    }
  });
});
