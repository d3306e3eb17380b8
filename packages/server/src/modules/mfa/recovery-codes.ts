import { randomBytes, randomUUID } from 'node:crypto';
import { encodeBase32LowerCaseNoPadding } from '@oslojs/encoding';
import type { Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import { sha256Hex } from '../../crypto/hash.js';
import type { Schema } from '../../storage/index.js';
import { emitEvent } from '../webhooks/index.js';

/**
 * Recovery codes (docs/design.md §13): ten single-use codes of 60 random bits
 * (`xxxx-xxxx-xxxx`, base32), shown once and stored as SHA-256 over the user and the code.
 */

/** As people type it: case, spaces and dashes do not matter. */
const canonical = (code: string) => code.toLowerCase().replace(/[\s-]/g, '');

const hashOf = (userId: string, code: string) => sha256Hex(`${userId}:${canonical(code)}`);

const looksLikeRecoveryCode = (code: string) => /^[a-z2-7]{12}$/.test(canonical(code));

/** Replaces a user's recovery codes with ten new ones, returned once. */
export async function replaceRecoveryCodes(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
): Promise<string[]> {
  const codes = Array.from({ length: defaults.mfa.recoveryCodes }, () => {
    const raw = encodeBase32LowerCaseNoPadding(randomBytes(8)).slice(0, 12);
    return `${raw.slice(0, 4)}-${raw.slice(4, 8)}-${raw.slice(8, 12)}`;
  });
  await deleteRecoveryCodes(db, tenantId, userId);
  const now = Date.now();
  await db
    .insertInto('recovery_codes')
    .values(
      codes.map((code) => ({
        id: randomUUID(),
        tenant_id: tenantId,
        user_id: userId,
        hash: hashOf(userId, code),
        created_at: now,
        used_at: null,
      })),
    )
    .execute();
  await emitEvent(db, tenantId, 'user.factor_added', {
    userId,
    factor: {
      id: 'recovery_code',
      type: 'recovery_code',
      name: 'Recovery codes',
      confirmed: true,
      createdAt: new Date(now).toISOString(),
      lastUsedAt: null,
      remaining: codes.length,
    },
  });
  return codes;
}

export async function deleteRecoveryCodes(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
): Promise<number> {
  const result = await db
    .deleteFrom('recovery_codes')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Uses up one recovery code: true when it was the user's and unused (once, even in a race). */
export async function useRecoveryCode(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
  code: string,
): Promise<boolean> {
  if (!looksLikeRecoveryCode(code)) return false;
  const result = await db
    .updateTable('recovery_codes')
    .set({ used_at: Date.now() })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('hash', '=', hashOf(userId, code))
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
