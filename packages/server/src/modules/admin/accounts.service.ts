import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError, validationFailed } from '../../errors/index.js';
import { type AdminRow, isUniqueViolation, type Schema } from '../../storage/index.js';
import { getTenant } from '../tenants/index.js';
import { checkPassword, emailKey, isValidEmail, type PasswordHasher } from '../users/index.js';

/** An admin of the admin area: a superuser sees every tenant, another admin only its own. */
export interface Admin {
  id: string;
  email: string;
  superuser: boolean;
  /** The tenants granted to a tenant-bound admin (empty for a superuser). */
  tenantIds: string[];
  createdAt: string;
}

export interface AccountDeps {
  db: Kysely<Schema>;
  hasher: PasswordHasher;
}

export interface CreateAdminInput {
  email: string;
  /** Omitted: one is generated and returned once. */
  password?: string;
  superuser: boolean;
  tenantIds: string[];
}

export const generatePassword = () =>
  randomBytes(defaults.admin.generatedPasswordBytes).toString('base64url');

async function grantsOf(db: Kysely<Schema>, adminId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('admin_tenants')
    .select('tenant_id')
    .where('admin_id', '=', adminId)
    .orderBy('tenant_id')
    .execute();
  return rows.map((r) => r.tenant_id);
}

export async function toAdmin(db: Kysely<Schema>, row: AdminRow): Promise<Admin> {
  return {
    id: row.id,
    email: row.email,
    superuser: row.superuser === 1,
    tenantIds: row.superuser === 1 ? [] : await grantsOf(db, row.id),
    createdAt: new Date(row.created_at).toISOString(),
  };
}

function checkedPassword(password: string): string {
  const problem = checkPassword(password)[0];
  if (problem) throw validationFailed([problem]);
  return password;
}

/** Creates an admin; `password` is returned only when it was generated (shown once). */
export async function createAdmin(
  deps: AccountDeps,
  input: CreateAdminInput,
): Promise<{ admin: Admin; generatedPassword?: string }> {
  const email = input.email.trim();
  if (!isValidEmail(email)) {
    throw validationFailed([
      { path: '/email', code: 'email_invalid', message: 'the e-mail address is not valid' },
    ]);
  }
  if (input.superuser === input.tenantIds.length > 0) {
    throw validationFailed([
      {
        path: '/tenants',
        code: 'admin_scope_invalid',
        message: 'an admin is either a superuser or bound to one or more tenants',
      },
    ]);
  }
  for (const tenantId of input.tenantIds) await getTenant(deps.db, tenantId);
  const generated = input.password === undefined ? generatePassword() : undefined;
  const hash = await deps.hasher.hash(checkedPassword(input.password ?? (generated as string)));
  const now = Date.now();
  const row: AdminRow = {
    id: randomUUID(),
    email,
    email_key: emailKey(email),
    password_hash: hash,
    superuser: input.superuser ? 1 : 0,
    created_at: now,
    updated_at: now,
  };
  try {
    await deps.db.transaction().execute(async (trx) => {
      await trx.insertInto('admins').values(row).execute();
      for (const tenantId of new Set(input.tenantIds)) {
        await trx
          .insertInto('admin_tenants')
          .values({ admin_id: row.id, tenant_id: tenantId })
          .execute();
      }
    });
  } catch (error) {
    if (isUniqueViolation(error))
      throw new LatchkeyError('email_taken', `An admin with the address ${email} exists`);
    throw error;
  }
  return { admin: await toAdmin(deps.db, row), generatedPassword: generated };
}

export async function listAdmins(db: Kysely<Schema>): Promise<Admin[]> {
  const rows = await db.selectFrom('admins').selectAll().orderBy('created_at').execute();
  return Promise.all(rows.map((row) => toAdmin(db, row)));
}

export async function findAdminRow(db: Kysely<Schema>, email: string) {
  return db
    .selectFrom('admins')
    .selectAll()
    .where('email_key', '=', emailKey(email.trim()))
    .executeTakeFirst();
}

async function requireAdminRow(db: Kysely<Schema>, email: string): Promise<AdminRow> {
  const row = await findAdminRow(db, email);
  if (!row) throw new LatchkeyError('not_found', `No admin with the address ${email}`);
  return row;
}

/** Deletes an admin; the database ends their sessions and grants with them. */
export async function deleteAdmin(db: Kysely<Schema>, email: string): Promise<void> {
  const row = await requireAdminRow(db, email);
  await db.deleteFrom('admins').where('id', '=', row.id).execute();
}

/** A new password (generated when omitted, returned once); every session of the admin ends. */
export async function resetAdminPassword(
  deps: AccountDeps,
  email: string,
  password?: string,
): Promise<{ generatedPassword?: string }> {
  const row = await requireAdminRow(deps.db, email);
  const generated = password === undefined ? generatePassword() : undefined;
  const hash = await deps.hasher.hash(checkedPassword(password ?? (generated as string)));
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('admins')
      .set({ password_hash: hash, updated_at: Date.now() })
      .where('id', '=', row.id)
      .execute();
    await trx.deleteFrom('admin_sessions').where('admin_id', '=', row.id).execute();
  });
  return { generatedPassword: generated };
}

export async function countAdmins(db: Kysely<Schema>): Promise<number> {
  const row = await db
    .selectFrom('admins')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
