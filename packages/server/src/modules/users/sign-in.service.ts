import type { Kysely } from 'kysely';
import type { SignInFailurePolicy } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import type { Schema } from '../../storage/index.js';
import { recordAudit } from '../audit/index.js';
import {
  addressBucket,
  type RateLimitService,
  rateLimited,
  type Window,
} from '../rate-limit/index.js';
import type { Tenant } from '../tenants/index.js';
import { emailKey } from './email.js';
import type { PasswordHasher } from './password.js';
import { toUser, type User } from './users.admin.js';
import { findUserByEmailKey } from './users.repository.js';

export type SignInPolicy = SignInFailurePolicy & {
  /** How a slowed attempt waits (setTimeout); a test records the waits instead. */
  wait?: (ms: number) => Promise<void>;
};

export interface SignInDeps {
  db: Kysely<Schema>;
  hasher: PasswordHasher;
  limiter: RateLimitService;
  policy: SignInPolicy;
}

let dummyHash: Promise<string> | undefined;

function invalidCredentials(): LatchkeyError {
  return new LatchkeyError('invalid_credentials', 'The e-mail address or the password is wrong');
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Checks an e-mail and password. An unknown address costs the same argon2 work as a
 * wrong password and gets the same answer.
 *
 * Attempts are counted *before* any work, atomically, so that parallel guesses cannot all
 * slip under a limit (README "Sign-in failures"): per account, per account and client
 * address, and per client address. Past a threshold an account's attempts are slowed and
 * then refused, except from the addresses its owner has signed in from: failures others
 * pile on an account never lock its owner out of it. A success clears the account's counts
 * and gives the address its attempt back.
 */
export async function verifyCredentials(
  deps: SignInDeps,
  tenant: Tenant,
  input: { email: string; password: string; ip: string | undefined },
): Promise<User> {
  const { policy } = deps;
  const w = windowsOf(policy);
  const key = emailKey(input.email.trim());
  const accountKey = `${tenant.id}:${key}`;
  const bucket = input.ip === undefined ? undefined : addressBucket(input.ip);
  const pairKey = `${accountKey}|${bucket ?? 'unknown'}`;
  const addressKey = bucket === undefined ? undefined : `${tenant.id}:${bucket}`;
  const [account, pair, address, known] = await Promise.all([
    deps.limiter.consume(accountKey, [w.account]),
    deps.limiter.consume(pairKey, [w.pair]),
    addressKey === undefined ? undefined : deps.limiter.consume(addressKey, [w.address]),
    bucket === undefined ? false : deps.limiter.peek(pairKey, w.known).then((p) => p.count > 0),
  ]);
  const refused = [pair, address, known ? undefined : account].find((d) => d && !d.allowed);
  if (refused) {
    throw rateLimited(refused, `Too many failed sign-ins; retry after ${refused.retryAfter} s`);
  }
  const earlier = (account.consumed[0] ?? 1) - 1;
  const over = earlier - policy.account.slowAfter;
  if (over >= 0 && !known)
    await (policy.wait ?? sleepFor)(Math.min((over + 1) * policy.slowStepMs, policy.slowMaxMs));

  const row = await findUserByEmailKey(deps.db, tenant.id, key);
  dummyHash ??= deps.hasher.hash('latchkey timing equaliser');
  const ok = await deps.hasher.verify(row?.password_hash ?? (await dummyHash), input.password);
  if (!row?.password_hash || !ok) {
    // A burst of failures on one account goes to the audit log once, as it starts to slow.
    if (account.consumed[0] === policy.account.slowAfter) {
      await recordAudit(deps.db, {
        tenantId: tenant.id,
        userId: row?.id,
        kind: 'sign_in_failures',
        detail: {
          email: input.email.trim(),
          ip: input.ip ?? null,
          failures: policy.account.slowAfter,
        },
      });
    }
    throw invalidCredentials();
  }
  await Promise.all([
    deps.limiter.reset(accountKey, w.account),
    deps.limiter.reset(pairKey, w.pair),
    addressKey === undefined ? undefined : deps.limiter.reward(addressKey, w.address),
    bucket === undefined ? undefined : deps.limiter.penalty(pairKey, w.known),
  ]);
  if (row.disabled_at !== null) throw new LatchkeyError('forbidden', 'This account is disabled');
  if (tenant.requireEmailVerification && row.email_verified_at === null) {
    throw new LatchkeyError('email_not_verified', 'Verify the e-mail address before signing in');
  }
  return toUser(row);
}

function windowsOf(policy: SignInPolicy): Record<'account' | 'pair' | 'address' | 'known', Window> {
  return {
    account: {
      name: 'sign-in-account',
      quota: policy.account.refuseAfter,
      seconds: policy.windowSeconds,
    },
    pair: {
      name: 'sign-in-account-address',
      quota: policy.accountAddress.refuseAfter,
      seconds: policy.windowSeconds,
    },
    address: {
      name: 'sign-in-address',
      quota: policy.address.refuseAfter,
      seconds: policy.windowSeconds,
    },
    // A marker, not a limit: the quota is never reached.
    known: { name: 'sign-in-known', quota: 1_000_000, seconds: policy.knownAddressSeconds },
  };
}
