import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import { sha256Hex } from '../../crypto/hash.js';
import { LatchkeyError } from '../../errors/index.js';
import { type Schema, type SessionChannel, type Tx, transact } from '../../storage/index.js';
import { recordAudit } from '../audit/index.js';
import type { Window } from '../rate-limit/index.js';
import type { AuthMethod } from '../sessions/index.js';
import type { Tenant } from '../tenants/index.js';
import { getUser, type User } from '../users/index.js';
import type { MfaDeps } from './deps.js';
import { useRecoveryCode } from './recovery-codes.js';
import { claimTotpStep, matchTotp } from './totp.js';

/**
 * A sign-in that waits for its second factor (docs/design.md §13): after the first factor
 * a challenge is written and its token (`mfaToken`, `lkm_…`) handed out; it lives 5
 * minutes, on its tenant only, and is redeemed once with a code of one of the user's
 * authenticator apps or a recovery code. Wrong codes: 5 per challenge (then it ends), and
 * `defaults.mfa.accountFailures` per account over all its challenges; past either, 429.
 */

const failureWindows: Window[] = defaults.mfa.accountFailures.map((w, i) => ({
  name: i === 0 ? 'mfa-account' : 'mfa-account-day',
  quota: w.quota,
  seconds: w.windowSeconds,
}));
const failuresKey = (tenantId: string, userId: string) => `mfa:${tenantId}:${userId}`;

export function invalidMfaToken(): LatchkeyError {
  return new LatchkeyError(
    'invalid_mfa_token',
    'The sign-in has expired or was finished already; sign in again',
  );
}

/** Writes a pending sign-in for `user`, who proved `amr` so far, and returns its token. */
export async function createChallenge(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
  amr: readonly AuthMethod[],
  channel: SessionChannel,
): Promise<string> {
  const token = `lkm_${randomBytes(32).toString('base64url')}`;
  const now = Date.now();
  await db
    .insertInto('mfa_challenges')
    .values({
      hash: sha256Hex(token),
      tenant_id: tenantId,
      user_id: userId,
      amr: JSON.stringify(amr),
      channel,
      attempts: 0,
      created_at: now,
      expires_at: now + defaults.mfa.challengeMs,
      used_at: null,
    })
    .execute();
  return token;
}

/** A live pending sign-in of this tenant: its user and first factors; undefined otherwise. */
export async function pendingChallenge(
  db: Kysely<Schema>,
  tenantId: string,
  token: string,
  channel: SessionChannel,
): Promise<{ userId: string; amr: AuthMethod[] } | undefined> {
  if (!token.startsWith('lkm_') || token.length > 100) return undefined;
  const row = await db
    .selectFrom('mfa_challenges')
    .selectAll()
    .where('hash', '=', sha256Hex(token))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!row || row.channel !== channel || row.used_at !== null || row.expires_at <= Date.now())
    return undefined;
  return { userId: row.user_id, amr: JSON.parse(row.amr) as AuthMethod[] };
}

/**
 * Ends a pending sign-in whose user has just set up their first factor (the `required`
 * policy's setup, docs/design.md §13), within the caller's transaction: its user and first
 * factors, once; undefined when it is unknown, of another tenant or channel, used or expired.
 */
export async function claimChallengeIn(
  db: Kysely<Schema>,
  tenantId: string,
  token: string,
  channel: SessionChannel,
): Promise<{ userId: string; amr: AuthMethod[] } | undefined> {
  const pending = await pendingChallenge(db, tenantId, token, channel);
  if (!pending) return undefined;
  const claimed = await db
    .updateTable('mfa_challenges')
    .set({ used_at: Date.now() })
    .where('hash', '=', sha256Hex(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', Date.now())
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) === 1 ? pending : undefined;
}

/** Ends a pending sign-in unused (the browser went back, or chose another way). */
export async function dropChallenge(db: Kysely<Schema>, token: string): Promise<void> {
  await db
    .updateTable('mfa_challenges')
    .set({ used_at: Date.now() })
    .where('hash', '=', sha256Hex(token))
    .where('used_at', 'is', null)
    .execute();
}

/** What a redeemed challenge proved: `finish` opens the session in the same transaction. */
export type Finish<T> = (tx: Tx, user: User, amr: AuthMethod[]) => Promise<T>;

const WRONG = Symbol('wrong code');

/**
 * Redeems a pending sign-in with a second-factor code. The challenge, the code (an app's
 * time step, or a recovery code) and whatever `finish` writes are claimed in one
 * transaction: a code is never used up without its sign-in, nor a challenge twice.
 */
export async function redeemChallenge<T>(
  deps: MfaDeps,
  tenant: Tenant,
  input: { token: string; code: string; channel: SessionChannel },
  finish: Finish<T>,
): Promise<T> {
  const pending = await pendingChallenge(deps.db, tenant.id, input.token, input.channel);
  if (!pending) throw invalidMfaToken();
  // Each attempt is counted before any work, atomically, so that parallel guesses cannot
  // all slip under a limit: on the account first, then on the challenge (at most 5, even
  // at once). A right code gives the account its attempt back.
  const accountKey = failuresKey(tenant.id, pending.userId);
  const account = await deps.limiter.consume(accountKey, failureWindows);
  if (!account.allowed) {
    // Written once per window, as the account reaches it: an operator sees the guessing.
    if (failureWindows.some((w, i) => account.consumed[i] === w.quota + 1))
      await recordAudit(deps.db, {
        tenantId: tenant.id,
        userId: pending.userId,
        kind: 'second_factor_failures',
        detail: { failures: account.consumed },
      });
    throw new LatchkeyError(
      'rate_limited',
      `Too many wrong codes on this account; retry after ${account.retryAfter} s`,
      { headers: { 'retry-after': String(account.retryAfter) } },
    );
  }
  const hash = sha256Hex(input.token);
  const { attemptsPerChallenge } = defaults.mfa;
  const counted = await deps.db
    .updateTable('mfa_challenges')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('hash', '=', hash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', Date.now())
    .where('attempts', '<', attemptsPerChallenge)
    .returning('attempts')
    .executeTakeFirst();
  if (!counted) throw invalidMfaToken();
  const totp = await matchTotp(deps, tenant.id, pending.userId, input.code);
  try {
    const done = await transact(deps.db, deps.bus, async (tx) => {
      const claimed = await tx.db
        .updateTable('mfa_challenges')
        .set({ used_at: Date.now() })
        .where('hash', '=', hash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', Date.now())
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1) throw invalidMfaToken();
      const ok = totp
        ? await claimTotpStep(tx.db, totp)
        : await useRecoveryCode(tx.db, tenant.id, pending.userId, input.code);
      if (!ok) throw WRONG;
      const user = await getUser(tx.db, tenant.id, pending.userId);
      if (user.disabled) throw new LatchkeyError('forbidden', 'This account is disabled');
      return finish(tx, user, [...pending.amr, 'otp', 'mfa']);
    });
    await Promise.all(failureWindows.map((w) => deps.limiter.reward(accountKey, w)));
    return done;
  } catch (error) {
    if (error !== WRONG) throw error;
  }
  if (counted.attempts >= attemptsPerChallenge) {
    await dropChallenge(deps.db, input.token);
    throw new LatchkeyError('rate_limited', 'Too many wrong codes; sign in again');
  }
  throw new LatchkeyError('invalid_code', 'The code is wrong or was used already');
}
