import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const sessionAuthentication: Migration = {
  /**
   * How and when the person behind a session authenticated, for the `amr` (RFC 8176) and
   * `auth_time` claims of its access tokens (docs/design.md §5.1): `amr` a JSON array of
   * method values, `authenticated_at` epoch ms. Both are written when the session is opened
   * and never change (a refresh is no new authentication). Null on sessions opened before
   * this migration: their tokens carry no `amr`, and `auth_time` is the session's opening.
   */
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('sessions').addColumn('amr', 'text').execute();
    await db.schema.alterTable('sessions').addColumn('authenticated_at', 'bigint').execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('sessions').dropColumn('authenticated_at').execute();
    await db.schema.alterTable('sessions').dropColumn('amr').execute();
  },
};
