import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const oauth: Migration = {
  /**
   * Every tenant an OpenID Provider (docs/design.md §14): its applications (OAuth clients,
   * ids `app_…`, secrets stored by hash, the previous one kept for a grace period), the
   * provider's own records (`oauth_artifacts`: sessions, interactions, codes, refresh tokens
   * and grants of node-oidc-provider, one JSON payload each), the tenant's switch for RFC 7591
   * dynamic registration, and the OAuth grant and app a Latchkey session was opened for.
   */
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('tenants')
      .addColumn('dynamic_registration', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('apps')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      // JSON arrays of absolute URIs, matched exactly.
      .addColumn('redirect_uris', 'text', (c) => c.notNull())
      .addColumn('post_logout_redirect_uris', 'text', (c) => c.notNull())
      .addColumn('secret_hash', 'text')
      .addColumn('previous_secret_hash', 'text')
      .addColumn('previous_secret_expires_at', 'bigint')
      .addColumn('pkce_optional', 'integer', (c) => c.notNull().defaultTo(0))
      // 1 for apps made by an operator (CLI, admin); 0 for RFC 7591 registrations.
      .addColumn('first_party', 'integer', (c) => c.notNull().defaultTo(1))
      // JSON object: the other client metadata of a dynamically registered app.
      .addColumn('metadata', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('apps_tenant').on('apps').column('tenant_id').execute();
    await db.schema
      .createTable('oauth_artifacts')
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('grant_id', 'text')
      .addColumn('uid', 'text')
      .addColumn('client_id', 'text')
      // The Latchkey session a refresh token's access tokens belong to.
      .addColumn('session_id', 'text')
      .addColumn('expires_at', 'bigint')
      .addColumn('consumed_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('oauth_artifacts_pk', ['tenant_id', 'model', 'id'])
      .execute();
    await db.schema
      .createIndex('oauth_artifacts_grant')
      .on('oauth_artifacts')
      .columns(['tenant_id', 'grant_id'])
      .execute();
    await db.schema
      .createIndex('oauth_artifacts_uid')
      .on('oauth_artifacts')
      .columns(['tenant_id', 'uid'])
      .execute();
    await db.schema
      .createIndex('oauth_artifacts_expiry')
      .on('oauth_artifacts')
      .column('expires_at')
      .execute();
    await db.schema.alterTable('sessions').addColumn('oauth_grant_id', 'text').execute();
    await db.schema.alterTable('sessions').addColumn('oauth_client_id', 'text').execute();
    await db.schema
      .createIndex('sessions_oauth_grant')
      .on('sessions')
      .columns(['tenant_id', 'oauth_grant_id'])
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('sessions_oauth_grant').execute();
    await db.schema.alterTable('sessions').dropColumn('oauth_client_id').execute();
    await db.schema.alterTable('sessions').dropColumn('oauth_grant_id').execute();
    await db.schema.dropTable('oauth_artifacts').execute();
    await db.schema.dropTable('apps').execute();
    await db.schema.alterTable('tenants').dropColumn('dynamic_registration').execute();
  },
};
