import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { decodeBase32IgnorePadding, encodeBase32UpperCaseNoPadding } from '@oslojs/encoding';
import { createTOTPKeyURI, generateHOTP } from '@oslojs/otp';
import type { Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import type { SealedStore, SecretBox } from '../../crypto/secret-box.js';
import { LatchkeyError } from '../../errors/index.js';
import { isUuid } from '../../storage/ids.js';
import type { Schema } from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import type { User } from '../users/index.js';
import { emitEvent } from '../webhooks/index.js';

/**
 * Authenticator apps (RFC 6238 TOTP: HMAC-SHA-1, 6 digits, 30 s steps), with @oslojs/otp's
 * HOTP (RFC 4226) for each step. The shared secret is sealed with the master secret; a
 * code counts once: the step it matched is kept, and only a later step is accepted after it.
 */

const PURPOSE = 'totp-secret';
const subjectOf = (tenantId: string, factorId: string) => `${tenantId}/${factorId}`;

/** Every tenant's authenticator-app secrets, for master-secret checks and rotation. */
export const sealedTotpSecrets: SealedStore = {
  what: 'authenticator-app secrets',
  async list(db) {
    const rows = await db
      .selectFrom('totp_factors')
      .select(['id', 'tenant_id', 'secret_jwe'])
      .execute();
    return rows.map((r) => ({
      id: r.id,
      jwe: r.secret_jwe,
      purpose: PURPOSE,
      subject: subjectOf(r.tenant_id, r.id),
    }));
  },
  async replace(db, id, jwe) {
    await db.updateTable('totp_factors').set({ secret_jwe: jwe }).where('id', '=', id).execute();
  },
};

/** A new authenticator app: the secret and its otpauth URI are shown once, for enrolment. */
export interface TotpEnrolment {
  id: string;
  type: 'totp';
  confirmed: false;
  /** Base32 (RFC 4648), for typing into the app by hand. */
  secret: string;
  /** The `otpauth://totp/…` URI that the QR code holds. */
  otpauthUri: string;
}

/** A code as people type it: spaces are dropped. */
const normaliseCode = (code: string) => code.replace(/[\s-]/g, '');

const isTotpCode = (code: string) => new RegExp(`^\\d{${defaults.mfa.totp.digits}}$`).test(code);

/**
 * Starts an authenticator app for a user: the secret is written sealed and unconfirmed
 * (it is no factor until a first code confirms it). An earlier unconfirmed one is replaced.
 */
export async function startTotp(
  deps: { db: Kysely<Schema>; box: SecretBox },
  tenant: Tenant,
  user: User,
): Promise<TotpEnrolment> {
  const { totp, maxTotpFactors } = defaults.mfa;
  await deps.db
    .deleteFrom('totp_factors')
    .where('tenant_id', '=', tenant.id)
    .where('user_id', '=', user.id)
    .where('confirmed_at', 'is', null)
    .execute();
  const confirmed = await deps.db
    .selectFrom('totp_factors')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenant.id)
    .where('user_id', '=', user.id)
    .executeTakeFirstOrThrow();
  if (Number(confirmed.n) >= maxTotpFactors)
    throw new LatchkeyError(
      'conflict',
      `A user may have at most ${maxTotpFactors} authenticator apps; remove one first`,
    );
  const key = randomBytes(totp.secretBytes);
  const id = randomUUID();
  const now = Date.now();
  await deps.db
    .insertInto('totp_factors')
    .values({
      id,
      tenant_id: tenant.id,
      user_id: user.id,
      secret_jwe: await deps.box.seal(
        encodeBase32UpperCaseNoPadding(key),
        PURPOSE,
        subjectOf(tenant.id, id),
      ),
      name: 'Authenticator app',
      confirmed_at: null,
      last_step: null,
      created_at: now,
      last_used_at: null,
    })
    .execute();
  return {
    id,
    type: 'totp',
    confirmed: false,
    secret: encodeBase32UpperCaseNoPadding(key),
    otpauthUri: createTOTPKeyURI(tenant.name, user.email, key, totp.periodSeconds, totp.digits),
  };
}

/**
 * An app still being set up, shown again (its first code was wrong, or the page was
 * reloaded); undefined once it is confirmed or replaced.
 */
