import { type Kysely, PostgresAdapter, sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * The admin area (docs/design.md §12): admin accounts apart from tenants' users, their
 * sessions and tenant grants; the audit log gains an actor and events without a tenant
 * (an admin's own sign-in failures); a social flow can be an admin's "Test sign-in".
 */
export const admin: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('admins')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('email_key', 'text', (c) => c.notNull().unique())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('superuser', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('admin_tenants')
      .addColumn('admin_id', 'text', (c) => c.notNull().references('admins.id').onDelete('cascade'))
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addPrimaryKeyConstraint('admin_tenants_pk', ['admin_id', 'tenant_id'])
      .execute();
    await db.schema
      .createTable('admin_sessions')
      // SHA-256 of the cookie value, hex.
      .addColumn('hash', 'text', (c) => c.primaryKey())
      .addColumn('admin_id', 'text', (c) => c.notNull().references('admins.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      // When the password was last typed (sign-in or re-authentication).
      .addColumn('authenticated_at', 'bigint', (c) => c.notNull())
      .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('ip', 'text')
      .execute();
    await db.schema
      .createIndex('admin_sessions_admin')
      .on('admin_sessions')
      .column('admin_id')
      .execute();

    // audit_events: tenant_id becomes optional, and an actor column (the admin's e-mail).
    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      await db.schema
        .alterTable('audit_events')
        .alterColumn('tenant_id', (c) => c.dropNotNull())
        .execute();
      await db.schema.alterTable('audit_events').addColumn('actor', 'text').execute();
    } else {
      // SQLite cannot drop NOT NULL: the table is rebuilt.
      await db.schema
        .createTable('audit_events_new')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.references('tenants.id').onDelete('cascade'))
        .addColumn('user_id', 'text')
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('detail', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('actor', 'text')
        .execute();
      await sql`insert into audit_events_new (id, tenant_id, user_id, kind, detail, created_at)
        select id, tenant_id, user_id, kind, detail, created_at from audit_events`.execute(db);
      await db.schema.dropTable('audit_events').execute();
      await db.schema.alterTable('audit_events_new').renameTo('audit_events').execute();
      await db.schema
        .createIndex('audit_events_tenant')
        .on('audit_events')
        .columns(['tenant_id', 'created_at'])
        .execute();
    }
    await db.schema
      .createIndex('audit_events_time')
      .on('audit_events')
      .column('created_at')
      .execute();

    // Keys are listed with when they were last used (written at most once a minute).
    await db.schema.alterTable('api_keys').addColumn('last_used_at', 'bigint').execute();

    // A "Test sign-in" flow: started by this admin, its outcome kept for the admin to read.
    await db.schema.alterTable('oauth_flows').addColumn('admin_id', 'text').execute();
    await db.schema.alterTable('oauth_flows').addColumn('test_result', 'text').execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('oauth_flows').dropColumn('test_result').execute();
    await db.schema.alterTable('oauth_flows').dropColumn('admin_id').execute();
    await db.schema.alterTable('api_keys').dropColumn('last_used_at').execute();
    await db.schema.dropIndex('audit_events_time').execute();
    await db.schema.alterTable('audit_events').dropColumn('actor').execute();
    for (const table of ['admin_sessions', 'admin_tenants', 'admins']) {
      await db.schema.dropTable(table).execute();
    }
  },
};
