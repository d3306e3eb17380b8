import type { Kysely } from 'kysely';
import type { SignInFailurePolicy } from '../../config/defaults.js';
import { isImportedHash, verifyImportedHash } from '../../crypto/imported-hashes/index.js';
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
import { findUserByEmailKey, toUser, type User } from './users.service.js';

export type SignInPolicy = SignInFailurePolicy & {
  /** How a slowed attempt waits (setTimeout); a test records the waits instead. */
  wait?: (ms: number) => Promise<void>;
};

export interface SignInDeps {
  db: Kysely<Schema>;
  hasher: PasswordHasher;
  limiter: RateLimitService;
  policy: SignInPolicy;
  /**
   * Asks for proof: mails the owner of `user` a link that lets `address` (a client address
   * bucket) sign in, and then goes on to `returnTo`. Called when the right password comes
   * from a new address while many addresses fail on the account; it returns at once (the
   * mail goes out after the answer, whose time must not differ from a wrong password's).
   * Absent: nothing is sent.
   */
  confirmAddress?: (tenant: Tenant, user: User, address: string, returnTo: string | null) => void;
}

let dummyHash: Promise<string> | undefined;

function invalidCredentials(): LatchkeyError {
  return new LatchkeyError('invalid_credentials', 'The e-mail address or the password is wrong');
}

