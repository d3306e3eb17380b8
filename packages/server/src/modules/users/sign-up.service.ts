import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import { type FieldError, LatchkeyError, validationFailed } from '../../errors/index.js';
import { isUniqueViolation, type Schema, type UserRow } from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import type { BreachedPasswords } from './breached-passwords.js';
import { emailKey, isValidEmail } from './email.js';
import { codePointLength, type PasswordHasher } from './password.js';
import { checkMetadata, checkName } from './profile-rules.js';
import { findUserByEmailKey, insertUser, toUser, type User } from './users.service.js';

export interface SignUpInput {
  email: string;
  password: string;
  name?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface SignUpResult {
  userId: string;
  email: string;
  createdAt: string;
  verificationRequired: boolean;
}

export interface UsersDeps {
  db: Kysely<Schema>;
  hasher: PasswordHasher;
  /** Refuses breached and common passwords (docs/design.md §13). */
  breached: BreachedPasswords;
}

/** The password rules alone (the reset page uses them too). */
export function checkPassword(password: string): FieldError[] {
  return checkSignUp({ email: 'x@example.com', password }).filter((e) => e.path === '/password');
}

/** The field rules of sign-up; the same rules serve the API and the hosted pages. */
export function checkSignUp(input: SignUpInput): FieldError[] {
  const errors: FieldError[] = [];
  const email = input.email.trim();
  if (!isValidEmail(email)) {
    errors.push({
      path: '/email',
      code: 'email_invalid',
      message: 'email is not a valid e-mail address',
    });
  }
  const { minLength, maxLength } = defaults.password;
  const length = codePointLength(input.password);
  if (!input.password.isWellFormed()) {
    errors.push({
      path: '/password',
      code: 'password_invalid',
      message: 'password contains an unpaired surrogate',
    });
  } else if (length < minLength) {
    errors.push({
      path: '/password',
      code: 'password_too_short',
      message: `password must be at least ${minLength} characters`,
    });
  } else if (length > maxLength) {
    errors.push({
      path: '/password',
      code: 'password_too_long',
      message: `password must be at most ${maxLength} characters`,
    });
  }
  const nameError = input.name === undefined ? undefined : checkName(input.name);
  if (nameError) errors.push(nameError);
  const metadataError = input.metadata === undefined ? undefined : checkMetadata(input.metadata);
  if (metadataError) errors.push(metadataError);
  return errors;
}

function emailTaken(): LatchkeyError {
  return new LatchkeyError('email_taken', 'An account with this e-mail address already exists');
}

/** Sign-up over the API: the user and its `user.created` event in one transaction. */
export async function signUp(
  deps: UsersDeps,
  tenant: Tenant,
  input: SignUpInput,
): Promise<SignUpResult> {
  const row = await preparePasswordUser(deps, tenant, input);
  await deps.db.transaction().execute((trx) => insertNewUser(trx, row));
  return {
    userId: row.id,
    email: row.email,
    createdAt: new Date(row.created_at).toISOString(),
    verificationRequired: tenant.requireEmailVerification,
  };
}

/**
 * Checks a sign-up and hashes its password, before any transaction opens (argon2 is
 * slow and must hold no lock); `insertNewUser` then writes the row.
 */
export async function preparePasswordUser(
  deps: UsersDeps,
  tenant: Tenant,
  input: SignUpInput,
): Promise<UserRow> {
  const errors = checkSignUp(input);
  if (errors.length) throw validationFailed(errors);
  // Before the address is looked up, so that a taken address and a new one are refused
  // alike (the hosted page never tells who has an account).
  const breach = await deps.breached.check(input.password);
  if (breach) throw validationFailed([breach]);
  const email = input.email.trim();
  const key = emailKey(email);
  // Checked before hashing so that a duplicate costs no argon2 work; the unique index
  // settles races between concurrent sign-ups.
  if (await findUserByEmailKey(deps.db, tenant.id, key)) throw emailTaken();
  const passwordHash = await deps.hasher.hash(input.password);
  const now = Date.now();
  return {
    id: randomUUID(),
    tenant_id: tenant.id,
    email,
    email_key: key,
    password_hash: passwordHash,
    name: input.name?.trim() ?? null,
    metadata: JSON.stringify(input.metadata ?? {}),
    roles: '[]',
    email_verified_at: null,
    disabled_at: null,
    created_at: now,
    updated_at: now,
  };
}

/** Writes a new user; email_taken when the address is registered already. */
export async function insertNewUser(db: Kysely<Schema>, row: UserRow): Promise<User> {
  try {
    await insertUser(db, row);
  } catch (error) {
    if (isUniqueViolation(error)) throw emailTaken();
    throw error;
  }
  return toUser(row);
}

/** A user who signs in with a provider only (no password). */
export async function createUserWithoutPassword(
  db: Kysely<Schema>,
  tenant: Tenant,
  input: { email: string; name: string | null; emailVerified: boolean },
): Promise<User> {
  const email = input.email.trim();
  if (!isValidEmail(email)) {
    throw validationFailed([
      { path: '/email', code: 'email_invalid', message: 'email is not a valid e-mail address' },
    ]);
  }
  const now = Date.now();
  const row: UserRow = {
    id: randomUUID(),
    tenant_id: tenant.id,
    email,
    email_key: emailKey(email),
    password_hash: null,
    // A provider's name is kept only if it follows our name rules.
    name: input.name && !checkName(input.name) ? input.name.trim() : null,
    metadata: '{}',
    roles: '[]',
    email_verified_at: input.emailVerified ? now : null,
    disabled_at: null,
    created_at: now,
    updated_at: now,
  };
  return insertNewUser(db, row);
}
