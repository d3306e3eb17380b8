import { type Kysely, sql } from 'kysely';
import { defaults } from '../../config/defaults.js';
import { type FieldError, LatchkeyError, validationFailed } from '../../errors/index.js';
import {
  isUuid,
  type Publisher,
  prepared,
  type Schema,
  transact,
  type UserRow,
} from '../../storage/index.js';
import { emitEvent } from '../webhooks/index.js';
import { emailKey } from './email.js';
import { checkMetadata, checkName } from './profile-rules.js';

/** A user as the API shows it. The password hash never leaves this module. */
export interface User {
  id: string;
  email: string;
  name: string | null;
  metadata: Record<string, unknown>;
  roles: string[];
  emailVerified: boolean;
  disabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    roles: JSON.parse(row.roles) as string[],
    emailVerified: row.email_verified_at !== null,
    disabled: row.disabled_at !== null,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

export async function getUser(db: Kysely<Schema>, tenantId: string, id: string): Promise<User> {
  const row = isUuid(id) ? await findUserById(db, tenantId, id) : undefined;
  if (!row) throw new LatchkeyError('not_found', `No user ${id}`);
  return toUser(row);
}

/** What the browser may see of a user (GET /v1/client/user, docs/design.md §18.4). */
export interface BrowserProfile {
  id: string;
  email: string;
  emailVerified: boolean;
  name: string | null;
  /**
   * The picture (an https URL) of the user's most recently used identity that has one, as
   * its provider gave it at that sign-in; else null.
   */
  picture: string | null;
  /** `metadata.public` when it is an object: the only part of the metadata a browser sees. */
  publicMetadata: Record<string, unknown>;
  createdAt: string;
}

/** The profile of a user for their own browser, or undefined when there is no such user. */
export async function browserProfile(
  db: Kysely<Schema>,
  tenantId: string,
  id: string,
): Promise<BrowserProfile | undefined> {
  const row = isUuid(id) ? await findUserById(db, tenantId, id) : undefined;
  if (!row) return undefined;
  const user = toUser(row);
  const shown = user.metadata.public;
  const pictured = await db
    .selectFrom('identities')
    .select('picture')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', id)
    .where('picture', 'is not', null)
    .orderBy('last_used_at', 'desc')
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return {
    id: user.id,
    email: user.email,
    emailVerified: user.emailVerified,
    name: user.name,
    picture: pictured?.picture ?? null,
    publicMetadata:
      typeof shown === 'object' && shown !== null && !Array.isArray(shown)
        ? (shown as Record<string, unknown>)
        : {},
    createdAt: user.createdAt,
  };
}

export interface ListUsersInput {
  email?: string;
  /** Part of an address or a name, any case (the admin area's search). */
  query?: string;
  limit?: number;
  cursor?: string;
}

function decodeCursor(cursor: string): { createdAt: number; id: string } {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [
      number,
      string,
    ];
    if (Number.isSafeInteger(createdAt) && createdAt >= 0 && typeof id === 'string' && isUuid(id)) {
      return { createdAt, id };
    }
  } catch {}
  throw new LatchkeyError('invalid_request', 'cursor is not one this API returned');
}

