import type { Kysely } from 'kysely';
import type { SignInFailurePolicy } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import type { Schema } from '../../storage/index.js';
import type { RateLimitService, Window } from '../rate-limit/index.js';
import type { Tenant } from '../tenants/index.js';
import { emailKey } from './email.js';
import type { PasswordHasher } from './password.js';
import { toUser, type User } from './users.admin.js';
import { findUserByEmailKey } from './users.repository.js';

export type SignInPolicy = SignInFailurePolicy;

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
 * wrong password and gets the same answer. Failures are counted per account and per
 * client address (docs: README "Sign-in failures"): past a threshold each attempt is
 * slowed, and past a higher one refused with 429 until the window ends.
 */
export async function verifyCredentials(
  deps: SignInDeps,
  tenant: Tenant,
  input: { email: string; password: string; ip: string },
): Promise<User> {
  const { policy } = deps;
  const accountWindow: Window = {
    name: 'sign-in-account',
    quota: policy.account.refuseAfter,
    seconds: policy.windowSeconds,
  };
  const addressWindow: Window = {
    name: 'sign-in-address',
    quota: policy.address.refuseAfter,
    seconds: policy.windowSeconds,
  };
  const key = emailKey(input.email.trim());
  const accountKey = `${tenant.id}:${key}`;
  const addressKey = `${tenant.id}:${input.ip}`;
  const [account, address] = await Promise.all([
    deps.limiter.peek(accountKey, accountWindow),
    deps.limiter.peek(addressKey, addressWindow),
  ]);
  const refused = [account, address].filter((c) => c.count >= c.window.quota);
  if (refused.length) {
    const retryAfter = Math.max(...refused.map((c) => c.retryAfter));
    throw new LatchkeyError(
      'rate_limited',
      `Too many failed sign-ins; retry after ${retryAfter} s`,
      {
        headers: { 'retry-after': String(retryAfter) },
      },
    );
  }
  const over = account.count - policy.account.slowAfter;
  if (over >= 0) await sleepFor(Math.min((over + 1) * policy.slowStepMs, policy.slowMaxMs));

  const row = await findUserByEmailKey(deps.db, tenant.id, key);
  dummyHash ??= deps.hasher.hash('latchkey timing equaliser');
  const ok = await deps.hasher.verify(row?.password_hash ?? (await dummyHash), input.password);
  if (!row?.password_hash || !ok) {
    await Promise.all([
      deps.limiter.penalty(accountKey, accountWindow),
      deps.limiter.penalty(addressKey, addressWindow),
    ]);
    throw invalidCredentials();
  }
  await deps.limiter.reset(accountKey, accountWindow);
  if (row.disabled_at !== null) throw new LatchkeyError('forbidden', 'This account is disabled');
  if (tenant.requireEmailVerification && row.email_verified_at === null) {
    throw new LatchkeyError('email_not_verified', 'Verify the e-mail address before signing in');
  }
  return toUser(row);
}
