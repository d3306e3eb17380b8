import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const identityPictures: Migration = {
  /**
   * The picture URL the provider gave for an identity (https only; null when none), written
   * when the identity is made and again at each sign-in through it. The user's profile shows
   * the one of their most recently used identity that has one (docs/design.md §18.4).
   */
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('identities').addColumn('picture', 'text').execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('identities').dropColumn('picture').execute();
  },
};
