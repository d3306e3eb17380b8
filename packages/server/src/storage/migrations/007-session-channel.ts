import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';

export const sessionChannel: Migration = {
  async up(db: Kysely<unknown>) {
    // Which client a session's refresh tokens were handed to: `server` (a secret-key
    // caller, /v1/auth/…) or `browser` (a PKCE code redeemed at /v1/client/token). A
    // refresh token is accepted only on its own channel.
    await db.schema
      .alterTable('sessions')
      .addColumn('channel', 'text', (c) => c.notNull().defaultTo('server'))
      .execute();
    // Until now only browser sign-ins made PKCE codes, and codes were never purged.
    await sql`update sessions set channel = 'browser' where id in (select session_id from auth_codes)`.execute(
      db,
    );
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('sessions').dropColumn('channel').execute();
  },
};
