import type { Kysely } from 'kysely';
import { LatchkeyError } from '../../errors/index.js';
import { isUuid } from '../../storage/ids.js';
import { prepared, type Schema } from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import { emitEvent } from '../webhooks/index.js';
import { deleteRecoveryCodes } from './recovery-codes.js';

/** The second factors of docs/design.md §13 (the password is the first). */
export type FactorType = 'totp' | 'passkey' | 'recovery_code';

/** A factor as operators and its owner see it: never a secret. */
export interface Factor {
  /** A UUID (an app's or a passkey's); the recovery codes, one factor, are `recovery_code`. */
  id: string;
  type: FactorType;
  name: string;
  confirmed: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  /** Recovery codes only: how many are left unused. */
  remaining?: number;
}

/** The id the recovery codes go by, as one factor. */
const RECOVERY_CODES_ID = 'recovery_code';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * A user's factors: apps first (unconfirmed ones too, marked), then passkeys, then the
 * recovery codes.
 */
export async function listFactors(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
): Promise<Factor[]> {
  const [apps, passkeys, codes] = await Promise.all([
    db
      .selectFrom('totp_factors')
      .select(['id', 'name', 'confirmed_at', 'created_at', 'last_used_at'])
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', userId)
      .orderBy('created_at')
      .execute(),
    db
      .selectFrom('passkeys')
      .select(['id', 'name', 'created_at', 'last_used_at'])
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', userId)
      .orderBy('created_at')
      .execute(),
    db
      .selectFrom('recovery_codes')
      .select(['created_at', 'used_at'])
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', userId)
      .execute(),
  ]);
  const factors: Factor[] = apps.map((a) => ({
    id: a.id,
    type: 'totp',
    name: a.name,
    confirmed: a.confirmed_at !== null,
    createdAt: new Date(a.created_at).toISOString(),
    lastUsedAt: iso(a.last_used_at),
  }));
  for (const k of passkeys)
    factors.push({
      id: k.id,
      type: 'passkey',
      name: k.name,
      confirmed: true,
      createdAt: new Date(k.created_at).toISOString(),
      lastUsedAt: iso(k.last_used_at),
    });
  if (codes.length > 0) {
    const used = codes.map((c) => c.used_at ?? 0);
    factors.push({
      id: RECOVERY_CODES_ID,
      type: 'recovery_code',
      name: 'Recovery codes',
      confirmed: true,
      createdAt: new Date(Math.min(...codes.map((c) => c.created_at))).toISOString(),
      lastUsedAt: Math.max(...used) > 0 ? iso(Math.max(...used)) : null,
      remaining: codes.filter((c) => c.used_at === null).length,
    });
  }
  return factors;
}

/** Which kinds of factor a user holds (not the factors): one statement, compiled once. */
const heldFactors = prepared<
  { tenantId: string; userId: string },
  { totp: unknown; passkey: unknown; codes: unknown }
>((db, value) =>
  db.selectNoFrom((eb) => [
    eb
      .exists(
        eb
          .selectFrom('totp_factors')
          .select(eb.lit(1).as('one'))
          .where('tenant_id', '=', value('tenantId'))
          .where('user_id', '=', value('userId'))
          .where('confirmed_at', 'is not', null),
      )
      .as('totp'),
    eb
      .exists(
        eb
          .selectFrom('passkeys')
          .select(eb.lit(1).as('one'))
          .where('tenant_id', '=', value('tenantId'))
          .where('user_id', '=', value('userId')),
      )
      .as('passkey'),
    eb
      .exists(
        eb
          .selectFrom('recovery_codes')
          .select(eb.lit(1).as('one'))
          .where('tenant_id', '=', value('tenantId'))
          .where('user_id', '=', value('userId'))
          .where('used_at', 'is', null),
      )
      .as('codes'),
  ]),
);

/**
 * The second factors a user holds: a confirmed authenticator app, a passkey, and recovery
 * codes left (offered only beside a factor of their own: they stand in for a lost device).
 * A passkey counts even while the tenant has passkeys off: the switch hides the ceremony,
 * it never drops a user's second factor (such a user finishes with a recovery code, or an
 * operator resets the factor).
 */
async function secondFactorsOf(
  db: Kysely<Schema>,
  tenant: Pick<Tenant, 'id'>,
  userId: string,
): Promise<FactorType[]> {
  // Asked at every sign-in.
  const held = (await heldFactors(db, { tenantId: tenant.id, userId })).rows[0];
  if (!held) throw new Error('no row from a select without from');
  // SQLite answers 0 or 1, PostgreSQL true or false.
  const types: FactorType[] = [];
  if (Number(held.totp)) types.push('totp');
  if (Number(held.passkey)) types.push('passkey');
  if (types.length && Number(held.codes)) types.push('recovery_code');
  return types;
}

/** What comes after a right first factor, under the tenant's policy. */
export type SecondStep =
  /** Signed in now. */
  | { kind: 'none' }
  /** Asked for one of `factors`. */
  | { kind: 'verify'; factors: FactorType[] }
  /** `required` and the user has no factor: set one up before any token. */
  | { kind: 'setup' };

export async function secondStepFor(
  db: Kysely<Schema>,
  tenant: Tenant,
  userId: string,
): Promise<SecondStep> {
  if (tenant.mfaPolicy === 'off') return { kind: 'none' };
  const factors = await secondFactorsOf(db, tenant, userId);
  if (factors.length) return { kind: 'verify', factors };
  return tenant.mfaPolicy === 'required' ? { kind: 'setup' } : { kind: 'none' };
}

/**
 * Removes one factor. A user removing their own last factor under `required` is refused;
 * an operator (`reset`) may, and the user sets a new one up at the next sign-in.
 */
export async function deleteFactor(
  db: Kysely<Schema>,
  tenant: Tenant,
  userId: string,
  factorId: string,
  options: { reset: boolean },
): Promise<Factor> {
  const factors = await listFactors(db, tenant.id, userId);
  const factor = factors.find((f) => f.id === factorId);
  if (!factor || (factor.type !== 'recovery_code' && !isUuid(factorId)))
    throw new LatchkeyError('not_found', 'This user has no such factor');
  const othersLeft = factors.some(
    (f) => f.id !== factorId && f.type !== 'recovery_code' && f.confirmed,
  );
  if (
    !options.reset &&
    tenant.mfaPolicy === 'required' &&
    factor.type !== 'recovery_code' &&
    factor.confirmed &&
    !othersLeft
  )
    throw new LatchkeyError(
      'conflict',
      'This is your last second factor and this service requires one: add another first',
    );
  if (factor.type === 'recovery_code') await deleteRecoveryCodes(db, tenant.id, userId);
  else
    await db
      .deleteFrom(factor.type === 'passkey' ? 'passkeys' : 'totp_factors')
      .where('tenant_id', '=', tenant.id)
      .where('user_id', '=', userId)
      .where('id', '=', factorId)
      .execute();
  await emitEvent(db, tenant.id, 'user.factor_removed', { userId, factor });
  return factor;
}
