import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const tokenAudience: Migration = {
  async up(db: Kysely<unknown>) {
    // RFC 9068 section 2.2: the `aud` of the tenant's access tokens; null means the
    // documented default, `{auth_url}/t/{tenant_id}/api`, which follows PUBLIC_URL.
    await db.schema.alterTable('tenants').addColumn('audience', 'text').execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('tenants').dropColumn('audience').execute();
  },
};
