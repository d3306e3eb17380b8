/**
 * Two app instances on one PostgreSQL schema and one Redis: a key revoked or a tenant
 * changed through one of them (or through the CLI) takes effect on the other as soon as
 * the invalidation arrives, although the other had the key and tenant cached (for 60 s).
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/index.js';
import { createKey, revokeKey } from '../src/modules/keys/index.js';
import { updateTenant } from '../src/modules/tenants/index.js';
import {
  email,
  eventually,
  freshDatabaseUrl,
  HAVE_POSTGRES,
  HAVE_REDIS,
  json,
  postJson,
  REDIS_URL,
  SECRET,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

describe.runIf(HAVE_POSTGRES && HAVE_REDIS)('key and tenant changes reach every instance', () => {
  let a: TestApp;
  let b: TestApp;
  let t: TestTenant;
  let drop: () => Promise<void>;
  let databaseUrl: string;

  beforeAll(async () => {
    const fresh = await freshDatabaseUrl('postgres');
    databaseUrl = fresh.url;
    drop = fresh.drop;
    a = await startApp('postgres', { databaseUrl, env: { REDIS_URL } });
    b = await startApp('postgres', { databaseUrl, env: { REDIS_URL } });
    t = await a.tenant();
  });
  afterAll(async () => {
    await b?.dispose();
    await a?.dispose();
    await drop?.();
  });

  /** A fresh secret key, resolved (and so cached) by instance b. */
  async function cachedOnB() {
    const { key, plaintext } = await createKey(a.ctx.database.db, t.tenant.id, { kind: 'secret' });
    const list = () =>
      b.request('/v1/users?limit=1', { headers: { authorization: `Bearer ${plaintext}` } });
    expect((await list()).status).toBe(200);
    expect((await list()).status).toBe(200);
    return { key, list };
  }

  it('a key revoked through one instance stops on the other', async () => {
    const { key, list } = await cachedOnB();
    await revokeKey({ db: a.ctx.database.db, bus: a.ctx.bus }, t.tenant.id, key.id);
    await eventually(async () => ((await list()).status === 401 ? true : undefined));
  });

  it('a key revoked through the CLI stops on every instance', async () => {
    const { key, list } = await cachedOnB();
    const err: string[] = [];
    const code = await runCli(
      ['keys', 'revoke', '--tenant', t.tenant.id, key.id, '--json'],
      { DATABASE_URL: databaseUrl, REDIS_URL, LATCHKEY_SECRET: SECRET },
      { out: () => {}, err: (line) => err.push(line) },
    );
    expect({ code, err }).toEqual({ code: 0, err: [] });
    await eventually(async () => ((await list()).status === 401 ? true : undefined));
  });

  it('a tenant changed through one instance changes on the other', async () => {
    const address = email();
    const password = 'correct horse battery staple';
    await postJson(b, '/v1/auth/sign-up', t.secretKey, { email: address, password });
    const audience = async () => {
      const res = await postJson(b, '/v1/auth/sign-in', t.secretKey, { email: address, password });
      return decodeJwt((await json(res)).accessToken as string).aud;
    };
    expect(await audience()).not.toBe('https://api.example.com');
    await updateTenant({ db: a.ctx.database.db, bus: a.ctx.bus }, t.tenant.id, {
      audience: 'https://api.example.com',
    });
    await eventually(async () =>
      (await audience()) === 'https://api.example.com' ? true : undefined,
    );
  });
});
