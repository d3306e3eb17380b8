import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import { transact } from '../../storage/index.js';
import { recordAudit } from '../audit/index.js';
import {
  claimTotpStep,
  deleteFactor,
  type Factor,
  listFactors,
  matchTotp,
  replaceRecoveryCodes,
  resumeTotp,
  startTotp,
  type TotpEnrolment,
} from '../mfa/index.js';
import { endUserBrowserSessions } from '../sessions/index.js';
import type { Tenant } from '../tenants/index.js';
import {
  checkPassword,
  setPasswordHash,
  type User,
  userHasPassword,
  verifyCredentials,
} from '../users/index.js';
import type { HostedDeps } from './deps.js';

/**
 * What the owner of an account changes on `/account` (docs/design.md §13): authenticator
 * apps, recovery codes and the password. Each change needs a sign-in on this browser within
 * `defaults.mfa.stepUpMs` (a returning browser keeps its hosted session's start, so visits
 * do not count) and writes an audit entry in its transaction.
 */

/**
 * The account's browser: its user, when its hosted session (its last sign-in) began, its
 * cookie value and the API session it is bound to.
 */
export interface AccountHolder {
  user: User;
  signedInAt: number;
  cookie: string;
  sessionId: string | undefined;
}

/** reauthentication_required unless the sign-in is recent enough to change factors. */
function stepUp(holder: AccountHolder, what: string): void {
  if (Date.now() - holder.signedInAt <= defaults.mfa.stepUpMs) return;
  throw new LatchkeyError(
    'reauthentication_required',
    `To ${what}, sign in again: your last sign-in on this browser was over ${defaults.mfa.stepUpMs / 60_000} minutes ago.`,
  );
}

const wrongCode = () =>
  new LatchkeyError('invalid_code', 'That code is wrong. Enter the code the app shows now.');

/** The account's apps and recovery codes (never a secret), and whether it has a password. */
export async function accountFactors(
  deps: HostedDeps,
  tenant: Tenant,
  user: User,
): Promise<{ factors: Factor[]; hasPassword: boolean }> {
  const [factors, hasPassword] = await Promise.all([
    listFactors(deps.db, tenant.id, user.id),
    userHasPassword(deps.db, tenant.id, user.id),
  ]);
  return { factors, hasPassword };
}

/** A new authenticator app to set up (or, `factorId`, the one being set up, again). */
export async function startAccountApp(
  deps: HostedDeps,
  tenant: Tenant,
  holder: AccountHolder,
  factorId?: string,
): Promise<TotpEnrolment> {
  stepUp(holder, 'add an authenticator app');
  const again = factorId && (await resumeTotp(deps, tenant, holder.user, factorId));
  return again || startTotp(deps, tenant, holder.user);
}

/**
 * Confirms an app with its first code. An account without recovery codes gets its ten now
 * (returned once), so that a lost phone never locks its owner out.
 */
export async function confirmAccountApp(
  deps: HostedDeps,
  tenant: Tenant,
  holder: AccountHolder,
  input: { factorId: string; code: string },
): Promise<{ codes: string[] | undefined }> {
  stepUp(holder, 'add an authenticator app');
  const { user } = holder;
  const match = await matchTotp(deps, tenant.id, user.id, input.code, input.factorId);
  if (!match) throw wrongCode();
  return transact(deps.db, deps.bus, async (tx) => {
    if (!(await claimTotpStep(tx.db, match))) throw wrongCode();
    const audit = { tenantId: tenant.id, userId: user.id };
    await recordAudit(tx.db, {
      ...audit,
      kind: 'factor_added',
      detail: { type: 'totp', factorId: match.factorId, at: 'account' },
    });
    const factors = await listFactors(tx.db, tenant.id, user.id);
    if (factors.some((f) => f.type === 'recovery_code' && (f.remaining ?? 0) > 0))
      return { codes: undefined };
    const codes = await replaceRecoveryCodes(tx.db, tenant.id, user.id);
    await recordAudit(tx.db, {
      ...audit,
      kind: 'recovery_codes_replaced',
      detail: { at: 'account' },
    });
    return { codes };
  });
}

