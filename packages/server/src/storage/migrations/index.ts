import { type Kysely, PostgresAdapter, sql } from 'kysely';
import { type Migration, type MigrationResultSet, Migrator } from 'kysely/migration';
import { foundation } from './001-foundation.js';
import { sessions } from './002-sessions.js';
import { hosted } from './003-hosted.js';
import { social } from './004-social.js';
import { tokenAudience } from './005-token-audience.js';
import { admin } from './006-admin.js';
import { sessionChannel } from './007-session-channel.js';
import { emailDomainKeys } from './008-email-domain-keys.js';
import { hostedSessionBinding } from './009-hosted-session-binding.js';
import { hostedSessionLookups } from './010-hosted-session-lookups.js';
import { masterSecret } from './011-master-secret.js';
import { addressLinks } from './012-address-links.js';
import { developmentProviders } from './013-development-providers.js';
import { identityPictures } from './014-identity-pictures.js';
import { sessionAuthentication } from './015-session-authentication.js';
import { secondFactors } from './016-second-factors.js';
import { passkeys } from './017-passkeys.js';
import { oauth } from './018-oauth.js';
import { webhooks } from './019-webhooks.js';
import { operators } from './020-operators.js';

/** One ordered set of migrations serves SQLite and PostgreSQL alike. */
const MIGRATIONS: Record<string, Migration> = {
  '001-foundation': foundation,
  '002-sessions': sessions,
  '003-hosted': hosted,
  '004-social': social,
  '005-token-audience': tokenAudience,
  '006-admin': admin,
  '007-session-channel': sessionChannel,
  '008-email-domain-keys': emailDomainKeys,
  '009-hosted-session-binding': hostedSessionBinding,
  '010-hosted-session-lookups': hostedSessionLookups,
  '011-master-secret': masterSecret,
  '012-address-links': addressLinks,
  '013-development-providers': developmentProviders,
  '014-identity-pictures': identityPictures,
  '015-session-authentication': sessionAuthentication,
  '016-second-factors': secondFactors,
  '017-passkeys': passkeys,
  '018-oauth': oauth,
  '019-webhooks': webhooks,
  '020-operators': operators,
};

/** Kysely's bookkeeping table (its default name), which our own check reads too. */
const MIGRATION_TABLE = 'kysely_migration';

const onPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * On PostgreSQL the migrator is pinned to the connection's current schema: left alone,
 * Kysely finds its bookkeeping tables in any schema of the database, so a second
 * deployment in another schema would be taken for migrated.
 */
async function migrator(db: Kysely<unknown>): Promise<Migrator> {
  let migrationTableSchema: string | undefined;
  if (onPostgres(db)) {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
    migrationTableSchema = rows[0]?.schema;
  }
  return new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    migrationTableName: MIGRATION_TABLE,
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
}

/**
 * Applies pending migrations. PostgreSQL serialises concurrent runs with an advisory lock;
 * SQLite has no such lock in Kysely, so when two processes race on a fresh file the loser
 * re-checks and is done once the winner has applied everything. An up-to-date database
 * (every start after the first) is answered by our own check, without Kysely's Migrator.
 */
export async function migrateToLatest(db: Kysely<unknown>): Promise<MigrationResultSet> {
  if ((await pendingMigrations(db)).length === 0) return { results: [] };
  for (let attempt = 1; ; attempt++) {
    const result = await (await migrator(db)).migrateToLatest();
    if (!result.error) return result;
    if (attempt >= 5) throw result.error;
    await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    if ((await pendingMigrations(db)).length === 0) return { results: [] };
  }
}

/**
 * Names of migrations not yet applied to this database, in order. It reads the bookkeeping
 * table of this schema alone: Kysely's Migrator finds it by introspecting every table of the
 * database, with has_schema_privilege() by name, which fails when another program drops a
 * schema meanwhile (`schema "…" does not exist`), and takes longer the more schemas there are.
 */
export async function pendingMigrations(db: Kysely<unknown>): Promise<string[]> {
  const applied = new Set(await appliedMigrations(db));
  return Object.keys(MIGRATIONS)
    .sort()
    .filter((name) => !applied.has(name));
}

async function appliedMigrations(db: Kysely<unknown>): Promise<string[]> {
  let table = sql.id(MIGRATION_TABLE);
  if (onPostgres(db)) {
    // to_regclass answers null, never an error, for a name that is not there.
    const { rows } = await sql<{ schema: string | null; present: boolean }>`
      select current_schema() as schema,
        to_regclass(quote_ident(current_schema()) || '.' || ${MIGRATION_TABLE}) is not null as present`.execute(
      db,
    );
    const schema = rows[0]?.schema;
    if (!schema || !rows[0]?.present) return [];
    table = sql.id(schema, MIGRATION_TABLE);
  } else {
    const { rows } = await sql`
      select 1 from sqlite_master where type = 'table' and name = ${MIGRATION_TABLE}`.execute(db);
    if (rows.length === 0) return [];
  }
  const { rows } = await sql<{ name: string }>`select name from ${table}`.execute(db);
  return rows.map((row) => row.name);
}
