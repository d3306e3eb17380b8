import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LatchkeyError } from '../src/errors/index.js';
import { createKey } from '../src/modules/keys/index.js';
import { createTenant } from '../src/modules/tenants/index.js';
import { type Database, migrateToLatest, openDatabase } from '../src/storage/index.js';
import { freshDatabaseUrl, json, postJson, SECRET, startApp } from './support.js';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../dist/latchkey.mjs', import.meta.url));

describe('tenant and key rules', () => {
  let database: Database;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const fresh = await freshDatabaseUrl('sqlite');
    drop = fresh.drop;
    database = openDatabase(fresh.url);
    await migrateToLatest(database.db as never);
  });
  afterAll(async () => {
    await database.close();
    await drop();
  });

  async function refusal(promise: Promise<unknown>): Promise<string[]> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LatchkeyError);
    return ((error as LatchkeyError).errors ?? []).map((e) => e.code);
  }

  it('normalises origins typed in capitals or with the default port', async () => {
    const tenant = await createTenant(database.db, {
      name: 'Origins',
      environment: 'production',
      allowedOrigins: [
        'HTTPS://App.Example.COM',
        'https://app.example.com:443',
        'https://other.example/',
      ],
    });
    expect(tenant.allowedOrigins).toEqual(['https://app.example.com', 'https://other.example']);
    expect(
      await refusal(
        createTenant(database.db, { name: 'X', allowedOrigins: ['https://a.example/path'] }),
      ),
    ).toEqual(['origin_invalid']);
  });

  it('refuses custom limits without the enterprise plan, instead of ignoring them', async () => {
    expect(await refusal(createTenant(database.db, { name: 'X', rps: 50 }))).toContain(
      'limits_need_enterprise',
    );
    expect(await refusal(createTenant(database.db, { name: 'X', plan: 'pro', rpm: 50 }))).toContain(
      'limits_need_enterprise',
    );
  });

  it('refuses scopes on a publishable key instead of dropping them', async () => {
    const tenant = await createTenant(database.db, { name: 'Keys' });
    expect(
      await refusal(
        createKey(database.db, tenant.id, { kind: 'publishable', scopes: ['users:read'] }),
      ),
    ).toEqual(['scopes_invalid']);
  });

  it('concurrent migrations of one fresh SQLite file all succeed', async () => {
    const fresh = await freshDatabaseUrl('sqlite');
    const opened = Array.from({ length: 4 }, () => openDatabase(fresh.url));
    try {
      await Promise.all(opened.map((d) => migrateToLatest(d.db as never)));
      expect(await opened[0]?.db.selectFrom('tenants').select('id').execute()).toEqual([]);
    } finally {
      for (const d of opened) await d.close();
      await fresh.drop();
    }
  });

  it('`latchkey migrate` on a fresh SQLite file says what it applied', async () => {
    const fresh = await freshDatabaseUrl('sqlite');
    try {
      const env = { ...process.env, DATABASE_URL: fresh.url, LATCHKEY_SECRET: SECRET };
      const first = await run(process.execPath, [MAIN, 'migrate'], { env });
      expect(first.stdout).toMatch(/^applied: 001-foundation, 002-sessions/);
      const second = await run(process.execPath, [MAIN, 'migrate'], { env });
      expect(second.stdout.trim()).toBe('the database is up to date');
    } finally {
      await fresh.drop();
    }
  });

  it('`latchkey signing-key revoke` stops a leaked key at once: its tokens turn inactive', async () => {
    const app = await startApp('sqlite');
    try {
      const t = await app.tenant();
      const address = 'leak@example.com';
      await postJson(app, '/v1/auth/sign-up', t.secretKey, {
        email: address,
        password: 'correct horse battery',
      });
      const signIn = async () =>
        json(
          await postJson(app, '/v1/auth/sign-in', t.secretKey, {
            email: address,
            password: 'correct horse battery',
          }),
        );
      const introspect = async (token: string) =>
        (await json(await postJson(app, '/api/auth/introspect', t.secretKey, { token }))).active;
      const before = await signIn();
      expect(await introspect(before.accessToken)).toBe(true);
      const kid = decodeProtectedHeader(before.accessToken).kid as string;
      const env = {
        ...process.env,
        DATABASE_URL: app.ctx.config.databaseUrl,
        LATCHKEY_SECRET: SECRET,
      };
      const out = await run(
        process.execPath,
        [MAIN, 'signing-key', 'revoke', '--tenant', t.tenant.id, kid, '--json'],
        { env },
      );
      expect(JSON.parse(out.stdout).revoked).toBe(kid);
      expect(await introspect(before.accessToken)).toBe(false);
      const jwks = await json(await app.request(`/t/${t.tenant.id}/.well-known/jwks.json`));
      expect(jwks.keys.map((k: { kid: string }) => k.kid)).not.toContain(kid);
      const after = await signIn();
      expect(decodeProtectedHeader(after.accessToken).kid).not.toBe(kid);
      expect(await introspect(after.accessToken)).toBe(true);
    } finally {
      await app.dispose();
    }
  });
});
