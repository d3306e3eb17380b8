import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import { sha256Hex } from '../../crypto/hash.js';
import { LatchkeyError } from '../../errors/index.js';
import { type Schema, transact } from '../../storage/index.js';
import { accountExistsMail, addressMail, type LinkPurpose, linkMail } from '../email/index.js';
import { addressBucket } from '../rate-limit/index.js';
import { endUserBrowserSessions } from '../sessions/index.js';
import { dropUnprovenIdentities } from '../social/index.js';
import { getTenant, type Tenant } from '../tenants/index.js';
import {
  allowAddress,
  checkPassword,
  findUserByEmail,
  getUser,
  markEmailVerified,
  setPasswordHash,
  type User,
} from '../users/index.js';
import { type HostedDeps, withinLimit } from './deps.js';
import { type HostedRequest, hostedQuery } from './hosted-request.js';

/** Makes a one-time link token (within the caller's transaction); returns the token. */
export async function createEmailToken(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
  purpose: LinkPurpose,
  returnTo: string | null,
  address: string | null = null,
): Promise<string> {
  const value = randomBytes(32).toString('base64url');
  const now = Date.now();
  await db
    .insertInto('email_tokens')
    .values({
      hash: sha256Hex(value),
      tenant_id: tenantId,
      user_id: userId,
      purpose,
      return_to: returnTo,
      address,
      created_at: now,
      expires_at: now + defaults.hosted.linkLifetimeMs[purpose],
      used_at: null,
    })
    .execute();
  return value;
}

/** An unused, unexpired link token of this purpose, or undefined. */
async function peekEmailToken(db: Kysely<Schema>, value: string, purpose: LinkPurpose) {
  const row = await db
    .selectFrom('email_tokens')
    .selectAll()
    .where('hash', '=', sha256Hex(value))
    .executeTakeFirst();
  if (!row || row.purpose !== purpose || row.used_at !== null || row.expires_at <= Date.now())
    return undefined;
  return row;
}

