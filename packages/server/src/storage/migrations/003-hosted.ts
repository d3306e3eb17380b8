import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const hosted: Migration = {
  async up(db: Kysely<unknown>) {
    // The hosted page's own sign-in, kept in a cookie on {auth_url}.
    await db.schema
      .createTable('hosted_sessions')
      .addColumn('hash', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .execute();
    // One-time PKCE codes handed to the caller in the redirect fragment.
    await db.schema
      .createTable('auth_codes')
      .addColumn('hash', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('session_id', 'text', (c) =>
        c.notNull().references('sessions.id').onDelete('cascade'),
      )
      .addColumn('code_challenge', 'text', (c) => c.notNull())
      .addColumn('redirect_origin', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    // Links sent by e-mail: verify an address, reset a password.
    await db.schema
      .createTable('email_tokens')
      .addColumn('hash', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('return_to', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    // Without SMTP_URL, mail lands here (and in the log, without its body).
    await db.schema
      .createTable('mail_outbox')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text')
      .addColumn('recipient', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },

  async down(db: Kysely<unknown>) {
    for (const table of ['mail_outbox', 'email_tokens', 'auth_codes', 'hosted_sessions']) {
      await db.schema.dropTable(table).execute();
    }
  },
};