/** Oldest first; pass `nextCursor` back as `cursor` for the next page. */
export async function listUsers(
  db: Kysely<Schema>,
  tenantId: string,
  input: ListUsersInput,
): Promise<{ data: User[]; nextCursor: string | null }> {
  const limit = input.limit ?? defaults.users.pageSize;
  const rows = await listUserRows(db, tenantId, {
    emailKey: input.email === undefined ? undefined : emailKey(input.email.trim()),
    contains: input.query?.trim() || undefined,
    after: input.cursor ? decodeCursor(input.cursor) : undefined,
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    data: page.map(toUser),
    nextCursor:
      rows.length > limit && last
        ? Buffer.from(JSON.stringify([last.created_at, last.id])).toString('base64url')
        : null,
  };
}

export interface UpdateUserInput {
  name?: string | null;
  metadata?: Record<string, unknown>;
  roles?: string[];
  disabled?: boolean;
}

const ROLE_MAX = defaults.users.roles.maxLength;
const ROLE = new RegExp(`^[A-Za-z0-9_.:-]{1,${ROLE_MAX}}$`);

/**
 * Checks and writes a change to a user, within the caller's transaction (the workflow
 * `updateUser` of the sessions module also revokes sessions when it disables).
 */
export async function applyUserUpdate(
  db: Kysely<Schema>,
  tenantId: string,
  id: string,
  input: UpdateUserInput,
): Promise<{ user: User; disabledNow: boolean }> {
  const before = await getUser(db, tenantId, id);
  const errors: FieldError[] = [];
  const nameError = typeof input.name === 'string' ? checkName(input.name) : undefined;
  if (nameError) errors.push(nameError);
  const metadataError = input.metadata === undefined ? undefined : checkMetadata(input.metadata);
  if (metadataError) errors.push(metadataError);
  input.roles?.forEach((role, i) => {
    if (!ROLE.test(role)) {
      errors.push({
        path: `/roles/${i}`,
        code: 'roles_invalid',
        message: `a role is 1 to ${ROLE_MAX} of A-Z a-z 0-9 _ . : -`,
      });
    }
  });
  if (errors.length) throw validationFailed(errors);
  const now = Date.now();
  await updateUserRow(db, tenantId, id, {
    updated_at: now,
    ...(input.name !== undefined ? { name: input.name === null ? null : input.name.trim() } : {}),
    ...(input.metadata !== undefined ? { metadata: JSON.stringify(input.metadata) } : {}),
    ...(input.roles !== undefined ? { roles: JSON.stringify([...new Set(input.roles)]) } : {}),
    ...(input.disabled !== undefined
      ? { disabled_at: input.disabled ? (before.disabled ? undefined : now) : null }
      : {}),
  });
  return {
    user: await getUser(db, tenantId, id),
    disabledNow: input.disabled === true && !before.disabled,
  };
}

/** Deletes a user; the database deletes their sessions, identities and links with them. */
export async function deleteUser(
  deps: { db: Kysely<Schema>; bus: Publisher },
  tenantId: string,
  id: string,
): Promise<void> {
  await transact(deps.db, deps.bus, async (tx) => {
    if (!isUuid(id) || !(await deleteUserRow(tx.db, tenantId, id))) {
      throw new LatchkeyError('not_found', `No user ${id}`);
    }
    tx.invalidate(`user:${id}`);
  });
}

export async function markEmailVerified(
  db: Kysely<Schema>,
  tenantId: string,
  id: string,
): Promise<void> {
  const now = Date.now();
  await updateUserRow(db, tenantId, id, { email_verified_at: now, updated_at: now });
}

/** Sets a new password (already checked by checkPassword) for a user. */
export async function setPasswordHash(
  db: Kysely<Schema>,
  tenantId: string,
  id: string,
  hash: string,
): Promise<void> {
  await updateUserRow(db, tenantId, id, { password_hash: hash, updated_at: Date.now() });
}

export async function findUserByEmail(
  db: Kysely<Schema>,
  tenantId: string,
  email: string,
): Promise<User | undefined> {
  const row = await findUserByEmailKey(db, tenantId, emailKey(email.trim()));
  return row && toUser(row);
}

/** Whether the user can sign in with a password (a social-only user cannot). */
export async function userHasPassword(
  db: Kysely<Schema>,
  tenantId: string,
  id: string,
): Promise<boolean> {
  const row = await findUserById(db, tenantId, id);
  return !!row?.password_hash;
}

// ----- The users table -----

/** Writes a new user, and its `user.created` event (docs/design.md §17) on the same handle. */
export async function insertUser(db: Kysely<Schema>, row: UserRow): Promise<void> {
  await db.insertInto('users').values(row).execute();
  await emitEvent(db, row.tenant_id, 'user.created', toUser(row));
}

/** Asked at every sign-in: compiled once (storage/prepared.ts). */
const userByEmailKey = prepared<{ tenantId: string; emailKey: string }, UserRow>((db, value) =>
  db
    .selectFrom('users')
    .selectAll()
    .where('tenant_id', '=', value('tenantId'))
    .where('email_key', '=', value('emailKey')),
);

export async function findUserByEmailKey(
  db: Kysely<Schema>,
  tenantId: string,
  emailKey: string,
): Promise<UserRow | undefined> {
  return (await userByEmailKey(db, { tenantId, emailKey })).rows[0];
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
  options: {
    emailKey?: string;
    /** Part of the address or the name, matched in any case. */
    contains?: string;
    after?: { createdAt: number; id: string };
    limit: number;
  },
): Promise<UserRow[]> {
  let query = db.selectFrom('users').selectAll().where('tenant_id', '=', tenantId);
  if (options.emailKey !== undefined) query = query.where('email_key', '=', options.emailKey);
  if (options.contains !== undefined) {
    // LIKE's own characters (and the escape) are matched as typed, on both databases. Both
    // sides are folded by the database's lower(), so they fold alike: SQLite's folds ASCII
    // letters only, PostgreSQL's every letter.
    const pattern = `%${options.contains.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) =>
      eb.or([
        sql<boolean>`lower(${eb.ref('email')}) like lower(${pattern}) escape '\\'`,
        sql<boolean>`lower(${eb.ref('name')}) like lower(${pattern}) escape '\\'`,
      ]),
    );
  }
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
  const result = await db
    .updateTable('users')
    .set(update)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 1)
    await emitEvent(db, tenantId, 'user.updated', async () => getUser(db, tenantId, id));
}

export async function deleteUserRow(
  db: Kysely<Schema>,
  tenantId: string,
  id: string,
): Promise<boolean> {
  const deleted = await db
    .deleteFrom('users')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning(['id', 'email'])
    .executeTakeFirst();
  if (deleted) await emitEvent(db, tenantId, 'user.deleted', deleted);
  return !!deleted;
}
