import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const sessions: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('signing_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('algorithm', 'text', (c) => c.notNull())
      .addColumn('public_jwk', 'text', (c) => c.notNull())
      .addColumn('private_jwe', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('activates_at', 'bigint', (c) => c.notNull())
      .addColumn('retired_at', 'bigint')
      .addColumn('publish_until', 'bigint')
      .execute();
    await db.schema
      .createIndex('signing_keys_tenant')
      .on('signing_keys')
      .columns(['tenant_id', 'created_at'])
      .execute();

    await db.schema
      .createTable('sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .addColumn('revoked_reason', 'text')
      .addColumn('ip', 'text')
      .addColumn('user_agent', 'text')
      .execute();
    await db.schema
      .createIndex('sessions_user')
      .on('sessions')
      .columns(['tenant_id', 'user_id', 'created_at'])
      .execute();

    await db.schema
      .createTable('refresh_tokens')
      .addColumn('hash', 'text', (c) => c.primaryKey())
      .addColumn('session_id', 'text', (c) =>
        c.notNull().references('sessions.id').onDelete('cascade'),
      )
      .addColumn('tenant_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('refresh_tokens_session')
      .on('refresh_tokens')
      .column('session_id')
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('refresh_tokens').execute();
    await db.schema.dropTable('sessions').execute();
    await db.schema.dropTable('signing_keys').execute();
  },
};
