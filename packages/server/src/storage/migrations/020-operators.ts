import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const operators: Migration = {
  /**
   * Many tenants and their operators (docs/design.md §21): the tenants list is paged on
   * (created_at, id), so ten thousand tenants cost one index range per page; and operator
   * keys, stored as a SHA-256 hash like tenants' secret keys.
   */
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('tenants_created')
      .on('tenants')
      .columns(['created_at', 'id'])
      .execute();
    await db.schema
      .createTable('operator_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('hash', 'text', (c) => c.notNull().unique())
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('last4', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .execute();
  },
};
