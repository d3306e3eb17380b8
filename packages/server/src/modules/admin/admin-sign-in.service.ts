import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import { sha256Hex } from '../../crypto/hash.js';
import { LatchkeyError } from '../../errors/index.js';
import type { Schema } from '../../storage/index.js';
import { recordAudit } from '../audit/index.js';
import { addressBucket, type RateLimitService, type Window } from '../rate-limit/index.js';
import { emailKey, type PasswordHasher, type SignInPolicy } from '../users/index.js';
import { type Admin, findAdminRow, toAdmin } from './accounts.service.js';

export interface AdminSignInDeps {
  db: Kysely<Schema>;
  hasher: PasswordHasher;
  limiter: RateLimitService;
  /** The same failed sign-in policy as users' (defaults.signInFailures). */
  policy: SignInPolicy;
}

/** A signed-in admin and when they last typed their password. */
export interface AdminSession {
  admin: Admin;
  /** SHA-256 of the cookie, the session's id. */
  hash: string;
  authenticatedAt: number;
}

let dummyHash: Promise<string> | undefined;

/**
 * Checks an admin's password with the throttling of users' sign-in (README "Sign-in
 * failures"), counted before any work: one address is refused on one account past
 * `accountAddress` and on all past `address`, and adds at most `perAddress` to the
 * account's count, so that it alone cannot lock the admin out. Past `challengeAfter` on the
 * account (many addresses at once) it is refused (admins have no mailed proof); slowed past
 * `slowAfter`. The burst is written to the audit log once.
 */
export async function checkAdminPassword(
  deps: AdminSignInDeps,
  input: { email: string; password: string; ip: string },
) {
  const { policy } = deps;
  const window = (name: string, quota: number): Window => ({
    name,
    quota,
    seconds: policy.windowSeconds,
  });
  const account = window('admin-sign-in-account', policy.account.challengeAfter);
  const pair = window('admin-sign-in-account-address', policy.accountAddress.refuseAfter);
  const address = window('admin-sign-in-address', policy.address.refuseAfter);
  const accountKey = `admin:${emailKey(input.email.trim())}`;
  const bucket = addressBucket(input.ip);
  const pairKey = `${accountKey}|${bucket}`;
  const addressKey = `admin:${bucket}`;
  const [byPair, byAddress] = await Promise.all([
    deps.limiter.consume(pairKey, [pair]),
    deps.limiter.consume(addressKey, [address]),
  ]);
  const fromHere = byPair.consumed[0] ?? 1;
  // Past its share an address adds nothing to the account's count, but is held to it.
  const onAccount =
    fromHere <= policy.account.perAddress
      ? await deps.limiter.consume(accountKey, [account])
      : await deps.limiter.peek(accountKey, account).then((p) => ({
          allowed: p.count <= account.quota,
          retryAfter: p.retryAfter,
          consumed: [p.count],
        }));
  const refused = [byPair, byAddress, onAccount].find((d) => !d.allowed);
  if (refused)
    throw new LatchkeyError(
      'rate_limited',
      `Too many failed sign-ins; retry after ${refused.retryAfter} s`,
    );
  const count = Math.max(fromHere, onAccount.consumed[0] ?? 1);
  const over = count - 1 - policy.account.slowAfter;
  if (over >= 0) {
    const ms = Math.min((over + 1) * policy.slowStepMs, policy.slowMaxMs);
    await (policy.wait ?? ((wait) => new Promise((resolve) => setTimeout(resolve, wait))))(ms);
  }
  const row = await findAdminRow(deps.db, input.email);
  dummyHash ??= deps.hasher.hash('latchkey timing equaliser');
  const ok = await deps.hasher.verify(row?.password_hash ?? (await dummyHash), input.password);
  if (!row || !ok) {
    if (count === policy.account.slowAfter) {
      await recordAudit(deps.db, {
        tenantId: null,
        kind: 'admin_sign_in_failures',
        detail: { email: input.email.trim(), ip: input.ip, failures: count },
      });
    }
    throw new LatchkeyError('invalid_credentials', 'The e-mail address or the password is wrong');
  }
  await Promise.all([
    deps.limiter.reset(accountKey, account),
    deps.limiter.reset(pairKey, pair),
    deps.limiter.reward(addressKey, address),
  ]);
  return row;
}

/** Signs an admin in: returns the cookie value (only its hash is stored). */
export async function signInAdmin(
  deps: AdminSignInDeps,
  input: { email: string; password: string; ip: string },
): Promise<{ cookie: string; admin: Admin }> {
  const row = await checkAdminPassword(deps, input);
  const cookie = randomBytes(32).toString('base64url');
  const now = Date.now();
  await deps.db
    .insertInto('admin_sessions')
    .values({
      hash: sha256Hex(cookie),
      admin_id: row.id,
      created_at: now,
      authenticated_at: now,
      last_seen_at: now,
      expires_at: now + defaults.admin.sessionMs,
      ip: input.ip,
    })
    .execute();
  // Sessions that ended long ago are dropped now and then (here: at each sign-in).
  await deps.db.deleteFrom('admin_sessions').where('expires_at', '<', now).execute();
  return { cookie, admin: await toAdmin(deps.db, row) };
}

/** The live session of a cookie, or undefined (unknown, expired, or idle too long). */
export async function adminSession(
  db: Kysely<Schema>,
  cookie: string | undefined,
): Promise<AdminSession | undefined> {
  if (!cookie) return undefined;
  const hash = sha256Hex(cookie);
  const found = await db
    .selectFrom('admin_sessions')
    .innerJoin('admins', 'admins.id', 'admin_sessions.admin_id')
    .selectAll('admins')
    .select([
      'admin_sessions.authenticated_at as authenticated_at',
      'admin_sessions.last_seen_at as last_seen_at',
      'admin_sessions.expires_at as expires_at',
    ])
    .where('admin_sessions.hash', '=', hash)
    .executeTakeFirst();
  const now = Date.now();
  if (!found || found.expires_at <= now || found.last_seen_at + defaults.admin.idleMs <= now)
    return undefined;
  // One write a minute at most: activity keeps the session from idling out.
  if (now - found.last_seen_at > 60_000) {
    await db
      .updateTable('admin_sessions')
      .set({ last_seen_at: now })
      .where('hash', '=', hash)
      .execute();
  }
  const { authenticated_at, last_seen_at: _seen, expires_at: _expires, ...row } = found;
  return { admin: await toAdmin(db, row), hash, authenticatedAt: authenticated_at };
}

export async function signOutAdmin(db: Kysely<Schema>, cookie: string | undefined): Promise<void> {
  if (cookie) await db.deleteFrom('admin_sessions').where('hash', '=', sha256Hex(cookie)).execute();
}

/** Whether a sensitive step (a new secret key, a provider secret) must ask for the password. */
export const needsReauth = (session: AdminSession, now = Date.now()) =>
  now - session.authenticatedAt > defaults.admin.reauthAfterMs;

/** The password typed again: checked (throttled like sign-in) and the session refreshed. */
export async function reauthenticate(
  deps: AdminSignInDeps,
  session: AdminSession,
  password: string,
  ip: string,
): Promise<void> {
  await checkAdminPassword(deps, { email: session.admin.email, password, ip });
  const now = Date.now();
  await deps.db
    .updateTable('admin_sessions')
    .set({ authenticated_at: now })
    .where('hash', '=', session.hash)
    .execute();
  session.authenticatedAt = now;
}
