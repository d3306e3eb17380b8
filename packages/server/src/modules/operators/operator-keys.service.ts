import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { LatchkeyError } from '../../errors/index.js';
import type { OperatorKeyRow, Schema } from '../../storage/index.js';
import { hashKey, randomBase62 } from '../keys/index.js';

/**
 * docs/design.md §21: an operator key manages tenants over REST (/v1/operator/…). It is
 * made by the CLI (someone with the database already), shown once and stored as a SHA-256
 * hash like a tenant's secret key; its own prefix keeps it apart from tenant keys.
 */
export const OPERATOR_KEY_PREFIX = 'lko_';
/** 43 base62 characters: 256 random bits, as tenants' keys. */
const RANDOM_LENGTH = 43;

export interface OperatorKey {
  id: string;
  /** Prefix and last four characters, never the whole key. */
  display: string;
  name: string | null;
  createdAt: string;
  revokedAt: string | null;
}

const toOperatorKey = (row: OperatorKeyRow): OperatorKey => ({
  id: row.id,
  display: `${row.prefix}…${row.last4}`,
  name: row.name,
  createdAt: new Date(row.created_at).toISOString(),
  revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at).toISOString(),
});

/** A new operator key; `plaintext` is the only time it is ever shown. */
export async function createOperatorKey(
  db: Kysely<Schema>,
  name?: string,
): Promise<{ key: OperatorKey; plaintext: string }> {
  const random = randomBase62(RANDOM_LENGTH);
  const plaintext = OPERATOR_KEY_PREFIX + random;
  const row: OperatorKeyRow = {
    id: randomUUID(),
    hash: hashKey(plaintext),
    prefix: OPERATOR_KEY_PREFIX + random.slice(0, 4),
    last4: random.slice(-4),
    name: name?.trim() || null,
    created_at: Date.now(),
    revoked_at: null,
  };
  await db.insertInto('operator_keys').values(row).execute();
  return { key: toOperatorKey(row), plaintext };
}

export async function listOperatorKeys(db: Kysely<Schema>): Promise<OperatorKey[]> {
  const rows = await db
    .selectFrom('operator_keys')
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toOperatorKey);
}

export async function revokeOperatorKey(db: Kysely<Schema>, id: string): Promise<OperatorKey> {
  const row = await db
    .selectFrom('operator_keys')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw new LatchkeyError('not_found', `No operator key with id ${id}`);
  if (row.revoked_at === null) {
    row.revoked_at = Date.now();
    await db
      .updateTable('operator_keys')
      .set({ revoked_at: row.revoked_at })
      .where('id', '=', id)
      .execute();
  }
  return toOperatorKey(row);
}

/**
 * The live operator key presented, or null. Looked up by its hash (an index probe, not a
 * comparison an attacker could time), on every request: revoking takes effect at once.
 */
export async function resolveOperatorKey(
  db: Kysely<Schema>,
  presented: string,
): Promise<OperatorKey | null> {
  if (!presented.startsWith(OPERATOR_KEY_PREFIX)) return null;
  const row = await db
    .selectFrom('operator_keys')
    .selectAll()
    .where('hash', '=', hashKey(presented))
    .executeTakeFirst();
  return row && row.revoked_at === null ? toOperatorKey(row) : null;
}