/** Uses a link token once; undefined when unknown, used, expired or of another purpose. */
async function useEmailToken(db: Kysely<Schema>, value: string, purpose: LinkPurpose) {
  const row = await peekEmailToken(db, value, purpose);
  if (!row) return undefined;
  const result = await db
    .updateTable('email_tokens')
    .set({ used_at: Date.now() })
    .where('hash', '=', row.hash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1 ? row : undefined;
}

/** Where a link's page leads afterwards: back to the hosted request it came from. */
export const returnToOf = (h: HostedRequest | undefined) =>
  h ? `/sign-in?${hostedQuery(h)}` : null;

/** Mails the link of a token made by `createEmailToken`. */
export async function mailLink(
  deps: Pick<HostedDeps, 'mailer' | 'authUrl'>,
  tenant: Tenant,
  user: User,
  purpose: Exclude<LinkPurpose, 'address'>,
  token: string,
): Promise<void> {
  const path = purpose === 'verify' ? 'verify-email' : 'reset-password';
  const mail = linkMail(purpose, tenant.name, `${deps.authUrl}/${path}?token=${token}`);
  await deps.mailer.send({ tenantId: tenant.id, to: user.email, ...mail });
}

/**
 * An operator's resend of a verification link or a password-reset link (admin area),
 * within the per-recipient mail limit; the link leads to no application afterwards.
 * Whether it was sent.
 */
export async function sendAccountLink(
  deps: HostedDeps,
  tenant: Tenant,
  user: User,
  purpose: Exclude<LinkPurpose, 'address'>,
): Promise<boolean> {
  if (!(await withinLimit(deps, 'mailPerRecipient', user.id))) return false;
  const token = await createEmailToken(deps.db, tenant.id, user.id, purpose, null);
  await mailLink(deps, tenant, user, purpose, token);
  return true;
}

/** Makes a one-time link and mails it (one write: the token). */
async function sendEmailLink(
  deps: HostedDeps,
  h: HostedRequest,
  user: User,
  purpose: Exclude<LinkPurpose, 'address'>,
): Promise<void> {
  const token = await createEmailToken(deps.db, h.tenant.id, user.id, purpose, returnToOf(h));
  await mailLink(deps, h.tenant, user, purpose, token);
}

/**
 * Tells the owner of an address that someone tried to sign up with it, with a sign-in
 * link and a reset link, within the per-recipient mail limit; a disabled user gets nothing.
 */
export async function mailAccountExists(
  deps: HostedDeps,
  h: HostedRequest,
  email: string,
): Promise<void> {
  const user = await findUserByEmail(deps.db, h.tenant.id, email);
  if (!user || user.disabled || !(await withinLimit(deps, 'mailPerRecipient', user.id))) return;
  const token = await createEmailToken(deps.db, h.tenant.id, user.id, 'reset', returnToOf(h));
  const mail = accountExistsMail(
    h.tenant.name,
    `${deps.authUrl}${returnToOf(h)}`,
    `${deps.authUrl}/reset-password?token=${token}`,
  );
  await deps.mailer.send({ tenantId: h.tenant.id, to: user.email, ...mail });
}

/**
 * A new verification link for an unverified address that tried to sign in, within the
 * mail limits (per client address and per recipient). Whether one was sent.
 */
export async function resendVerification(
  deps: HostedDeps,
  h: HostedRequest,
  email: string,
  ip: string,
): Promise<boolean> {
  const user = await findUserByEmail(deps.db, h.tenant.id, email);
  if (!user) return false;
  const allowed =
    (await withinLimit(deps, 'mail', addressBucket(ip))) &&
    (await withinLimit(deps, 'mailPerRecipient', user.id));
  if (allowed) await sendEmailLink(deps, h, user, 'verify');
  return allowed;
}

/**
 * Asks for a password-reset link. rate_limited past the address's mail limit; otherwise
 * the same outcome whether or not the address has an account: the mail goes out after
 * the answer, so its time (and any SMTP failure, told to `onMailError`) says nothing.
 */
export async function requestPasswordReset(
  deps: HostedDeps,
  h: HostedRequest,
  input: { email: string; ip: string; onMailError: (error: unknown) => void },
): Promise<void> {
  if (!(await withinLimit(deps, 'mail', addressBucket(input.ip))))
    throw new LatchkeyError('rate_limited', 'Too many requests from this address');
  const user = input.email ? await findUserByEmail(deps.db, h.tenant.id, input.email) : undefined;
  if (!user || user.disabled) return;
  void (async () => {
    if (await withinLimit(deps, 'mailPerRecipient', user.id))
      await sendEmailLink(deps, h, user, 'reset');
  })().catch(input.onMailError);
}

/** The tenant and user of a live link (to show the page it leads to); nothing is used. */
export async function openEmailLink(
  deps: Pick<HostedDeps, 'db'>,
  token: string,
  purpose: LinkPurpose,
): Promise<{ tenant: Tenant; user: User; address: string | null } | undefined> {
  const row = token ? await peekEmailToken(deps.db, token, purpose) : undefined;
  if (!row) return undefined;
  const tenant = await getTenant(deps.db, row.tenant_id);
  const user = await getUser(deps.db, row.tenant_id, row.user_id);
  return { tenant, user, address: row.address };
}

/**
 * Asks the owner of `user` to confirm a new address (a client address bucket) that their
 * password came from while many sign-ins on the account fail from elsewhere: a one-time
 * link, within a per-recipient limit of its own (no flood; and requests anyone can make,
 * such as a password reset, cannot use it up).
 */
export async function mailAddressConfirmation(
  deps: Pick<HostedDeps, 'db' | 'mailer' | 'authUrl' | 'limiter'>,
  tenant: Tenant,
  user: User,
  address: string,
  returnTo: string | null,
): Promise<void> {
  if (!(await withinLimit(deps, 'addressMailPerRecipient', user.id))) return;
  const token = await createEmailToken(deps.db, tenant.id, user.id, 'address', returnTo, address);
  const link = `${deps.authUrl}/confirm-address?token=${token}`;
  await deps.mailer.send({
    tenantId: tenant.id,
    to: user.email,
    ...addressMail(tenant.name, address, link),
  });
}

/**
 * The owner's confirmation of a new address, through its link (used once): from now on that
 * address signs in to the account as the owner's known addresses do.
 */
export async function confirmAddress(deps: HostedDeps, token: string): Promise<LinkOutcome> {
  const row = await transact(deps.db, deps.bus, async (tx) =>
    token ? await useEmailToken(tx.db, token, 'address') : undefined,
  );
  if (!row?.address) return { ok: false };
  const user = await getUser(deps.db, row.tenant_id, row.user_id);
  await allowAddress(deps, row.tenant_id, user.email, row.address);
  return { ok: true, tenant: await getTenant(deps.db, row.tenant_id), returnTo: row.return_to };
}

export type LinkOutcome =
  | { ok: true; tenant: Tenant; returnTo: string | null }
  | { ok: false; tenant?: Tenant; problem?: string };

/**
 * Completes a password reset in one transaction: the new password, the link and every
 * other reset link used up, the address proven, unproven identities dropped, and whoever
 * knew the old password signed out everywhere.
 */
export async function completePasswordReset(
  deps: HostedDeps,
  input: { token: string; password: string },
): Promise<LinkOutcome> {
  const peek = input.token ? await peekEmailToken(deps.db, input.token, 'reset') : undefined;
  if (!peek) return { ok: false };
  const tenant = await getTenant(deps.db, peek.tenant_id);
  const problem = checkPassword(input.password)[0] ?? (await deps.breached.check(input.password));
  if (problem) return { ok: false, tenant, problem: problem.message };
  // Hashed before the transaction: argon2 must hold no lock.
  const hash = await deps.hasher.hash(input.password);
  return transact(deps.db, deps.bus, async (tx) => {
    const row = await useEmailToken(tx.db, input.token, 'reset');
    if (!row) return { ok: false, tenant };
    const { tenant_id: tenantId, user_id: userId } = row;
    await setPasswordHash(tx.db, tenantId, userId, hash);
    await deps.sessions.revokeIn(tx, tenantId, { userId }, 'password_reset');
    await endUserBrowserSessions(tx.db, tenantId, userId);
    // Every other reset link dies, and every address link: whoever knew the old password
    // must not be let in by a later click on one.
    await tx.db
      .updateTable('email_tokens')
      .set({ used_at: Date.now() })
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', userId)
      .where('purpose', 'in', ['reset', 'address'])
      .where('used_at', 'is', null)
      .execute();
    await markEmailVerified(tx.db, tenantId, userId);
    await dropUnprovenIdentities(tx.db, tenantId, userId);
    tx.invalidate(`user:${userId}`);
    return { ok: true, tenant, returnTo: row.return_to };
  });
}

/** Verifies an address through its link, in one transaction; unproven identities go. */
export async function verifyEmail(deps: HostedDeps, token: string): Promise<LinkOutcome> {
  return transact(deps.db, deps.bus, async (tx) => {
    const row = token ? await useEmailToken(tx.db, token, 'verify') : undefined;
    if (!row) return { ok: false };
    await markEmailVerified(tx.db, row.tenant_id, row.user_id);
    await dropUnprovenIdentities(tx.db, row.tenant_id, row.user_id);
    tx.invalidate(`user:${row.user_id}`);
    return { ok: true, tenant: await getTenant(tx.db, row.tenant_id), returnTo: row.return_to };
  });
}
