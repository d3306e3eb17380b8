import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const developmentProviders: Migration = {
  /**
   * A provider enabled in development mode (development tenants only): its button leads to
   * Latchkey's own page, where the person types what the provider would return; no
   * credentials, no request to the provider (docs/design.md §20).
   */
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('provider_settings')
      .addColumn('development', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('provider_settings').dropColumn('development').execute();
  },
};
