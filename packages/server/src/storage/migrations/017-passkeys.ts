import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const passkeys: Migration = {
  /**
   * WebAuthn credentials (docs/design.md §13): discoverable, found by their credential id
   * within a tenant; and the single-use challenges of their ceremonies, stored by hash.
   */
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('passkeys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('credential_id', 'text', (c) => c.notNull())
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('counter', 'bigint', (c) => c.notNull())
      .addColumn('transports', 'text', (c) => c.notNull())
      .addColumn('device_type', 'text', (c) => c.notNull())
      .addColumn('backed_up', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addUniqueConstraint('passkeys_tenant_credential', ['tenant_id', 'credential_id'])
      .execute();
    await db.schema
      .createIndex('passkeys_tenant_user')
      .on('passkeys')
      // User first: a user's deletion cascades by user_id alone.
      .columns(['user_id', 'tenant_id'])
      .execute();
    await db.schema
      .createTable('passkey_challenges')
      .addColumn('hash', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('passkey_challenges_expiry')
      .on('passkey_challenges')
      .column('expires_at')
      .execute();
    await db.schema
      .createIndex('passkey_challenges_user')
      .on('passkey_challenges')
      .column('user_id')
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('passkey_challenges').execute();
    await db.schema.dropTable('passkeys').execute();
  },
};
