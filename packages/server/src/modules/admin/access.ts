import type { Kysely } from 'kysely';
import { LatchkeyError } from '../../errors/index.js';
import { isUuid, type Schema } from '../../storage/index.js';
import { recordAudit } from '../audit/index.js';
import { getTenant, searchTenants, type Tenant, type TenantSearch } from '../tenants/index.js';
import type { Admin } from './accounts.service.js';

/** Whether the admin may see this tenant at all. */
const canSee = (admin: Admin, tenantId: string) =>
  admin.superuser || admin.tenantIds.includes(tenantId);

/**
 * The tenant, when this admin may see it. Any other id answers not_found exactly like a
 * tenant that does not exist, so that a tenant-bound admin learns nothing of the others.
 */
export async function tenantForAdmin(
  db: Kysely<Schema>,
  admin: Admin,
  tenantId: string,
): Promise<Tenant> {
  if (!isUuid(tenantId) || !canSee(admin, tenantId))
    throw new LatchkeyError('not_found', 'No such tenant');
  return getTenant(db, tenantId);
}

/** A page of the tenants this admin may see (docs/design.md §21: never all of them at once). */
export function visibleTenants(
  db: Kysely<Schema>,
  admin: Admin,
  search: Omit<TenantSearch, 'ids'>,
): Promise<{ data: Tenant[]; next: string | null }> {
  return searchTenants(db, { ...search, ids: tenantScope(admin) });
}

/** Undefined for a superuser (everything); the granted ids otherwise. */
export const tenantScope = (admin: Admin) => (admin.superuser ? undefined : admin.tenantIds);

/** Writes an admin's change to the audit log, with the admin's e-mail. No secret goes in. */
export async function auditChange(
  db: Kysely<Schema>,
  admin: Admin,
  entry: {
    tenantId: string | null;
    kind: string;
    userId?: string;
    detail?: Record<string, unknown>;
  },
): Promise<void> {
  await recordAudit(db, { ...entry, actor: admin.email });
}
