import { LatchkeyError } from '../../errors/index.js';
import { transact } from '../../storage/index.js';
import { recordAudit } from '../audit/index.js';
import {
  claimChallengeIn,
  claimTotpStep,
  type FactorType,
  invalidMfaToken,
  matchTotp,
  pendingChallenge,
  type RelyingParty,
  redeemChallenge,
  replaceRecoveryCodes,
  resumeTotp,
  secondStepFor,
  startTotp,
  type TotpEnrolment,
  verifyPasskeySignIn,
} from '../mfa/index.js';
import { browserSessionBinding, browserSessionUser } from '../sessions/index.js';
import type { Tenant } from '../tenants/index.js';
import { getUser, type User } from '../users/index.js';
import {
  type BrowserMeta,
  type BrowserSignIn,
  openBrowserIn,
  redirectFor,
} from './browser-sign-in.service.js';
import type { HostedDeps } from './deps.js';
import type { HostedRequest } from './hosted-request.js';

/**
 * The second step of a hosted sign-in (docs/design.md §13): the browser holds the token of
 * a pending sign-in (channel `browser`) made after its first factor, and finishes it with a
 * code of its authenticator app or a recovery code (`/sign-in/verify`), or, under the
 * `required` policy with no factor yet, by setting an app up (`/sign-in/setup`). The
 * session, the hosted cookie and any PKCE code are written only when the factor is proven.
 */

/** What a live pending sign-in waits for; undefined when it is gone or waits for nothing now. */
export async function pendingSecondStep(
  deps: HostedDeps,
  h: HostedRequest,
  token: string | undefined,
): Promise<
  { user: User; next: 'verify'; factors: FactorType[] } | { user: User; next: 'setup' } | undefined
> {
  const pending = token
    ? await pendingChallenge(deps.db, h.tenant.id, token, 'browser')
    : undefined;
  if (!pending) return undefined;
  const user = await getUser(deps.db, h.tenant.id, pending.userId);
  if (user.disabled) return undefined;
  // Read again: an operator may have reset the factors, or the policy changed, meanwhile.
  const step = await secondStepFor(deps.db, h.tenant, user.id);
  if (step.kind === 'none') return undefined;
  return step.kind === 'verify'
    ? { user, next: 'verify', factors: step.factors }
    : { user, next: 'setup' };
}

/**
 * The user of a browser's live hosted session, who may go straight back; undefined when
 * there is none, or when its sign-in does not meet what the user's sign-in asks for now:
 * the tenant requires a factor the user has not set up (the browser signs in again and is
 * walked through setup), or the user has a second factor and that sign-in did not use two
 * (a factor added since, or a policy turned on since: a cookie taken with the password
 * alone brings nothing back).
 */
export async function returningUserOf(
  deps: Pick<HostedDeps, 'db'>,
  tenant: Tenant,
  cookie: string | undefined,
): Promise<User | undefined> {
  const user = cookie ? await browserSessionUser(deps.db, tenant.id, cookie) : undefined;
  if (!cookie || !user) return undefined;
  const step = await secondStepFor(deps.db, tenant, user.id);
  if (step.kind === 'setup') return undefined;
  if (step.kind === 'verify') {
    const bound = await browserSessionBinding(deps.db, tenant.id, cookie);
    if (!bound?.amr?.includes('mfa')) return undefined;
  }
  return user;
}

/** Finishes a pending sign-in with a code: the browser signed in with `amr` `[…, otp, mfa]`. */
export async function verifyInBrowser(
  deps: HostedDeps,
  h: HostedRequest,
  input: { token: string; code: string } & BrowserMeta,
): Promise<BrowserSignIn> {
  const opened = await redeemChallenge(
    deps,
    h.tenant,
    { token: input.token, code: input.code, channel: 'browser' },
    (tx, user, amr) => openBrowserIn(deps, tx, h, user, { ...input, returning: false }, amr),
  );
  return redirectFor(deps, h, opened);
}

/**
 * Finishes a pending sign-in with a passkey of the same user: the browser signed in with
 * the first factor's `amr` and the passkey's (`[pwd, hwk, user, mfa]`). The assertion is
 * checked (and its WebAuthn challenge used up) before the pending sign-in is claimed; a
 * passkey of another account finishes nothing.
 */