export async function resumeTotp(
  deps: { db: Kysely<Schema>; box: SecretBox },
  tenant: Tenant,
  user: User,
  factorId: string,
): Promise<TotpEnrolment | undefined> {
  if (!isUuid(factorId)) return undefined;
  const row = await deps.db
    .selectFrom('totp_factors')
    .select(['id', 'tenant_id', 'secret_jwe'])
    .where('tenant_id', '=', tenant.id)
    .where('user_id', '=', user.id)
    .where('id', '=', factorId)
    .where('confirmed_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const key = await keyOf(deps.box, row);
  const { periodSeconds, digits } = defaults.mfa.totp;
  return {
    id: row.id,
    type: 'totp',
    confirmed: false,
    secret: encodeBase32UpperCaseNoPadding(key),
    otpauthUri: createTOTPKeyURI(tenant.name, user.email, key, periodSeconds, digits),
  };
}

/** The step a code matches (now, or one step either side), later than `after`; or undefined. */
function matchingStep(key: Uint8Array, code: string, after: number | null): number | undefined {
  const { periodSeconds, digits, driftSteps } = defaults.mfa.totp;
  const now = Math.floor(Date.now() / 1000 / periodSeconds);
  const given = Buffer.from(code);
  for (let d = -driftSteps; d <= driftSteps; d++) {
    const step = now + d;
    if (after !== null && step <= after) continue;
    const expected = Buffer.from(generateHOTP(key, BigInt(step), digits));
    if (expected.length === given.length && timingSafeEqual(expected, given)) return step;
  }
  return undefined;
}

async function keyOf(box: SecretBox, row: { id: string; tenant_id: string; secret_jwe: string }) {
  const secret = await box.open(row.secret_jwe, PURPOSE, subjectOf(row.tenant_id, row.id));
  return decodeBase32IgnorePadding(secret);
}

/** A code matched to one of a user's apps: claimed only by `claimTotpStep`. */
export interface TotpMatch {
  factorId: string;
  step: number;
}

/**
 * Finds the user's confirmed app (or, with `factorId`, that one app, confirmed or not)
 * whose code this is, at a step not used before. Nothing is written.
 */
export async function matchTotp(
  deps: { db: Kysely<Schema>; box: SecretBox },
  tenantId: string,
  userId: string,
  code: string,
  factorId?: string,
): Promise<TotpMatch | undefined> {
  const typed = normaliseCode(code);
  if (!isTotpCode(typed)) return undefined;
  let query = deps.db
    .selectFrom('totp_factors')
    .select(['id', 'tenant_id', 'secret_jwe', 'last_step'])
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId);
  query =
    factorId === undefined
      ? query.where('confirmed_at', 'is not', null)
      : query.where('id', '=', isUuid(factorId) ? factorId : '');
  for (const row of await query.execute()) {
    const step = matchingStep(await keyOf(deps.box, row), typed, row.last_step);
    if (step !== undefined) return { factorId: row.id, step };
  }
  return undefined;
}

/**
 * Uses up a matched code: true when this call moved the app's last step forward (a code
 * sent twice at once is accepted once). Confirms an unconfirmed app, and then records its
 * `user.factor_added` event (docs/design.md §17) on the same handle.
 */
export async function claimTotpStep(db: Kysely<Schema>, match: TotpMatch): Promise<boolean> {
  const now = Date.now();
  const claimed = await db
    .updateTable('totp_factors')
    .set((eb) => ({
      last_step: match.step,
      last_used_at: now,
      confirmed_at: eb.fn.coalesce('confirmed_at', eb.val(now)),
    }))
    .where('id', '=', match.factorId)
    .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', match.step)]))
    .returning(['id', 'tenant_id', 'user_id', 'name', 'created_at', 'confirmed_at'])
    .executeTakeFirst();
  if (!claimed) return false;
  // Confirmed by this very claim: its time is now's (an app confirmed before has an older one).
  if (Number(claimed.confirmed_at) === now)
    await emitEvent(db, claimed.tenant_id, 'user.factor_added', {
      userId: claimed.user_id,
      factor: {
        id: claimed.id,
        type: 'totp',
        name: claimed.name,
        confirmed: true,
        createdAt: new Date(claimed.created_at).toISOString(),
        lastUsedAt: new Date(now).toISOString(),
      },
    });
  return true;
}
