import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const social: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('provider_settings')
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('client_id', 'text', (c) => c.notNull())
      // The client secret (or Apple's private key), sealed with the master secret.
      .addColumn('secret_jwe', 'text')
      .addColumn('team_id', 'text')
      .addColumn('key_id', 'text')
      .addColumn('audience', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('provider_settings_pk', ['tenant_id', 'provider'])
      .execute();
    // A provider identity, keyed by who asserts it (issuer) and whom (subject); never by e-mail.
    await db.schema
      .createTable('identities')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('email', 'text')
      .addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('identities_subject', ['tenant_id', 'provider', 'issuer', 'subject'])
      .execute();
    await db.schema
      .createIndex('identities_user')
      .on('identities')
      .columns(['tenant_id', 'user_id'])
      .execute();
    // Social sign-in flows in progress: state, nonce, PKCE verifier, the hosted request.
    await db.schema
      .createTable('oauth_flows')
      .addColumn('state', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('code_verifier', 'text', (c) => c.notNull())
      .addColumn('hosted_query', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    // Every link and every new identity is recorded.
    await db.schema
      .createTable('audit_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'text')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('detail', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('audit_events_tenant')
      .on('audit_events')
      .columns(['tenant_id', 'created_at'])
      .execute();
  },

  async down(db: Kysely<unknown>) {
    for (const table of ['audit_events', 'oauth_flows', 'identities', 'provider_settings']) {
      await db.schema.dropTable(table).execute();
    }
  },
};
