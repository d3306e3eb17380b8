import type { Kysely } from 'kysely';
import type { NewTenantRow, Schema, TenantRow, TenantUpdate } from '../../storage/index.js';

export async function insertTenant(db: Kysely<Schema>, row: NewTenantRow): Promise<void> {
  await db.insertInto('tenants').values(row).execute();
}

export async function findTenant(db: Kysely<Schema>, id: string): Promise<TenantRow | undefined> {
  return db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listTenantRows(db: Kysely<Schema>): Promise<TenantRow[]> {
  return db.selectFrom('tenants').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function updateTenantRow(
  db: Kysely<Schema>,
  id: string,
  update: TenantUpdate,
): Promise<void> {
  await db.updateTable('tenants').set(update).where('id', '=', id).execute();
}
