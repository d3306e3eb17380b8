import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AuditEventRow, Schema } from '../../storage/index.js';

/**
 * The audit log: every change made in the admin area (with the admin's e-mail), bursts of
 * failed sign-ins, new identities and links. A detail never holds a secret or a password.
 */
export interface AuditEntry {
  tenantId: string | null;
  kind: string;
  /** The admin's e-mail for admin changes. */
  actor?: string | null;
  userId?: string | null;
  detail?: Record<string, unknown>;
}

export interface AuditEvent {
  id: string;
  tenantId: string | null;
  userId: string | null;
  actor: string | null;
  kind: string;
  detail: Record<string, unknown>;
  createdAt: string;
}

export async function recordAudit(db: Kysely<Schema>, entry: AuditEntry): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      id: randomUUID(),
      tenant_id: entry.tenantId,
      user_id: entry.userId ?? null,
      actor: entry.actor ?? null,
      kind: entry.kind,
      detail: JSON.stringify(entry.detail ?? {}),
      created_at: Date.now(),
    })
    .execute();
}

export interface AuditFilter {
  /** Only these tenants (a tenant-bound admin's); undefined: every tenant and none. */
  visibleTenants?: string[];
  tenantId?: string;
  actor?: string;
  kind?: string;
  limit: number;
}

const toEvent = (row: AuditEventRow): AuditEvent => ({
  id: row.id,
  tenantId: row.tenant_id,
  userId: row.user_id,
  actor: row.actor,
  kind: row.kind,
  detail: JSON.parse(row.detail) as Record<string, unknown>,
  createdAt: new Date(row.created_at).toISOString(),
});

/** Newest first. */
export async function queryAudit(db: Kysely<Schema>, filter: AuditFilter): Promise<AuditEvent[]> {
  let query = db.selectFrom('audit_events').selectAll();
  if (filter.visibleTenants) {
    if (filter.visibleTenants.length === 0) return [];
    query = query.where('tenant_id', 'in', filter.visibleTenants);
  }
  if (filter.tenantId) query = query.where('tenant_id', '=', filter.tenantId);
  if (filter.actor) query = query.where('actor', '=', filter.actor);
  if (filter.kind) query = query.where('kind', '=', filter.kind);
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(filter.limit)
    .execute();
  return rows.map(toEvent);
}
