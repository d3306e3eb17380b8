import type { Kysely } from 'kysely';
import type { Schema, UserRow } from '../../storage/index.js';

export async function insertUser(db: Kysely<Schema>, row: UserRow): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

export async function findUserByEmailKey(
  db: Kysely<Schema>,
  tenantId: string,
  emailKey: string,
): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('email_key', '=', emailKey)
    .executeTakeFirst();
}

export async function findUserById(
  db: Kysely<Schema>,
  tenantId: string,
  id: string,
): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}
