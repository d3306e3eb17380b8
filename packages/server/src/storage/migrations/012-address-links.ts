import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const addressLinks: Migration = {
  /**
   * The client address (bucket) a mailed "confirm it is you" link lets in: while many
   * sign-ins on an account fail from elsewhere, its owner confirms a new address this way.
   */
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('email_tokens').addColumn('address', 'text').execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('email_tokens').dropColumn('address').execute();
  },
};
