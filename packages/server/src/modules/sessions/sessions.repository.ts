import type { Kysely } from 'kysely';
import type { RefreshTokenRow, Schema, SessionRow } from '../../storage/index.js';

export async function insertSession(db: Kysely<Schema>, row: SessionRow): Promise<void> {
  await db.insertInto('sessions').values(row).execute();
}

export async function insertRefreshToken(db: Kysely<Schema>, row: RefreshTokenRow): Promise<void> {
  await db.insertInto('refresh_tokens').values(row).execute();
}

/** The refresh token, its session and its user's state, within one tenant. */
export async function findRefreshToken(db: Kysely<Schema>, tenantId: string, hash: string) {
  return db
    .selectFrom('refresh_tokens as r')
    .innerJoin('sessions as s', 's.id', 'r.session_id')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select([
      'r.hash',
      'r.used_at',
      'r.expires_at',
      's.id as session_id',
      's.channel',
      's.revoked_at',
      's.expires_at as session_expires_at',
      'u.id as user_id',
      'u.disabled_at',
    ])
    .where('r.tenant_id', '=', tenantId)
    .where('r.hash', '=', hash)
    .executeTakeFirst();
}

/** Marks a refresh token used; false when another request used it first. */
export async function markRefreshTokenUsed(
  db: Kysely<Schema>,
  hash: string,
  at: number,
): Promise<boolean> {
  const result = await db
    .updateTable('refresh_tokens')
    .set({ used_at: at })
    .where('hash', '=', hash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function touchSession(db: Kysely<Schema>, id: string, at: number): Promise<void> {
  await db.updateTable('sessions').set({ last_used_at: at }).where('id', '=', id).execute();
}

export async function revokeSessionRows(
  db: Kysely<Schema>,
  tenantId: string,
  filter: { sessionId?: string; userId?: string },
  at: number,
  reason: string,
): Promise<string[]> {
  let query = db
    .selectFrom('sessions')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('revoked_at', 'is', null);
  if (filter.sessionId) query = query.where('id', '=', filter.sessionId);
  if (filter.userId) query = query.where('user_id', '=', filter.userId);
  const ids = (await query.execute()).map((r) => r.id);
  if (ids.length) {
    await db
      .updateTable('sessions')
      .set({ revoked_at: at, revoked_reason: reason })
      .where('id', 'in', ids)
      .where('revoked_at', 'is', null)
      .execute();
  }
  return ids;
}

export async function findSession(
  db: Kysely<Schema>,
  tenantId: string,
  id: string,
): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listSessionRows(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
): Promise<SessionRow[]> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .execute();
}

/** What introspection needs to know about a session, in one query. */
export async function findSessionState(db: Kysely<Schema>, tenantId: string, id: string) {
  return db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.user_id', 's.revoked_at', 's.expires_at', 'u.disabled_at', 'u.email', 'u.roles'])
    .where('s.tenant_id', '=', tenantId)
    .where('s.id', '=', id)
    .executeTakeFirst();
}