/** The same answer whether or not the password was right: it tells an attacker nothing. */
function confirmationRequired(): LatchkeyError {
  return new LatchkeyError(
    'confirmation_required',
    'Many sign-ins on this account failed from elsewhere, so a new address must be confirmed: if the password was right, a link went to the e-mail address of the account; open it, then sign in again',
  );
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const accountKeyOf = (tenantId: string, email: string) => `${tenantId}:${emailKey(email.trim())}`;
const pairKeyOf = (accountKey: string, bucket: string | undefined) =>
  `${accountKey}|${bucket ?? 'unknown'}`;

/**
 * Checks an e-mail and password. An unknown address costs the same argon2 work as a
 * wrong password and gets the same answer.
 *
 * Attempts are counted *before* any work, atomically, so that parallel guesses cannot all
 * slip under a limit (README "Sign-in failures"): per account and client address, per
 * client address, and per account. One address is refused by the first two (429), and
 * adds at most `perAddress` to the account's count, so that it alone can never hold the
 * account's owner out. Past `challengeAfter` on the account (failures from many addresses
 * at once), an address the owner has never signed in from is asked for proof: right
 * password or not, the answer is `confirmation_required`, and when it was right the owner
 * gets a mailed link that lets that address in (`confirmAddress`). A success makes the
 * address known, clears its count on the account (and the account's, unless it is under
 * such an attack) and gives the address its attempt back.
 */
export async function verifyCredentials(
  deps: SignInDeps,
  tenant: Tenant,
  input: { email: string; password: string; ip: string | undefined; returnTo?: string | null },
): Promise<User> {
  const { policy } = deps;
  const w = windowsOf(policy);
  const accountKey = accountKeyOf(tenant.id, input.email);
  const bucket = input.ip === undefined ? undefined : addressBucket(input.ip);
  const pairKey = pairKeyOf(accountKey, bucket);
  const addressKey = bucket === undefined ? undefined : `${tenant.id}:${bucket}`;
  const [pair, address, known] = await Promise.all([
    deps.limiter.consume(pairKey, [w.pair]),
    addressKey === undefined ? undefined : deps.limiter.consume(addressKey, [w.address]),
    bucket === undefined ? false : deps.limiter.peek(pairKey, w.known).then((p) => p.count > 0),
  ]);
  const refused = [pair, address].find((d) => d && !d.allowed);
  if (refused) {
    throw rateLimited(refused, `Too many failed sign-ins; retry after ${refused.retryAfter} s`);
  }
  // Without the client's address every attempt may come from anywhere: each one counts.
  const pairCount = pair.consumed[0] ?? 1;
  const accountCount =
    bucket === undefined || pairCount <= policy.account.perAddress
      ? ((await deps.limiter.consume(accountKey, [w.account])).consumed[0] ?? 1)
      : (await deps.limiter.peek(accountKey, w.account)).count;
  const challenged = !known && accountCount > policy.account.challengeAfter;
  // Slowed by the failures before it: the account's, or this address's own on it.
  const attempts = Math.max(accountCount, pairCount);
  const over = attempts - 1 - policy.account.slowAfter;
  if (over >= 0 && !known)
    await (policy.wait ?? sleepFor)(Math.min((over + 1) * policy.slowStepMs, policy.slowMaxMs));

  const row = await findUserByEmailKey(deps.db, tenant.id, emailKey(input.email.trim()));
  dummyHash ??= deps.hasher.hash('latchkey timing equaliser');
  // docs/design.md §16: a hash brought by `latchkey import` is checked with its own
  // algorithm; an unknown address still costs the tenant's argon2 check, as before.
  const imported =
    row?.password_hash && isImportedHash(row.password_hash) ? row.password_hash : undefined;
  const ok = imported
    ? await verifyImportedHash(imported, input.password)
    : await deps.hasher.verify(row?.password_hash ?? (await dummyHash), input.password);
  if (!row?.password_hash || !ok) {
    // A burst of failures on one account goes to the audit log once, as it starts to slow.
    if (attempts === policy.account.slowAfter) {
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
    throw challenged ? confirmationRequired() : invalidCredentials();
  }
  if (challenged) {
    // The right password from a new address, while the account is under attack: its owner
    // decides. The counts stay; nothing else is told.
    if (bucket !== undefined && row.disabled_at === null)
      deps.confirmAddress?.(tenant, toUser(row), bucket, input.returnTo ?? null);
    throw confirmationRequired();
  }
  await Promise.all([
    // Under attack from many addresses the account's count stays, owner signed in or not.
    accountCount > policy.account.challengeAfter
      ? undefined
      : deps.limiter.reset(accountKey, w.account),
    deps.limiter.reset(pairKey, w.pair),
    addressKey === undefined ? undefined : deps.limiter.reward(addressKey, w.address),
    bucket === undefined ? undefined : deps.limiter.penalty(pairKey, w.known),
  ]);
  if (row.disabled_at !== null) throw new LatchkeyError('forbidden', 'This account is disabled');
  if (tenant.requireEmailVerification && row.email_verified_at === null) {
    throw new LatchkeyError('email_not_verified', 'Verify the e-mail address before signing in');
  }
  const user = toUser(row);
  // Hashed here, outside any transaction (argon2 holds no lock); written by the sign-in's
  // own transaction (upgradePasswordIn).
  if (imported)
    upgrades.set(user, {
      tenantId: tenant.id,
      old: imported,
      fresh: await deps.hasher.hash(input.password),
    });
  return user;
}

/** Imported hashes that a sign-in proved, and the tenant's argon2id that replaces each. */
const upgrades = new WeakMap<User, { tenantId: string; old: string; fresh: string }>();

/**
 * docs/design.md §16: at the first sign-in of an imported user, replaces the imported hash
 * (which `verifyCredentials` just checked) by the tenant's argon2id, in the sign-in's own
 * transaction (`db`). Only if it is still the hash that was checked: a password changed
 * meanwhile stays. Nothing to do for any other user.
 */
export async function upgradePasswordIn(db: Kysely<Schema>, user: User): Promise<void> {
  const upgrade = upgrades.get(user);
  if (!upgrade) return;
  upgrades.delete(user);
  await db
    .updateTable('users')
    .set({ password_hash: upgrade.fresh })
    .where('tenant_id', '=', upgrade.tenantId)
    .where('id', '=', user.id)
    .where('password_hash', '=', upgrade.old)
    .execute();
}

/**
 * Lets `address` (a client address bucket) sign in to the account of `email` as its owner's
 * known addresses do, past an account-wide challenge: its owner confirmed it from the mail.
 * The attempts it made while it waited no longer count against it.
 */
export async function allowAddress(
  deps: Pick<SignInDeps, 'limiter' | 'policy'>,
  tenantId: string,
  email: string,
  address: string,
): Promise<void> {
  const w = windowsOf(deps.policy);
  const pairKey = pairKeyOf(accountKeyOf(tenantId, email), address);
  await Promise.all([deps.limiter.penalty(pairKey, w.known), deps.limiter.reset(pairKey, w.pair)]);
}

function windowsOf(policy: SignInPolicy): Record<'account' | 'pair' | 'address' | 'known', Window> {
  return {
    // Never refuses by itself: its count decides the challenge (the quota is out of reach).
    account: { name: 'sign-in-account', quota: 1_000_000, seconds: policy.windowSeconds },
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
