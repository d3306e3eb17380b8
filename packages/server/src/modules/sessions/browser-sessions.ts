import type { Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import { sha256Hex } from '../../crypto/hash.js';
import { randomToken } from '../../crypto/random.js';
import type { Schema } from '../../storage/index.js';
import { getUser, type User } from '../users/index.js';

/**
 * The hosted page's own sign-in, kept in a cookie on `{auth_url}`: a returning browser
 * goes straight back. Only the hash of the cookie value is stored.
 */

/**
 * A new cookie value each time (no fixation), bound to the API session it opened, with how
 * the sign-in authenticated (`amr`).
 */
export async function startBrowserSession(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
  sessionId: string | null = null,
  amr?: readonly string[],
): Promise<string> {
  const value = randomToken();
  const now = Date.now();
  await db
    .insertInto('hosted_sessions')
    .values({
      hash: sha256Hex(value),
      tenant_id: tenantId,
      user_id: userId,
      created_at: now,
      expires_at: now + defaults.hosted.browserSessionMs,
      revoked_at: null,
      session_id: sessionId,
      amr: amr ? JSON.stringify(amr) : null,
    })
    .execute();
  return value;
}

export async function browserSessionUser(
  db: Kysely<Schema>,
  tenantId: string,
  value: string,
): Promise<User | undefined> {
  const row = await db
    .selectFrom('hosted_sessions')
    .select(['user_id', 'expires_at', 'revoked_at'])
    .where('hash', '=', sha256Hex(value))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!row || row.revoked_at !== null || row.expires_at <= Date.now()) return undefined;
  const user = await getUser(db, tenantId, row.user_id).catch(() => undefined);
  return user && !user.disabled ? user : undefined;
}

/**
 * A live hosted session: the API session it opened (undefined: none), when it started,
 * which is when its browser last authenticated, and how (`amr`, undefined when not kept);
 * undefined when not live.
 */
export async function browserSessionBinding(
  db: Kysely<Schema>,
  tenantId: string,
  value: string,
): Promise<
  { sessionId: string | undefined; startedAt: number; amr: string[] | undefined } | undefined
> {
  const row = await db
    .selectFrom('hosted_sessions')
    .select(['session_id', 'created_at', 'expires_at', 'revoked_at', 'amr'])
    .where('hash', '=', sha256Hex(value))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!row || row.revoked_at !== null || row.expires_at <= Date.now()) return undefined;
  return {
    sessionId: row.session_id ?? undefined,
    startedAt: row.created_at,
    amr: row.amr ? (JSON.parse(row.amr) as string[]) : undefined,
  };
}

/** Binds a hosted session to the API session it now resumes. */
export async function bindBrowserSession(
  db: Kysely<Schema>,
  value: string,
  sessionId: string,
): Promise<void> {
  await db
    .updateTable('hosted_sessions')
    .set({ session_id: sessionId })
    .where('hash', '=', sha256Hex(value))
    .execute();
}

/**
 * Signs a user's browsers out of the hosted page (password reset, sign out everywhere; a
 * password change keeps the browser that made it, `except` its cookie value).
 */
export async function endUserBrowserSessions(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
  except?: string,
): Promise<void> {
  let query = db
    .updateTable('hosted_sessions')
    .set({ revoked_at: Date.now() })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null);
  if (except) query = query.where('hash', '!=', sha256Hex(except));
  await query.execute();
}

/**
 * Signs out of the hosted page the browsers whose hosted session opened one of these API
 * sessions or came back through it: ending a session (signing out, a revocation) must
 * not leave its browser a way straight back in.
 */
export async function endBrowserSessionsOf(
  db: Kysely<Schema>,
  tenantId: string,
  sessionIds: string[],
): Promise<void> {
  if (sessionIds.length === 0) return;
  await db
    .updateTable('hosted_sessions')
    .set({ revoked_at: Date.now() })
    .where('tenant_id', '=', tenantId)
    .where('session_id', 'in', sessionIds)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Signs this browser out of the hosted page. */
export async function endBrowserSession(db: Kysely<Schema>, value: string): Promise<void> {
  await db
    .updateTable('hosted_sessions')
    .set({ revoked_at: Date.now() })
    .where('hash', '=', sha256Hex(value))
    .execute();
}
