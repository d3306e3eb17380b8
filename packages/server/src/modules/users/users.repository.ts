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

export async function listUserRows(
  db: Kysely<Schema>,
  tenantId: string,
  options: { emailKey?: string; after?: { createdAt: number; id: string }; limit: number },
): Promise<UserRow[]> {
  let query = db.selectFrom('users').selectAll().where('tenant_id', '=', tenantId);
  if (options.emailKey !== undefined) query = query.where('email_key', '=', options.emailKey);
  const after = options.after;
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)]),
      ]),
    );
  }
  return query.orderBy('created_at').orderBy('id').limit(options.limit).execute();
}

export async function updateUserRow(
  db: Kysely<Schema>,
  tenantId: string,
  id: string,
  update: Partial<
    Pick<
      UserRow,
      | 'name'
      | 'metadata'
      | 'roles'
      | 'disabled_at'
      | 'email_verified_at'
      | 'password_hash'
      | 'updated_at'
    >
  >,
): Promise<void> {
  await db
    .updateTable('users')
    .set(update)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute();
}

export async function deleteUserRow(
  db: Kysely<Schema>,
  tenantId: string,
  id: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('users')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}
