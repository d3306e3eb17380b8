import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const hostedSessionBinding: Migration = {
  async up(db: Kysely<unknown>) {
    // The API session a hosted-page sign-in opened: a returning browser resumes it instead
    // of writing a new session (and a new cookie) on every visit. Null: open one.
    await db.schema.alterTable('hosted_sessions').addColumn('session_id', 'text').execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('hosted_sessions').dropColumn('session_id').execute();
  },
};