export async function verifyPasskeyInBrowser(
  deps: HostedDeps,
  h: HostedRequest,
  rp: RelyingParty,
  input: { token: string; response: unknown } & BrowserMeta,
): Promise<BrowserSignIn> {
  const pending = await pendingSecondStep(deps, h, input.token);
  if (pending?.next !== 'verify' || !pending.factors.includes('passkey')) throw invalidMfaToken();
  const proof = await verifyPasskeySignIn(deps.db, rp, h.tenant, input.response);
  if (proof.user.id !== pending.user.id)
    throw new LatchkeyError(
      'forbidden',
      'This passkey belongs to another account. Use a passkey of the account you are signing in to.',
    );
  const opened = await transact(deps.db, deps.bus, async (tx) => {
    const claimed = await claimChallengeIn(tx.db, h.tenant.id, input.token, 'browser');
    if (!claimed) throw invalidMfaToken();
    const amr = [...new Set([...claimed.amr, ...proof.amr])];
    return openBrowserIn(deps, tx, h, proof.user, { ...input, returning: false }, amr);
  });
  return redirectFor(deps, h, opened);
}

/**
 * The authenticator app a pending sign-in that must set one up is setting up: `factorId`
 * again (after a wrong first code), or a new one.
 */
export async function startSetupInBrowser(
  deps: HostedDeps,
  h: HostedRequest,
  token: string | undefined,
  factorId?: string,
): Promise<TotpEnrolment | undefined> {
  const pending = await pendingSecondStep(deps, h, token);
  if (pending?.next !== 'setup') return undefined;
  const again = factorId && (await resumeTotp(deps, h.tenant, pending.user, factorId));
  return again || startTotp(deps, h.tenant, pending.user);
}

const wrongCode = () => new LatchkeyError('invalid_code', 'The code is wrong or was used already');

/**
 * Confirms the app a pending sign-in set up with its first code, and finishes the sign-in
 * in one transaction: the pending sign-in claimed, the app confirmed, ten recovery codes
 * made (returned once) and the browser's hosted session opened with `amr` `[…, otp, mfa]`.
 * The PKCE code and tokens come after, when the user has kept the codes and goes on (the
 * returning-browser path); nothing before the app is confirmed.
 */
export async function confirmSetupInBrowser(
  deps: HostedDeps,
  h: HostedRequest,
  input: { token: string; factorId: string; code: string } & BrowserMeta,
): Promise<{ codes: string[]; cookie: string }> {
  const pending = await pendingSecondStep(deps, h, input.token);
  if (pending?.next !== 'setup') throw invalidMfaToken();
  const { user } = pending;
  const match = await matchTotp(deps, h.tenant.id, user.id, input.code, input.factorId);
  if (!match) throw wrongCode();
  return transact(deps.db, deps.bus, async (tx) => {
    // Still no factor (a parallel setup may have finished): else this is no setup.
    const step = await secondStepFor(tx.db, h.tenant, user.id);
    const claimed = await claimChallengeIn(tx.db, h.tenant.id, input.token, 'browser');
    if (step.kind !== 'setup' || !claimed) throw invalidMfaToken();
    if (!(await claimTotpStep(tx.db, match))) throw wrongCode();
    const codes = await replaceRecoveryCodes(tx.db, h.tenant.id, user.id);
    const audit = { tenantId: h.tenant.id, userId: user.id };
    await recordAudit(tx.db, {
      ...audit,
      kind: 'factor_added',
      detail: { type: 'totp', factorId: match.factorId, at: 'sign-in' },
    });
    await recordAudit(tx.db, {
      ...audit,
      kind: 'recovery_codes_replaced',
      detail: { at: 'sign-in' },
    });
    const amr = [...claimed.amr, 'otp', 'mfa'] as const;
    // No PKCE code yet: it lives minutes, and the user reads the recovery codes first.
    const opened = await openBrowserIn(
      deps,
      tx,
      { ...h, codeChallenge: undefined },
      user,
      { ...input, returning: false },
      amr,
    );
    return { codes, cookie: opened.cookie };
  });
}
