/**
 * The refresh fast path (node:http in front of Fastify): it answers exactly as the Fastify
 * route does, writes the refreshes of one turn together (SQLite: one transaction;
 * PostgreSQL: one statement) with every rule of a rotation, and hands everything else over
 * (body replayed, plan counted once). Its writes never run inside another workflow's.
 */
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from 'jose';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshFastPath } from '../src/http/refresh-fast-path.js';
import { PostgresRefreshBatch, SqliteRefreshBatch } from '../src/modules/sessions/index.js';
import type { DialectName } from '../src/storage/index.js';
import {
  type Body,
  browserSignIn,
  DIALECTS,
  email,
  type FastPathServer,
  fastPathServer,
  HAVE_REDIS,
  json,
  postJson,
  REDIS_URL,
  signedIn,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const PATH = '/v1/auth/token';
// PostgreSQL instances cache keys (and so take the fast path) only while Redis carries invalidations.
const MODES: { name: string; dialect: DialectName; env: Record<string, string> }[] = [];
for (const dialect of DIALECTS) {
  if (dialect === 'sqlite') MODES.push({ name: 'sqlite', dialect, env: {} });
  else if (HAVE_REDIS) MODES.push({ name: 'postgres + redis', dialect, env: { REDIS_URL } });
}

describe.each(MODES)('refresh fast path on $name', ({ dialect, env }) => {
  let app: TestApp;
  let t: TestTenant;
  let server: FastPathServer;

  const headersOf = (tenant: TestTenant) => ({
    authorization: `Bearer ${tenant.secretKey}`,
    'content-type': 'application/json',
  });
  const db = () => app.ctx.database.db;
  const tokensOf = async (sessionId?: string) => {
    let query = db()
      .selectFrom('refresh_tokens')
      .select((eb) => eb.fn.countAll().as('n'));
    if (sessionId) query = query.where('session_id', '=', sessionId);
    return Number((await query.executeTakeFirstOrThrow()).n);
  };

  beforeAll(async () => {
    app = await startApp(dialect, { env });
    t = await app.tenant();
    // The real fast path over the real Fastify router, counting who answered.
    const deps = {
      db: app.ctx.database.db,
      signingKeys: app.ctx.signingKeys,
      authUrl: app.ctx.config.publicUrl,
    };
    const sqlite = app.ctx.database.sqlite;
    server = await fastPathServer(app, PATH, (hooks) =>
      refreshFastPath(
        sqlite ? new SqliteRefreshBatch({ ...deps, sqlite }) : new PostgresRefreshBatch(deps),
        app.ctx,
        hooks,
      ),
    );
    // The key and the signing key in memory: the first refresh goes the long way.
    const first = await signedIn(app, t);
    await server.send(JSON.stringify({ refreshToken: first.refreshToken }), headersOf(t));
  });
  afterAll(async () => {
    await server.close();
    await app.dispose();
  });

  const send = (body: string, headers: Record<string, string> = headersOf(t)) =>
    server.send(body, headers);
  const refresh = (refreshToken: unknown, headers?: Record<string, string>) =>
    send(JSON.stringify({ refreshToken }), headers);

  it('answers a refresh itself, as the Fastify route does', async () => {
    const a = await signedIn(app, t);
    const b = await signedIn(app, t);
    const fast = await refresh(a.refreshToken);
    expect(fast).toMatchObject({ status: 200, fast: 1, before: 0, after: 0 });
    const injected = await app.app.inject({
      method: 'POST',
      url: PATH,
      headers: headersOf(t),
      payload: JSON.stringify({ refreshToken: b.refreshToken }),
    });
    expect(injected.statusCode).toBe(200);
    const viaFastify = JSON.parse(injected.body);
    // The same fields in the same order, the same user, the same kind of tokens.
    expect(Object.keys(fast.body)).toEqual(Object.keys(viaFastify));
    expect(fast.body).toMatchObject({ tokenType: 'Bearer', expiresIn: viaFastify.expiresIn });
    expect(fast.body.sessionId).toBe(a.sessionId);
    expect(fast.body.user).toEqual(a.user);
    expect(fast.body.refreshToken).toMatch(/^lkr_[\w-]{43}$/);
    for (const name of ['content-type', 'cache-control', 'x-content-type-options']) {
      expect(fast.headers.get(name)).toBe(injected.headers[name]);
    }
    expect(fast.headers.get('ratelimit-policy')).toBe(injected.headers['ratelimit-policy']);
    expect(fast.headers.get('ratelimit')).toMatch(/^"second";r=\d+;t=1, "minute";r=\d+;t=\d+$/);

    // Its access token: RFC 9068, signed by the tenant's key, the session's own amr.
    const jwks = createLocalJWKSet(
      (await json(await app.request(`/t/${t.tenant.id}/.well-known/jwks.json`))) as JSONWebKeySet,
    );
    const issuer = `${app.ctx.config.publicUrl}/t/${t.tenant.id}`;
    const { payload, protectedHeader } = await jwtVerify(fast.body.accessToken, jwks, {
      issuer,
      audience: `${issuer}/api`,
      typ: 'at+jwt',
      algorithms: ['RS256'],
    });
    const other = await jwtVerify(viaFastify.accessToken, jwks, { issuer, typ: 'at+jwt' });
    expect(Object.keys(payload)).toEqual(Object.keys(other.payload));
    expect(protectedHeader).toEqual(decodeProtectedHeader(viaFastify.accessToken));
    expect(payload).toMatchObject({
      sub: a.user.id,
      sid: a.sessionId,
      tid: t.tenant.id,
      client_id: t.tenant.id,
      amr: ['pwd'],
      scope: 'openid email profile',
    });
    expect(payload.exp).toBe((payload.iat as number) + (fast.body.expiresIn as number));
    // And introspection says it is active.
    const seen = await postJson(app, '/api/auth/introspect', t.secretKey, {
      token: fast.body.accessToken,
    });
    expect(await json(seen)).toMatchObject({ active: true, sid: a.sessionId });
  });

  it('rotates: the new token works once, the used one gets a pair only within the grace', async () => {
    const s = await signedIn(app, t);
    const first = await refresh(s.refreshToken);
    expect(first).toMatchObject({ status: 200, fast: 1 });
    // Again at once (a second tab): handed over, and the grace gives it a pair too.
    const again = await refresh(s.refreshToken);
    expect(again).toMatchObject({ status: 200, fast: 0, after: 1 });
    expect(again.body.refreshToken).not.toBe(first.body.refreshToken);
    const next = await refresh(first.body.refreshToken);
    expect(next).toMatchObject({ status: 200, fast: 1 });
    // After the grace, a replay revokes the whole session.
    await sql`update refresh_tokens set used_at = used_at - 60000 where session_id = ${s.sessionId}`.execute(
      db(),
    );
    const replay = await refresh(s.refreshToken);
    expect(replay).toMatchObject({ status: 400, fast: 0, after: 1 });
    expect(replay.body).toMatchObject({ code: 'invalid_grant' });
    expect(replay.body.detail).toMatch(/revoked/);
    const dead = await refresh(next.body.refreshToken);
    expect(dead).toMatchObject({ status: 400, after: 1 });
    const row = await db()
      .selectFrom('sessions')
      .select('revoked_reason')
      .where('id', '=', s.sessionId)
      .executeTakeFirst();
    expect(row).toEqual({ revoked_reason: 'refresh_token_reused' });
  });

  it('writes the refreshes of one turn together, each one right', async () => {
    const sessions = await Promise.all(Array.from({ length: 12 }, () => signedIn(app, t)));
    const answers = await Promise.all(sessions.map((s) => refresh(s.refreshToken)));
    expect(answers.map((a) => a.status)).toEqual(sessions.map(() => 200));
    expect(answers.map((a) => a.body.sessionId)).toEqual(sessions.map((s) => s.sessionId));
    expect(answers.map((a) => a.body.user.id)).toEqual(sessions.map((s) => s.user.id));
    expect(new Set(answers.map((a) => a.body.refreshToken)).size).toBe(12);
    // The same token twice in one turn: one rotation, the other within the grace.
    const s = await signedIn(app, t);
    const twice = await Promise.all([refresh(s.refreshToken), refresh(s.refreshToken)]);
    expect(twice.map((a) => a.status)).toEqual([200, 200]);
    expect(twice[0]?.body.refreshToken).not.toBe(twice[1]?.body.refreshToken);
    expect(await tokensOf(s.sessionId)).toBe(3);
    for (const a of [...answers, ...twice]) {
      expect((await refresh(a.body.refreshToken)).status).toBe(200);
    }
  });

  it.runIf(dialect === 'postgres')(
    'on PostgreSQL writes one batch at a time, and those that arrive meanwhile together',
    async () => {
      // Each statement is a commit and a plan: a few refreshes per turn each in its own
      // statement cost PostgreSQL more than the refreshes themselves.
      let writing = 0;
      let most = 0;
      const sizes: number[] = [];
      class Probe extends PostgresRefreshBatch {
        protected override async write(batch: readonly unknown[]) {
          writing++;
          most = Math.max(most, writing);
          sizes.push(batch.length);
          try {
            return await super.write(batch as never);
          } finally {
            writing--;
          }
        }
      }
      const probe = new Probe({
        db: app.ctx.database.db,
        signingKeys: app.ctx.signingKeys,
        authUrl: app.ctx.config.publicUrl,
      });
      const tenant = (await app.ctx.keys.resolve(t.secretKey))?.tenant;
      if (!tenant) throw new Error('no tenant');
      const sessions = await Promise.all(Array.from({ length: 24 }, () => signedIn(app, t)));
      const answers = [];
      // Six turns of the event loop, four refreshes each.
      for (let turn = 0; turn < 6; turn++) {
        for (const s of sessions.slice(turn * 4, turn * 4 + 4))
          answers.push(probe.refresh(tenant, s.refreshToken));
        await new Promise((resolve) => setImmediate(resolve));
      }
      const done = await Promise.all(answers);
      expect(done.map((a) => a?.sessionId)).toEqual(sessions.map((s) => s.sessionId));
      expect(new Set(done.map((a) => a?.refreshToken)).size).toBe(24);
      expect(most).toBe(1);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(24);
      expect(sizes.length).toBeLessThan(6);
      // Each new token works, once.
      for (const a of done) expect((await refresh(a?.refreshToken)).status).toBe(200);
    },
  );

  it('never writes inside another workflow transaction, which may roll back', async () => {
    const s = await signedIn(app, t);
    let answered = false;
    const rolledBack = app.ctx.database.db
      .transaction()
      .execute(async (trx) => {
        await trx
          .updateTable('users')
          .set({ name: 'rolled back' })
          .where('id', '=', s.user.id)
          .execute();
        const pending = refresh(s.refreshToken).then((r) => {
          answered = true;
          return r;
        });
        await new Promise((resolve) => setTimeout(resolve, 150));
        // SQLite has one connection: the refresh waited for this transaction to end.
        if (dialect === 'sqlite') expect(answered).toBe(false);
        throw Object.assign(new Error('roll back'), { pending });
      })
      .catch((error: { pending: Promise<Awaited<ReturnType<typeof refresh>>> }) => error.pending);
    const r = await rolledBack;
    expect(r).toMatchObject({ status: 200, fast: 1 });
    expect(r.body.user.name).toBeNull();
    // Its rotation stands: the old token is used, the new one works.
    expect((await refresh(r.body.refreshToken)).status).toBe(200);
    const old = await db()
      .selectFrom('refresh_tokens')
      .select('used_at')
      .where('session_id', '=', s.sessionId)
      .orderBy('created_at')
      .executeTakeFirstOrThrow();
    expect(old.used_at).toEqual(expect.any(Number));
  });

  it('records the session use once a minute, not on every refresh', async () => {
    const s = await signedIn(app, t);
    const lastUsed = async () =>
      (
        await db()
          .selectFrom('sessions')
          .select('last_used_at')
          .where('id', '=', s.sessionId)
          .executeTakeFirstOrThrow()
      ).last_used_at;
    const old = Date.now() - 120_000;
    await db()
      .updateTable('sessions')
      .set({ last_used_at: old })
      .where('id', '=', s.sessionId)
      .execute();
    const first = await refresh(s.refreshToken);
    expect(first.fast).toBe(1);
    const touched = await lastUsed();
    expect(touched).toBeGreaterThan(old + 60_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await refresh(first.body.refreshToken)).fast).toBe(1);
    expect(await lastUsed()).toBe(touched);
  });

  it.each([
    ['a number', '{"refreshToken":42}', 400, 'invalid_request'],
    ['an empty token', '{"refreshToken":""}', 422, 'validation_failed'],
    ['an unknown token', '{"refreshToken":"lkr_unknown"}', 400, 'invalid_grant'],
    ['a unicode token', '{"refreshToken":"ŧøĸęñ🔑"}', 400, 'invalid_grant'],
    ['a NUL character', '{"refreshToken":"lkr_\\u0000"}', 400, 'invalid_request'],
    ['an extra field', '{"refreshToken":"lkr_x","scope":"admin"}', 422, 'validation_failed'],
    ['invalid JSON', '{"refreshToken":', 400, 'invalid_request'],
    ['an array', '["lkr_x"]', 400, 'invalid_request'],
    ['a huge body', JSON.stringify({ refreshToken: 'a'.repeat(2_000_000) }), 413, undefined],
  ])(
    'refuses %s with a problem, as Fastify does, and changes nothing',
    async (_name, body, status, code) => {
      const before = await tokensOf();
      const r = await send(body);
      expect(r).toMatchObject({ status, fast: 0 });
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      if (code) expect(r.body).toMatchObject({ code });
      expect(await tokensOf()).toBe(before);
    },
  );

  it("hands over what it does not take: a browser's token, a wrong key, a publishable key", async () => {
    const origin = 'https://app.example';
    const b = await app.tenant({ allowedOrigins: [origin] });
    const credentials = { email: email(), password: 'correct horse battery staple' };
    await postJson(app, '/v1/auth/sign-up', b.secretKey, credentials);
    const browser = await browserSignIn(app, b, credentials, origin);
    await refresh('lkr_unknown', headersOf(b)); // the key in memory
    const wrongChannel = await refresh(browser.refreshToken, headersOf(b));
    expect(wrongChannel).toMatchObject({ status: 400, fast: 0, after: 1 });
    expect(wrongChannel.body).toMatchObject({ code: 'invalid_grant' });
    const s: Body = await signedIn(app, t);
    const wrongKey = await refresh(s.refreshToken, {
      ...headersOf(t),
      authorization: `Bearer ${t.secretKey.slice(0, -2)}xx`,
    });
    expect(wrongKey).toMatchObject({ status: 401, fast: 0, before: 1 });
    const publishable = await refresh(s.refreshToken, {
      ...headersOf(t),
      authorization: `Bearer ${t.publishableKey}`,
    });
    expect(publishable).toMatchObject({ status: 403, fast: 0, before: 1 });
    // None of them used the token up.
    expect(await refresh(s.refreshToken)).toMatchObject({ status: 200, fast: 1 });
  });

  it('counts the plan once for a refresh it hands over, and answers 429 past the limit', async () => {
    // Five a minute: the sign-up, the sign-in and three refreshes handed over.
    const limited = await app.tenant({ rps: 1000, rpm: 5 });
    const s = await signedIn(app, limited);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await refresh('lkr_unknown', headersOf(limited)));
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 429]);
    // Handed over once: after the body, or before it where Redis counts a quota this small.
    expect(answers[1]).toMatchObject({ fast: 0 });
    expect((answers[1]?.before ?? 0) + (answers[1]?.after ?? 0)).toBe(1);
    expect(answers[3]).toMatchObject({ fast: 0, before: 1, after: 0 });
    expect(answers[3]?.body).toMatchObject({ code: 'rate_limited' });
    expect((await refresh(s.refreshToken, headersOf(limited))).status).toBe(429);
  });
});
