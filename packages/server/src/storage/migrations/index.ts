import { type Kysely, PostgresAdapter, sql } from 'kysely';
import { type Migration, type MigrationResultSet, Migrator } from 'kysely/migration';
import { foundation } from './001-foundation.js';
import { sessions } from './002-sessions.js';

/** One ordered set of migrations serves SQLite and PostgreSQL alike. */
const MIGRATIONS: Record<string, Migration> = {
  '001-foundation': foundation,
  '002-sessions': sessions,
};

/**
 * On PostgreSQL the migrator is pinned to the connection's current schema: left alone,
 * Kysely finds its bookkeeping tables in any schema of the database, so a second
 * deployment in another schema would be taken for migrated.
 */
async function migrator(db: Kysely<unknown>): Promise<Migrator> {
  let migrationTableSchema: string | undefined;
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
    migrationTableSchema = rows[0]?.schema;
  }
  return new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
}

export async function migrateToLatest(db: Kysely<unknown>): Promise<MigrationResultSet> {
  const result = await (await migrator(db)).migrateToLatest();
  if (result.error) throw result.error;
  return result;
}

/** Names of migrations not yet applied to this database. */
export async function pendingMigrations(db: Kysely<unknown>): Promise<string[]> {
  const all = await (await migrator(db)).getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
