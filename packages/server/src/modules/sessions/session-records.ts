import { randomUUID } from 'node:crypto';
import type { InsertResult, Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import {
  columnValues,
  isUuid,
  prepared,
  type Schema,
  type SessionRow,
  type Tx,
} from '../../storage/index.js';
import { emitEach, emitEvent } from '../webhooks/index.js';
import { endBrowserSessionsOf } from './browser-sessions.js';

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

/** Which sessions a revocation ends: one, all of a user's, or those of an OAuth grant. */
export type RevokeFilter = {
  sessionId?: string;
  userId?: string;
  oauthGrantId?: string;
  /** The sessions an app of the tenant's OpenID Provider opened (docs/design.md §14). */
  oauthClientId?: string;
  /** Every one but this (the browser that asked, on a password change). */
  exceptSessionId?: string;
};

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

/**
 * docs/design.md §14: the session of the tokens an app of the tenant's OpenID Provider gets
 * from one authorization code (channel `oauth`; its refresh tokens are the provider's).
 * Its access tokens carry its id as `sid`, so introspection and sign-out treat them like
 * any other; it ends when the grant is revoked. Returns its id.
 */
export async function openOAuthSession(
  db: Kysely<Schema>,
  input: {
    tenantId: string;
    userId: string;
    grantId: string;
    clientId: string;
    amr: string[] | undefined;
    authenticatedAt: number;
  },
): Promise<string> {
  const now = Date.now();
  const id = randomUUID();
  // With its `session.created` event: one transaction.
  const row: SessionRow = {
    id,
    tenant_id: input.tenantId,
    user_id: input.userId,
    created_at: now,
    last_used_at: now,
    expires_at: now + defaults.sessions.lifetimeMs,
    revoked_at: null,
    revoked_reason: null,
    ip: null,
    user_agent: null,
    channel: 'oauth',
    amr: input.amr === undefined ? null : JSON.stringify(input.amr),
    authenticated_at: input.authenticatedAt,
    oauth_grant_id: input.grantId,
    oauth_client_id: input.clientId,
  };
  await db.transaction().execute((trx) => insertSessionRow(trx, row));
  return id;
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

/** The `data` of `session.created` (docs/design.md §17). */
export function sessionCreatedData(row: SessionRow) {
  return {
    id: row.id,
    userId: row.user_id,
    channel: row.channel,
    createdAt: new Date(row.created_at).toISOString(),
    expiresAt: new Date(row.expires_at).toISOString(),
    ip: row.ip,
    userAgent: row.user_agent,
    ...(row.oauth_client_id !== null && { clientId: row.oauth_client_id }),
  };
}

const SESSION_COLUMNS: Record<keyof SessionRow, true> = {
  id: true,
  tenant_id: true,
  user_id: true,
  created_at: true,
  last_used_at: true,
  expires_at: true,
  revoked_at: true,
  revoked_reason: true,
  ip: true,
  user_agent: true,
  channel: true,
  amr: true,
  authenticated_at: true,
  oauth_grant_id: true,
  oauth_client_id: true,
};
/** Every sign-in writes one: compiled once (storage/prepared.ts). */
const insertSession = prepared<SessionRow, InsertResult>((db, value) =>
  db.insertInto('sessions').values(columnValues(SESSION_COLUMNS, value)),
);

/** Writes a new session, and its `session.created` event on the same handle. */
export async function insertSessionRow(db: Kysely<Schema>, row: SessionRow): Promise<void> {
  await insertSession(db, row);
  await emitEvent(db, row.tenant_id, 'session.created', sessionCreatedData(row));
}

// ----- Rows -----

async function revokeSessionRows(
  db: Kysely<Schema>,
  tenantId: string,
  filter: RevokeFilter,
  at: number,
  reason: string,
): Promise<string[]> {
  let query = db
    .selectFrom('sessions')
    .select(['id', 'user_id'])
    .where('tenant_id', '=', tenantId)
    .where('revoked_at', 'is', null);
  if (filter.sessionId) query = query.where('id', '=', filter.sessionId);
  if (filter.userId) query = query.where('user_id', '=', filter.userId);
  if (filter.exceptSessionId) query = query.where('id', '!=', filter.exceptSessionId);
  if (filter.oauthGrantId) query = query.where('oauth_grant_id', '=', filter.oauthGrantId);
  if (filter.oauthClientId) query = query.where('oauth_client_id', '=', filter.oauthClientId);
  const rows = await query.execute();
  const ids = rows.map((r) => r.id);
  if (ids.length) {
    await db
      .updateTable('sessions')
      .set({ revoked_at: at, revoked_reason: reason })
      .where('id', 'in', ids)
      .where('revoked_at', 'is', null)
      .execute();
    const endedAt = new Date(at).toISOString();
    await emitEach(
      db,
      tenantId,
      'session.ended',
      rows.map((r) => ({ id: r.id, userId: r.user_id, reason, endedAt })),
    );
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

async function listSessionRows(
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
