import type { Kysely, Transaction } from 'kysely';
import type { Schema } from './schema.js';

/** Where a workflow's cache invalidations go (the invalidation bus). */
export interface Publisher {
  publish(topic: string): Promise<void>;
}

/** One workflow's transaction, and the invalidations to publish once it commits. */
export interface Tx {
  /** Every read and write of the workflow goes through this handle (SQLite has one connection). */
  readonly db: Transaction<Schema>;
  invalidate(topic: string): void;
}

/**
 * Runs a workflow's writes in one transaction and publishes the cache invalidations it
 * asked for only after the commit: a failed workflow leaves no row half-written and
 * invalidates nothing, and no cache refills from rows a rollback takes back.
 */
export async function transact<T>(
  db: Kysely<Schema>,
  bus: Publisher,
  work: (tx: Tx) => Promise<T>,
): Promise<T> {
  const topics = new Set<string>();
  const result = await db
    .transaction()
    .execute((trx) => work({ db: trx, invalidate: (topic) => topics.add(topic) }));
  await Promise.all([...topics].map((topic) => bus.publish(topic)));
  return result;
}
