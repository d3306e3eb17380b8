/**
 * Storage, written once and run on every database: migrations, unique-violation detection,
 * timestamps, cascades, and the tenant and key services that sit directly on Kysely.
 */

import { createHash, randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localBus } from '../src/cache/invalidation.js';
import { LatchkeyError } from '../src/errors/index.js';
import { createKey, KeyResolver, revokeKey } from '../src/modules/keys/index.js';
import { createTenant, type TenantInput } from '../src/modules/tenants/index.js';
import {
  type Database,
  isUniqueViolation,
  migrateToLatest,
  openDatabase,
  pendingMigrations,
  type Schema,
} from '../src/storage/index.js';
import { DIALECTS, freshDatabaseUrl, HAVE_POSTGRES, PG_URL, watchQueries } from './support.js';

/** The request path's key lookup, without a cache (no bus tells it about changes here). */
const resolveKey = (db: Kysely<Schema>, presented: string) =>
  new KeyResolver(db, localBus({ cache: false })).resolve(presented);

/** The rejection of `promise`; fails the test when it resolves. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

const uniqueName = (stem: string) => `${stem} ${randomUUID().slice(0, 8)}`;

describe.each(DIALECTS)('storage on %s', (dialect) => {
  describe('migrations', () => {
    let fresh: { url: string; drop(): Promise<void> };
    let database: Database;

    beforeAll(async () => {
      fresh = await freshDatabaseUrl(dialect);
      database = openDatabase(fresh.url, { poolSize: 2 });
    });
    afterAll(async () => {
      await database?.close();
      await fresh?.drop();
    });

    /** Every migration, in order; later ones may be added after 001-foundation. */
    let pending: string[];

    it('lists 001-foundation first among the pending migrations of a fresh database', async () => {
      pending = await pendingMigrations(database.db as never);
      expect(pending[0]).toBe('001-foundation');
      expect(new Set(pending).size).toBe(pending.length);
      expect([...pending].sort()).toEqual(pending);
    });

    it('creates the tables, then applies nothing on a second run', async () => {
      const first = await migrateToLatest(database.db as never);
      expect(first.error).toBeUndefined();
      expect(first.results).toEqual(
        pending.map((migrationName) => ({ migrationName, direction: 'Up', status: 'Success' })),
      );
      // This schema's tables alone: Kysely's introspection reads every schema of the database,
      // and fails when another suite drops its schema meanwhile.
      const listed =
        dialect === 'postgres'
          ? sql<{
              name: string;
            }>`select tablename as name from pg_tables where schemaname = current_schema()`
          : sql<{ name: string }>`select name from sqlite_master where type = 'table'`;
      const tables = (await listed.execute(database.db)).rows.map((t) => t.name);
      expect(tables).toEqual(expect.arrayContaining(['api_keys', 'tenants', 'users']));

      const second = await migrateToLatest(database.db as never);
      expect(second.error).toBeUndefined();
      expect(second.results).toEqual([]);
      expect(await pendingMigrations(database.db as never)).toEqual([]);
    });
  });

  describe('on a migrated database', () => {
    let fresh: { url: string; drop(): Promise<void> };
    let database: Database;
    const db = () => database.db;

    beforeAll(async () => {
      fresh = await freshDatabaseUrl(dialect);
      database = openDatabase(fresh.url, { poolSize: 4 });
      await migrateToLatest(database.db as never);
    });
    afterAll(async () => {
      await database?.close();
      await fresh?.drop();
    });

    const tenant = (input: TenantInput = {}) =>
      createTenant(db(), { name: uniqueName('Storage'), ...input });

    function userRow(tenantId: string, address: string) {
      const now = Date.now();
      return {
        id: randomUUID(),
        tenant_id: tenantId,
        email: address,
        email_key: address.toLowerCase(),
        password_hash: null,
        name: null,
        metadata: '{}',
        roles: '[]',
        email_verified_at: null,
        disabled_at: null,
        created_at: now,
        updated_at: now,
      };
    }

    async function tenantCount(): Promise<number> {
      const row = await db()
        .selectFrom('tenants')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    }

    describe('isUniqueViolation', () => {
      it('is true for a duplicate (tenant_id, email_key) user', async () => {
        const t = await tenant();
        await db().insertInto('users').values(userRow(t.id, 'dup@example.com')).execute();
        const error = await rejectionOf(
          db().insertInto('users').values(userRow(t.id, 'DUP@example.com')).execute(),
        );
        expect(isUniqueViolation(error)).toBe(true);
        // The same address under another tenant is another user.
        const other = await tenant();
        await db().insertInto('users').values(userRow(other.id, 'dup@example.com')).execute();
      });

      it('is true for a duplicate api_keys.hash', async () => {
        const t = await tenant();
        const { key } = await createKey(db(), t.id, { kind: 'secret' });
        const row = await db()
          .selectFrom('api_keys')
          .selectAll()
          .where('id', '=', key.id)
          .executeTakeFirstOrThrow();
        const error = await rejectionOf(
          db()
            .insertInto('api_keys')
            .values({ ...row, id: randomUUID() })
            .execute(),
        );
        expect(isUniqueViolation(error)).toBe(true);
      });

      it('is false for a NOT NULL violation, a foreign-key violation and a syntax error', async () => {
        const now = Date.now();
        const notNull = await rejectionOf(
          db()
            .insertInto('tenants')
            .values({
              id: randomUUID(),
              name: null as unknown as string,
              plan: 'free',
              rate_rps: null,
              rate_rpm: null,
              environment: 'development',
              allowed_origins: '[]',
              require_email_verification: 0,
              access_token_ttl: 600,
              password_enabled: 1,
              logo_url: null,
              primary_color: null,
              created_at: now,
              updated_at: now,
            })
            .execute(),
        );
        expect(notNull).toBeInstanceOf(Error);
        expect(isUniqueViolation(notNull)).toBe(false);

        const foreignKey = await rejectionOf(
          db().insertInto('users').values(userRow(randomUUID(), 'orphan@example.com')).execute(),
        );
        expect(foreignKey).toBeInstanceOf(Error);
        expect(isUniqueViolation(foreignKey)).toBe(false);

        const syntax = await rejectionOf(sql`selec 1`.execute(db()));
        expect(isUniqueViolation(syntax)).toBe(false);
      });

      it.each([
        ['undefined', undefined],
        ['null', null],
        ['the code as a string', '23505'],
        ['a number', 23505],
        ['an Error without a code', new Error('UNIQUE constraint failed: users.email_key')],
        ['another SQLSTATE', { code: '23502' }],
      ])('is false for %s', (_name, value) => {
        expect(isUniqueViolation(value)).toBe(false);
      });
    });

    it('returns bigint millisecond timestamps as JS numbers', async () => {
      const before = Date.now();
      const t = await tenant();
      const raw = await sql<{
        created_at: unknown;
        updated_at: unknown;
      }>`select created_at, updated_at from tenants where id = ${t.id}`.execute(db());
      const row = raw.rows[0];
      expect(typeof row?.created_at).toBe('number');
      expect(typeof row?.updated_at).toBe('number');
      expect(row?.created_at).toBe(Date.parse(t.createdAt));
      expect(row?.created_at as number).toBeGreaterThanOrEqual(before);

      const built = await db()
        .selectFrom('tenants')
        .select(['created_at', 'updated_at'])
        .where('id', '=', t.id)
        .executeTakeFirstOrThrow();
      expect(typeof built.created_at).toBe('number');
      expect(built.created_at).toBe(Date.parse(t.createdAt));

      const { key } = await createKey(db(), t.id, { kind: 'secret' });
      await revokeKey({ db: db(), bus: localBus({ cache: false }) }, t.id, key.id);
      const keyRow = await db()
        .selectFrom('api_keys')
        .select(['created_at', 'revoked_at'])
        .where('id', '=', key.id)
        .executeTakeFirstOrThrow();
      expect(typeof keyRow.created_at).toBe('number');
      expect(typeof keyRow.revoked_at).toBe('number');
    });

    it('cascades a tenant deletion to its keys and users, and only to its own', async () => {
      const doomed = await tenant();
      const kept = await tenant();
      for (const t of [doomed, kept]) {
        await createKey(db(), t.id, { kind: 'secret' });
        await createKey(db(), t.id, { kind: 'publishable' });
        await db().insertInto('users').values(userRow(t.id, 'cascade@example.com')).execute();
      }
      const rowsOf = async (tenantId: string) => ({
        keys: (
          await db().selectFrom('api_keys').select('id').where('tenant_id', '=', tenantId).execute()
        ).length,
        users: (
          await db().selectFrom('users').select('id').where('tenant_id', '=', tenantId).execute()
        ).length,
      });
      expect(await rowsOf(doomed.id)).toEqual({ keys: 2, users: 1 });

      await db().deleteFrom('tenants').where('id', '=', doomed.id).execute();

      expect(await rowsOf(doomed.id)).toEqual({ keys: 0, users: 0 });
      expect(await rowsOf(kept.id)).toEqual({ keys: 2, users: 1 });
    });

    describe('tenant rules', () => {
      it.each([
        ['an origin with a path', 'https://a.example/x', 'development'],
        ['an ftp origin', 'ftp://files.example.com', 'development'],
        ['http on a host other than localhost', 'http://example.com', 'development'],
        ['http on a production tenant, even for localhost', 'http://localhost:3000', 'production'],
        ['something that is not a URL', 'app.example.com', 'development'],
      ] as const)('refuses %s (%s)', async (_name, origin, environment) => {
        const before = await tenantCount();
        const error = await rejectionOf(
          tenant({ environment, allowedOrigins: ['https://ok.example', origin] }),
        );
        expect(error).toBeInstanceOf(LatchkeyError);
        const problem = error as LatchkeyError;
        expect(problem.code).toBe('validation_failed');
        expect(problem.errors).toEqual([
          expect.objectContaining({ path: '/allowedOrigins/1', code: 'origin_invalid' }),
        ]);
        expect(await tenantCount()).toBe(before);
      });

      it('accepts http on 127.0.0.1 and localhost for a development tenant', async () => {
        const t = await tenant({
          environment: 'development',
          allowedOrigins: ['http://127.0.0.1:5173', 'http://localhost:3000'],
        });
        expect(t.allowedOrigins).toEqual(['http://127.0.0.1:5173', 'http://localhost:3000']);
      });

      it('stores duplicate origins once', async () => {
        const t = await tenant({
          allowedOrigins: [
            'https://app.example.com',
            'https://app.example.com/',
            'https://app.example.com',
            'https://admin.example.com',
          ],
        });
        expect(t.allowedOrigins).toEqual(['https://app.example.com', 'https://admin.example.com']);
        const row = await db()
          .selectFrom('tenants')
          .select('allowed_origins')
          .where('id', '=', t.id)
          .executeTakeFirstOrThrow();
        expect(JSON.parse(row.allowed_origins)).toEqual(t.allowedOrigins);
      });

      it('refuses an unknown plan and limits without the enterprise plan', async () => {
        const gold = await rejectionOf(tenant({ plan: 'gold' as never }));
        expect((gold as LatchkeyError).errors).toContainEqual(
          expect.objectContaining({ path: '/plan', code: 'plan_invalid' }),
        );
        const limits = await rejectionOf(tenant({ plan: 'pro', rps: 5 }));
        expect((limits as LatchkeyError).errors).toContainEqual(
          expect.objectContaining({ path: '/plan', code: 'limits_need_enterprise' }),
        );
      });
    });

    describe('keys', () => {
      it('resolves a live key to its key and tenant', async () => {
        const t = await tenant();
        const { key, plaintext } = await createKey(db(), t.id, { kind: 'secret' });
        expect(plaintext).toMatch(/^sk_test_[0-9A-Za-z]{43}$/);
        const found = await resolveKey(db(), plaintext);
        expect(found?.key.id).toBe(key.id);
        expect(found?.tenant).toEqual(t);
        expect(found?.key.scopes).toEqual([
          'users:read',
          'users:write',
          'sessions:write',
          'tokens:introspect',
        ]);
      });

      it("records keys' uses for the key list: gathered, written together, once a minute", async () => {
        const t = await tenant();
        const made = await Promise.all(
          [1, 2, 3].map(() => createKey(db(), t.id, { kind: 'secret' })),
        );
        const usedAt = async () =>
          (
            await db()
              .selectFrom('api_keys')
              .select(['id', 'last_used_at'])
              .where('tenant_id', '=', t.id)
              .execute()
          ).map((row) => row.last_used_at);
        const resolver = new KeyResolver(db(), localBus({ cache: true }));
        const before = Date.now();
        // Uncached, then cached: each key used twice.
        for (const { plaintext } of [...made, ...made])
          expect(await resolver.resolve(plaintext)).toBeDefined();
        for (const { plaintext } of made) expect(resolver.resolveCached(plaintext)).toBeTruthy();
        // Nothing is written on the request's way.
        expect(await usedAt()).toEqual([null, null, null]);
        await resolver.flushUses();
        const written = await usedAt();
        expect(new Set(written).size).toBe(1);
        expect(written[0]).toBeGreaterThanOrEqual(before);
        // Used again within the minute, cached or not: not written again.
        await db().updateTable('api_keys').set({ last_used_at: null }).execute();
        for (const { plaintext } of made) resolver.resolveCached(plaintext);
        await resolver.resolve(made[0]?.plaintext as string);
        await new KeyResolver(db(), localBus({ cache: true })).flushUses();
        await resolver.flushUses();
        expect(await usedAt()).toEqual([null, null, null]);
        // Another process (here: another resolver) writes its own uses.
        const other = new KeyResolver(db(), localBus({ cache: false }));
        expect(await other.resolve(made[1]?.plaintext as string)).toBeDefined();
        await other.flushUses();
        expect((await usedAt()).filter((at) => at !== null)).toHaveLength(1);
      });

      it('writes the uses of many keys in chunks, the event loop turning between them', async () => {
        // One UPDATE of 500 rows held the event loop 21 ms on a 10,000-tenant SQLite file.
        const t = await tenant();
        const made = [];
        for (let i = 0; i < 250; i++) made.push(await createKey(db(), t.id, { kind: 'secret' }));
        const events: string[] = [];
        const counting = watchQueries(db(), (kind) => {
          if (kind === 'UpdateQueryNode') events.push('update');
        });
        const resolver = new KeyResolver(counting, localBus({ cache: true }));
        for (const { plaintext } of made) expect(await resolver.resolve(plaintext)).toBeDefined();
        let flushing = true;
        const turn = () => {
          if (!flushing) return;
          if (events.at(-1) !== 'turn') events.push('turn');
          setImmediate(turn);
        };
        setImmediate(turn);
        await resolver.flushUses();
        flushing = false;
        const updates = events.filter((e) => e === 'update');
        expect(updates).toHaveLength(3);
        // Between two writes, a turn of the event loop (where waiting requests are read).
        const writes = events.slice(events.indexOf('update'));
        expect(writes.join(' ')).toMatch(/^update turn update turn update/);
        const written = await db()
          .selectFrom('api_keys')
          .select('last_used_at')
          .where('tenant_id', '=', t.id)
          .execute();
        expect(written.filter((row) => row.last_used_at !== null)).toHaveLength(250);
      });

      it('gives production tenants sk_prod_ and pk_live_ keys', async () => {
        const t = await tenant({ environment: 'production' });
        const secret = await createKey(db(), t.id, { kind: 'secret' });
        const publishable = await createKey(db(), t.id, { kind: 'publishable' });
        expect(secret.plaintext).toMatch(/^sk_prod_[0-9A-Za-z]{43}$/);
        expect(publishable.plaintext).toMatch(/^pk_live_[0-9A-Za-z]{43}$/);
        expect((await resolveKey(db(), publishable.plaintext))?.tenant.id).toBe(t.id);
      });

      it('keeps only the scopes asked for, and refuses unknown scopes', async () => {
        const t = await tenant();
        const { plaintext } = await createKey(db(), t.id, {
          kind: 'secret',
          scopes: ['users:read'],
        });
        expect((await resolveKey(db(), plaintext))?.key.scopes).toEqual(['users:read']);
        const error = await rejectionOf(
          createKey(db(), t.id, { kind: 'secret', scopes: ['bogus'] }),
        );
        expect(error).toBeInstanceOf(LatchkeyError);
        expect((error as LatchkeyError).code).toBe('validation_failed');
        expect((error as LatchkeyError).errors?.[0]?.code).toBe('scopes_invalid');
      });

      it('resolves a revoked key to undefined, leaving the other keys live', async () => {
        const t = await tenant();
        const revoked = await createKey(db(), t.id, { kind: 'secret' });
        const other = await createKey(db(), t.id, { kind: 'secret' });
        const shown = await revokeKey(
          { db: db(), bus: localBus({ cache: false }) },
          t.id,
          revoked.key.id,
        );
        expect(shown.revokedAt).not.toBeNull();
        expect(await resolveKey(db(), revoked.plaintext)).toBeUndefined();
        expect((await resolveKey(db(), other.plaintext))?.key.id).toBe(other.key.id);
      });

      it('resolves unknown and malformed keys to undefined', async () => {
        expect(await resolveKey(db(), `sk_test_${'A'.repeat(43)}`)).toBeUndefined();
        expect(await resolveKey(db(), `pk_live_${'z'.repeat(43)}`)).toBeUndefined();
        expect(await resolveKey(db(), 'sk_test_short')).toBeUndefined();
        expect(await resolveKey(db(), '')).toBeUndefined();
      });

      it('stores a SHA-256 hash of a secret key and never the key itself', async () => {
        const t = await tenant();
        const { key, plaintext } = await createKey(db(), t.id, { kind: 'secret' });
        const row = await db()
          .selectFrom('api_keys')
          .selectAll()
          .where('id', '=', key.id)
          .executeTakeFirstOrThrow();
        expect(row.hash).toBe(createHash('sha256').update(plaintext).digest('hex'));
        expect(row.publishable).toBeNull();
        const random = plaintext.slice('sk_test_'.length);
        for (const [column, value] of Object.entries(row)) {
          expect(String(value), column).not.toContain(random);
        }
        const everything = await db().selectFrom('api_keys').selectAll().execute();
        expect(JSON.stringify(everything)).not.toContain(random);
      });
    });
  });
});

