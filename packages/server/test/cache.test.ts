/**
 * On SQLite, introspection answers from in-process caches, and a change written by another
 * process (another connection to the same file, as the CLI does) is seen at once through
 * SQLite's data_version.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../src/storage/index.js';
import { email, json, postJson, startApp, type TestApp, type TestTenant } from './support.js';

describe('caches on SQLite', () => {
  let app: TestApp;
  let t: TestTenant;
  let other: Database;

  beforeAll(async () => {
    app = await startApp('sqlite');
    t = await app.tenant();
    other = openDatabase(app.ctx.config.databaseUrl);
  });
  afterAll(async () => {
    await other.close();
    await app.dispose();
  });

  async function cacheCount(result: 'hit' | 'miss'): Promise<number> {
    const text = await (await app.request('/metrics')).text();
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

  it('sees a session revoked by another process at once', async () => {
    const s = await session();
    expect(await active(s.accessToken)).toBe(true);
    expect(await active(s.accessToken)).toBe(true);
    await other.db
      .updateTable('sessions')
      .set({ revoked_at: Date.now() })
      .where('id', '=', s.sessionId)
      .execute();
    expect(await active(s.accessToken)).toBe(false);
  });

  it('sees a key revoked by another process at once', async () => {
    const res = () =>
      app.request('/v1/users?limit=1', { headers: { authorization: `Bearer ${t.secretKey}` } });
    expect((await res()).status).toBe(200);
    expect((await res()).status).toBe(200);
    await other.db
      .updateTable('api_keys')
      .set({ revoked_at: Date.now() })
      .where('tenant_id', '=', t.tenant.id)
      .execute();
    expect((await res()).status).toBe(401);
  });
});
