import type { Kysely } from 'kysely';
import { type Migration, type MigrationResultSet, Migrator } from 'kysely/migration';
import { foundation } from './001-foundation.js';

/** One ordered set of migrations serves SQLite and PostgreSQL alike. */
const MIGRATIONS: Record<string, Migration> = {
  '001-foundation': foundation,
};

function migrator(db: Kysely<unknown>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
}

export async function migrateToLatest(db: Kysely<unknown>): Promise<MigrationResultSet> {
  const result = await migrator(db).migrateToLatest();
  if (result.error) throw result.error;
  return result;
}

/** Names of migrations not yet applied to this database. */
export async function pendingMigrations(db: Kysely<unknown>): Promise<string[]> {
  const all = await migrator(db).getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