/**
 * Regression: Kysely's Migrator, given no `migrationTableSchema`, looks for its tables in every
 * schema of the database, so a fresh schema next to a migrated one was taken for migrated and
 * failed with `relation "kysely_migration" does not exist`. Ours pins it to the current schema.
 */
describe.runIf(HAVE_POSTGRES)('migrations on PostgreSQL with two schemas in one database', () => {
  const schemas: { url: string; drop(): Promise<void> }[] = [];
  const opened: Database[] = [];

  afterAll(async () => {
    for (const database of opened) await database.close();
    for (const schema of schemas) await schema.drop();
  });

  it('migrates a fresh schema while another schema is already migrated', async () => {
    schemas.push(await freshDatabaseUrl('postgres'), await freshDatabaseUrl('postgres'));
    const [first, second] = schemas.map((s) => openDatabase(s.url, { poolSize: 1 }));
    if (!first || !second) throw new Error('two schemas expected');
    opened.push(first, second);
    await migrateToLatest(first.db as never);
    const pending = await pendingMigrations(second.db as never);
    expect(pending[0]).toBe('001-foundation');
    const result = await migrateToLatest(second.db as never);
    expect(result.results?.map((r) => r.migrationName)).toEqual(pending);
    expect(await pendingMigrations(first.db as never)).toEqual([]);
    expect(await pendingMigrations(second.db as never)).toEqual([]);
  });

  /**
   * Regression (CI, 2026-11-28): Kysely's introspection reads every table of the database and
   * calls has_schema_privilege() by schema name, so a schema another program dropped in the
   * meantime failed `latchkey serve` with `schema "lk_test_…" does not exist`. Ours asks for its
   * own bookkeeping table alone.
   */
  it('checks and applies its migrations while other schemas of the database come and go', async () => {
    const own = await freshDatabaseUrl('postgres');
    schemas.push(own);
    const database = openDatabase(own.url, { poolSize: 1 });
    opened.push(database);
    await migrateToLatest(database.db as never);
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    let churning = true;
    let dropped = 0;
    const churn = (async () => {
      while (churning) {
        const name = `lk_churn_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
        await admin.query(`create schema ${name}`);
        await admin.query(`create table ${name}.t (id serial primary key, a text, b text)`);
        await admin.query(`drop schema ${name} cascade`);
        dropped++;
      }
    })();
    try {
      // At least 150 checks, and on until 20 schemas have been dropped under them: how fast the
      // churn goes against the checks depends on the machine (CI once saw 9 drops in 150).
      for (let i = 0; i < 150 || (dropped < 20 && i < 20_000); i++) {
        expect(await pendingMigrations(database.db as never)).toEqual([]);
        expect((await migrateToLatest(database.db as never)).results).toEqual([]);
      }
    } finally {
      churning = false;
      await churn;
      await admin.end();
    }
    // The checks above overlapped schemas being dropped, or they proved nothing.
    expect(dropped).toBeGreaterThan(10);
  });
});