/** Removes an app (or the recovery codes); the last factor under `required` is refused. */
export async function removeAccountFactor(
  deps: HostedDeps,
  tenant: Tenant,
  holder: AccountHolder,
  factorId: string,
): Promise<Factor> {
  stepUp(holder, 'remove a second factor');
  return transact(deps.db, deps.bus, async (tx) => {
    const removed = await deleteFactor(tx.db, tenant, holder.user.id, factorId, { reset: false });
    await recordAudit(tx.db, {
      tenantId: tenant.id,
      userId: holder.user.id,
      kind: 'factor_removed',
      detail: { type: removed.type, factorId: removed.id, at: 'account' },
    });
    return removed;
  });
}

/** Ten new recovery codes, returned once; the old ones stop working. */
export async function replaceAccountRecoveryCodes(
  deps: HostedDeps,
  tenant: Tenant,
  holder: AccountHolder,
): Promise<string[]> {
  stepUp(holder, 'make new recovery codes');
  const { factors } = await accountFactors(deps, tenant, holder.user);
  if (!factors.some((f) => (f.type === 'totp' && f.confirmed) || f.type === 'passkey'))
    throw new LatchkeyError(
      'conflict',
      'Set up an authenticator app or a passkey first: recovery codes stand in for it.',
    );
  return transact(deps.db, deps.bus, async (tx) => {
    const codes = await replaceRecoveryCodes(tx.db, tenant.id, holder.user.id);
    await recordAudit(tx.db, {
      tenantId: tenant.id,
      userId: holder.user.id,
      kind: 'recovery_codes_replaced',
      detail: { at: 'account' },
    });
    return codes;
  });
}

/**
 * Changes the password: the current one (checked under the failed sign-in policy, so it
 * cannot be guessed here faster than at /sign-in), and a new one under the sign-up rules
 * and the breached-password check. Every other session of the user ends with it (API
 * sessions and hosted-page browsers; OWASP Session Management: someone may have known the
 * old one), all but this browser's.
 */
export async function changeAccountPassword(
  deps: HostedDeps,
  tenant: Tenant,
  holder: AccountHolder,
  input: { current: string; password: string; confirm: string; ip: string },
): Promise<void> {
  stepUp(holder, 'change your password');
  const field = (path: string, code: string, message: string) =>
    new LatchkeyError('validation_failed', message, { errors: [{ path, code, message }] });
  if (input.password !== input.confirm)
    throw field('/confirm', 'password_mismatch', 'The two new passwords are not the same.');
  const problem = checkPassword(input.password)[0] ?? (await deps.breached.check(input.password));
  if (problem) throw field('/password', problem.code, problem.message);
  try {
    await verifyCredentials(deps, tenant, {
      email: holder.user.email,
      password: input.current,
      ip: input.ip,
    });
  } catch (error) {
    if (error instanceof LatchkeyError && error.code === 'invalid_credentials')
      throw field('/current', 'password_wrong', 'Your current password is wrong.');
    throw error;
  }
  // Hashed before the transaction: argon2 must hold no lock.
  const hash = await deps.hasher.hash(input.password);
  await transact(deps.db, deps.bus, async (tx) => {
    await setPasswordHash(tx.db, tenant.id, holder.user.id, hash);
    const userId = holder.user.id;
    await deps.sessions.revokeIn(
      tx,
      tenant.id,
      { userId, exceptSessionId: holder.sessionId },
      'password_changed',
    );
    await endUserBrowserSessions(tx.db, tenant.id, userId, holder.cookie);
    await recordAudit(tx.db, {
      tenantId: tenant.id,
      userId: holder.user.id,
      kind: 'password_changed',
      detail: { at: 'account' },
    });
    tx.invalidate(`user:${holder.user.id}`);
  });
}
