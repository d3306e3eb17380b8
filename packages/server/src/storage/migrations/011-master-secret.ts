import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const masterSecret: Migration = {
  /**
   * A value sealed with the master secret, written when the database first meets it: each
   * start opens it, and refuses to go on with a secret that does not (modules/master-secret).
   */
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('master_secret')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('check_jwe', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('rotated_at', 'bigint')
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('master_secret').execute();
  },
};
