/**
 * Introspection answers from in-process caches, and a change written by another process
 * (another connection, as the CLI does) reaches them: on SQLite at once through
 * data_version, on PostgreSQL through the Redis announcement the CLI sends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { announce } from '../src/cache/invalidation.js';
import { type Database, openDatabase } from '../src/storage/index.js';
import {
  DIALECTS,
  email,
  eventually,
  HAVE_REDIS,
  json,
  METRICS_AUTH,
  postJson,
  REDIS_URL,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

// PostgreSQL instances cache only while Redis carries invalidations.
const CACHING = DIALECTS.filter((dialect) => dialect === 'sqlite' || HAVE_REDIS);

describe.each(CACHING)('caches on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;
  let other: Database;

  beforeAll(async () => {
    app = await startApp(dialect, { env: dialect === 'postgres' ? { REDIS_URL } : {} });
    t = await app.tenant();
    other = openDatabase(app.ctx.config.databaseUrl);
  });
  afterAll(async () => {
    await other.close();
    await app.dispose();
  });

  async function cacheCount(result: 'hit' | 'miss'): Promise<number> {
    const text = await (await app.request('/metrics', { headers: METRICS_AUTH })).text();
    return Number(
      new RegExp(`latchkey_session_cache_total\\{result="${result}"\\} (\\d+)`).exec(text)?.[1] ??
        0,
    );
  }

  async function session() {
    const address = email();
    await postJson(app, '/v1/auth/sign-up', t.secretKey, {
      email: address,
      password: 'correct horse battery',
    });
    return json(
      await postJson(app, '/v1/auth/sign-in', t.secretKey, {
        email: address,
        password: 'correct horse battery',
      }),
    );
  }

  /**
   * What another process does after writing: the CLI announces on Redis; on SQLite it
   * needs to do nothing. Then `check` must hold (at once on SQLite).
   */
  async function afterOtherProcess(check: () => Promise<boolean>) {
    if (dialect === 'sqlite') return expect(await check()).toBe(true);
    await announce(REDIS_URL, '*');
    await eventually(async () => ((await check()) ? true : undefined));
  }

  const active = async (token: string) =>
    (await json(await postJson(app, '/api/auth/introspect', t.secretKey, { token })))
      .active as boolean;

  it('answers a repeated introspection from the cache', async () => {
    const s = await session();
    expect(await active(s.accessToken)).toBe(true);
    const hits = await cacheCount('hit');
    expect(await active(s.accessToken)).toBe(true);
    expect(await active(s.accessToken)).toBe(true);
    expect(await cacheCount('hit')).toBe(hits + 2);
  });

  it('sees a session revoked by another process', async () => {
    const s = await session();
    expect(await active(s.accessToken)).toBe(true);
    expect(await active(s.accessToken)).toBe(true);
    await other.db
      .updateTable('sessions')
      .set({ revoked_at: Date.now() })
      .where('id', '=', s.sessionId)
      .execute();
    await afterOtherProcess(async () => !(await active(s.accessToken)));
  });

  it('sees a key revoked by another process', async () => {
    const res = () =>
      app.request('/v1/users?limit=1', { headers: { authorization: `Bearer ${t.secretKey}` } });
    expect((await res()).status).toBe(200);
    expect((await res()).status).toBe(200);
    await other.db
      .updateTable('api_keys')
      .set({ revoked_at: Date.now() })
      .where('tenant_id', '=', t.tenant.id)
      .execute();
    await afterOtherProcess(async () => (await res()).status === 401);
  });
});

// An operator on PostgreSQL without REDIS_URL gets no caches at all (about a twentieth of
// the introspections a core answers with them): the start says so, once, and why.
describe.each(DIALECTS.filter((dialect) => dialect === 'postgres'))(
  'caches off on %s without Redis',
  (dialect) => {
    const NOTICE = /nothing is cached.*set REDIS_URL/;

    it('says at start that nothing is cached, and to set REDIS_URL', async () => {
      const app = await startApp(dialect);
      try {
        const warnings = app.logs.lines.filter((line) => NOTICE.test(line));
        expect(warnings).toHaveLength(1);
        expect(JSON.parse(warnings[0] as string).level).toBe(40);
      } finally {
        await app.dispose();
      }
    });

    it.runIf(HAVE_REDIS)('says nothing of it with Redis', async () => {
      const app = await startApp(dialect, { env: { REDIS_URL } });
      try {
        expect(app.logs.text()).not.toMatch(NOTICE);
      } finally {
        await app.dispose();
      }
    });
  },
);
