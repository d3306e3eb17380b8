import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const hostedSessionLookups: Migration = {
  /**
   * Ending an API session ends the hosted-page sessions bound to it, and signing a user out
   * everywhere ends all of theirs: both are looked up by index, not by scanning the table.
   */
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('hosted_sessions_session')
      .on('hosted_sessions')
      .column('session_id')
      .execute();
    await db.schema
      .createIndex('hosted_sessions_user')
      .on('hosted_sessions')
      .columns(['tenant_id', 'user_id'])
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('hosted_sessions_user').execute();
    await db.schema.dropIndex('hosted_sessions_session').execute();
  },
};
