import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const foundation: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('tenants')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('plan', 'text', (c) => c.notNull())
      .addColumn('rate_rps', 'integer')
      .addColumn('rate_rpm', 'integer')
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('allowed_origins', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('require_email_verification', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('access_token_ttl', 'integer', (c) => c.notNull().defaultTo(600))
      .addColumn('password_enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('logo_url', 'text')
      .addColumn('primary_color', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull().unique())
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('last4', 'text', (c) => c.notNull())
      .addColumn('publishable', 'text')
      .addColumn('scopes', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('name', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .execute();
    await db.schema.createIndex('api_keys_tenant').on('api_keys').column('tenant_id').execute();

    await db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('email_key', 'text', (c) => c.notNull())
      .addColumn('password_hash', 'text')
      .addColumn('name', 'text')
      .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('roles', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('email_verified_at', 'bigint')
      .addColumn('disabled_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('users_tenant_email_key', ['tenant_id', 'email_key'])
      .execute();
    await db.schema
      .createIndex('users_tenant_created')
      .on('users')
      .columns(['tenant_id', 'created_at', 'id'])
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('users').execute();
    await db.schema.dropTable('api_keys').execute();
    await db.schema.dropTable('tenants').execute();
  },
};
