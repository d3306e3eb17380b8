import type { Kysely } from 'kysely';
import type { ApiKeyRow, Schema, TenantRow } from '../../storage/index.js';

export async function insertKey(db: Kysely<Schema>, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

export async function listKeyRows(db: Kysely<Schema>, tenantId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function revokeKeyRow(
  db: Kysely<Schema>,
  tenantId: string,
  keyId: string,
  at: number,
): Promise<ApiKeyRow | undefined> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .execute();
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', keyId)
    .executeTakeFirst();
}

/** The live key with this hash, and its tenant, in one query. */
export async function findLiveKeyByHash(
  db: Kysely<Schema>,
  hash: string,
): Promise<{ key: ApiKeyRow; tenant: TenantRow } | undefined> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('tenants as t', 't.id', 'k.tenant_id')
    .selectAll('t')
    .select([
      'k.id as k_id',
      'k.kind as k_kind',
      'k.hash as k_hash',
      'k.prefix as k_prefix',
      'k.last4 as k_last4',
      'k.publishable as k_publishable',
      'k.scopes as k_scopes',
      'k.name as k_name',
      'k.created_at as k_created_at',
      'k.revoked_at as k_revoked_at',
      'k.last_used_at as k_last_used_at',
    ])
    .where('k.hash', '=', hash)
    .where('k.revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const {
    k_id,
    k_kind,
    k_hash,
    k_prefix,
    k_last4,
    k_publishable,
    k_scopes,
    k_name,
    k_created_at,
    k_revoked_at,
    k_last_used_at,
    ...tenant
  } = row;
  return {
    key: {
      id: k_id,
      tenant_id: tenant.id,
      kind: k_kind,
      hash: k_hash,
      prefix: k_prefix,
      last4: k_last4,
      publishable: k_publishable,
      scopes: k_scopes,
      name: k_name,
      created_at: k_created_at,
      revoked_at: k_revoked_at,
      last_used_at: k_last_used_at,
    },
    tenant,
  };
}
