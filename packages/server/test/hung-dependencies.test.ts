import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe } from './cli-run.js';
import { frozenProxy } from './frozen-proxy.js';
import {
  DIALECTS,
  email,
  eventually,
  freshDatabaseUrl,
  HAVE_POSTGRES,
  HAVE_REDIS,
  json,
  PG_URL,
  postJson,
  REDIS_URL,
  SECRET,
  startApp,
  type TestApp,
} from './support.js';

const PASSWORD = 'correct horse battery staple';
const dialect = DIALECTS[DIALECTS.length - 1] ?? 'sqlite';

describe.runIf(HAVE_REDIS)('a hung Redis', () => {
  let proxy: Awaited<ReturnType<typeof frozenProxy>>;
  let a: TestApp;
  let b: TestApp;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const redis = new URL(REDIS_URL);
    proxy = await frozenProxy(redis.hostname, Number(redis.port || 6379));
    const fresh = await freshDatabaseUrl(dialect);
    drop = fresh.drop;
    const env = { REDIS_URL: proxy.url(REDIS_URL) };
    a = await startApp(dialect, { databaseUrl: fresh.url, env });
    b = await startApp(dialect, { databaseUrl: fresh.url, env });
  });
  afterAll(async () => {
    proxy.thaw();
    await a.dispose();
    await b.dispose();
    await proxy.close();
    await drop();
  });

  it('counts in memory, trusts no cache, and reports not ready; all recover', async () => {
    const t = await a.tenant();
    const address = email();
    await postJson(a, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD });
    const signedIn = await json(
      await postJson(a, '/v1/auth/sign-in', t.secretKey, { email: address, password: PASSWORD }),
    );
    const introspect = async (app: TestApp) =>
      json(
        await postJson(app, '/api/auth/introspect', t.secretKey, { token: signedIn.accessToken }),
      );
    // Instance a caches the session's state while its bus is live.
    expect((await introspect(a)).active).toBe(true);

    proxy.freeze();
    const ready = await a.request('/readyz');
    expect(ready.status).toBe(503);
    expect((await json(ready)).checks.redis).toBe('unreachable');
    await eventually(async () => (a.ctx.bus.live ? undefined : true));

    // Rate limits count in memory: requests are answered, not held.
    const other = await postJson(a, '/v1/auth/sign-up', t.secretKey, {
      email: email(),
      password: PASSWORD,
    });
    expect(other.status).toBe(201);
    // Revoked through b, whose invalidation cannot reach a: a reads the database.
    const revoked = await b.request(`/v1/sessions/${signedIn.sessionId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${t.secretKey}` },
    });
    expect(revoked.status).toBe(204);
    expect(await introspect(a)).toEqual({ active: false });

    proxy.thaw();
    await eventually(async () => ((await a.request('/readyz')).status === 200 ? true : undefined));
    await eventually(async () => (a.ctx.bus.live ? true : undefined));
  });
});

describe.runIf(HAVE_POSTGRES)('a hung PostgreSQL', () => {
  let proxy: Awaited<ReturnType<typeof frozenProxy>>;
  let fresh: Awaited<ReturnType<typeof freshDatabaseUrl>>;

  beforeAll(async () => {
    const pg = new URL(PG_URL);
    proxy = await frozenProxy(pg.hostname, Number(pg.port || 5432));
    fresh = await freshDatabaseUrl('postgres');
  });
  afterAll(async () => {
    proxy.thaw();
    await proxy.close();
    await fresh.drop();
  });

  it('answers /readyz 503 and requests 503 instead of holding them', async () => {
    const app = await startApp('postgres', { databaseUrl: proxy.url(fresh.url) });
    const t = await app.tenant();
    proxy.freeze();
    try {
      const ready = await app.request('/readyz');
      expect(ready.status).toBe(503);
      expect((await json(ready)).checks.database).toBe('unreachable');
      const res = await postJson(app, '/v1/auth/sign-in', t.secretKey, {
        email: email(),
        password: PASSWORD,
      });
      expect(res.status).toBe(503);
      expect((await json(res)).code).toBe('service_unavailable');
    } finally {
      proxy.thaw();
      await app.close();
    }
  });

  it('SIGTERM ends the process although a request waits on the database', async () => {
    const { child, url, exited } = await startServe(
      { DATABASE_URL: proxy.url(fresh.url), LATCHKEY_SECRET: SECRET },
      '/readyz',
    );
    proxy.freeze();
    const inFlight = fetch(`${url}/v1/users`, {
      headers: { authorization: `Bearer sk_test_${'a'.repeat(43)}` },
    }).then(
      (r) => r.status,
      () => 0,
    );
    // The request has reached the server (and waits on the database) once this answers.
    await eventually(async () =>
      (await fetch(`${url}/healthz`).then(
        (r) => r.status,
        () => 0,
      )) === 200
        ? true
        : undefined,
    );
    child.kill('SIGTERM');
    expect(await exited).not.toBeNull();
    expect([0, 503]).toContain(await inFlight);
    // A process of its own to start and drain: on a loaded 2-core machine that alone has
    // taken over 30 s (CI), so the test has a minute.
  }, 60_000);
});
