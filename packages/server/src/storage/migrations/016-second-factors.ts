import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export const secondFactors: Migration = {
  /**
   * Second factors (docs/design.md §13): a tenant's policy (`mfa_policy` off, optional or
   * required; `passkeys_enabled`), authenticator-app (TOTP, RFC 6238) factors with their
   * secret sealed like provider secrets, single-use recovery codes stored hashed, and the
   * pending sign-ins that wait for a second factor (`mfa_challenges`, by the hash of the
   * `mfaToken`).
   */
  async up(db: Kysely<unknown>) {
    // How the sign-in that started a hosted session authenticated (a JSON `amr`): a
    // returning browser is let straight back only on a sign-in that met today's factors.
    await db.schema.alterTable('hosted_sessions').addColumn('amr', 'text').execute();
    await db.schema
      .alterTable('tenants')
      .addColumn('mfa_policy', 'text', (c) => c.notNull().defaultTo('optional'))
      .execute();
    await db.schema
      .alterTable('tenants')
      .addColumn('passkeys_enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .execute();
    await db.schema
      .createTable('totp_factors')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('secret_jwe', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('confirmed_at', 'bigint')
      // The last 30-second step whose code was accepted: a code is accepted once.
      .addColumn('last_step', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('totp_factors_user')
      .on('totp_factors')
      // User first: a user's deletion cascades by user_id alone.
      .columns(['user_id', 'tenant_id'])
      .execute();
    await db.schema
      .createTable('recovery_codes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('recovery_codes_user')
      .on('recovery_codes')
      .columns(['user_id', 'tenant_id'])
      .execute();
    await db.schema
      .createTable('mfa_challenges')
      .addColumn('hash', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) =>
        c.notNull().references('tenants.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      // JSON array: how the person authenticated so far (["pwd"], ["fed"]).
      .addColumn('amr', 'text', (c) => c.notNull())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('mfa_challenges_user')
      .on('mfa_challenges')
      .column('user_id')
      .execute();
    await db.schema
      .createIndex('mfa_challenges_expiry')
      .on('mfa_challenges')
      .column('expires_at')
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('mfa_challenges').execute();
    await db.schema.dropTable('recovery_codes').execute();
    await db.schema.dropTable('totp_factors').execute();
    await db.schema.alterTable('tenants').dropColumn('passkeys_enabled').execute();
    await db.schema.alterTable('tenants').dropColumn('mfa_policy').execute();
    await db.schema.alterTable('hosted_sessions').dropColumn('amr').execute();
  },
};
