import type { Kysely } from 'kysely';
import { LatchkeyError } from '../../errors/index.js';
import { isUuid, type Schema, type SessionRow, type Tx } from '../../storage/index.js';
import { endBrowserSessionsOf } from './browser-sessions.js';
import { findSession, listSessionRows, revokeSessionRows } from './sessions.repository.js';

export interface Session {
  id: string;
  userId: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  revokedAt: string | null;
  revokedReason: string | null;
  ip: string | null;
  userAgent: string | null;
}

/** Which sessions a revocation ends: one, or all of a user's. */
export type RevokeFilter = { sessionId?: string; userId?: string };

function toSession(row: SessionRow): Session {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: row.id,
    userId: row.user_id,
    createdAt: new Date(row.created_at).toISOString(),
    lastUsedAt: new Date(row.last_used_at).toISOString(),
    expiresAt: new Date(row.expires_at).toISOString(),
    revokedAt: iso(row.revoked_at),
    revokedReason: row.revoked_reason,
    ip: row.ip,
    userAgent: row.user_agent,
  };
}

/**
 * Revokes sessions within a workflow's transaction, with the hosted-page sessions bound
 * to them (every instance reads those from the database); caches drop after the commit.
 */
export async function revokeSessionsIn(
  tx: Tx,
  tenantId: string,
  filter: RevokeFilter,
  reason: string,
): Promise<string[]> {
  const ids = await revokeSessionRows(tx.db, tenantId, filter, Date.now(), reason);
  await endBrowserSessionsOf(tx.db, tenantId, ids);
  for (const id of ids) tx.invalidate(`session:${id}`);
  return ids;
}

/** One session of the tenant; not_found when it has no such session. */
export async function getSession(
  db: Kysely<Schema>,
  tenantId: string,
  sessionId: string,
): Promise<Session> {
  const row = isUuid(sessionId) ? await findSession(db, tenantId, sessionId) : undefined;
  if (!row) throw new LatchkeyError('not_found', `No session ${sessionId}`);
  return toSession(row);
}

export async function listSessions(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
): Promise<Session[]> {
  return (await listSessionRows(db, tenantId, userId)).map(toSession);
}
