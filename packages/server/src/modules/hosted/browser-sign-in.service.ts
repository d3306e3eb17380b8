import { randomBytes } from 'node:crypto';
import { defaults } from '../../config/defaults.js';
import { sha256Base64url, sha256Hex } from '../../crypto/hash.js';
import { LatchkeyError } from '../../errors/index.js';
import { type Tx, transact, type UserRow } from '../../storage/index.js';
import { createChallenge, secondStepFor } from '../mfa/index.js';
import { addressBucket } from '../rate-limit/index.js';
import {
  type AuthMethod,
  bindBrowserSession,
  browserSessionBinding,
  endBrowserSession,
  type OpenedSession,
  startBrowserSession,
  type TokenSet,
} from '../sessions/index.js';
import { type Profile, type ProviderId, retryingRace, userForProfileIn } from '../social/index.js';
import type { Tenant } from '../tenants/index.js';
import {
  insertNewUser,
  preparePasswordUser,
  type User,
  upgradePasswordIn,
  verifyCredentials,
} from '../users/index.js';
import type { HostedDeps } from './deps.js';
import { withinLimit } from './deps.js';
import {
  createEmailToken,
  mailAccountExists,
  mailLink,
  resendVerification,
  returnToOf,
} from './email-links.service.js';
import type { HostedRequest } from './hosted-request.js';

/** Where the browser goes next, and the hosted page's new cookie value. */
export interface BrowserSignIn {
  location: string;
  cookie: string;
}

export interface BrowserMeta {
  ip: string;
  /** The browser's User-Agent, kept with the session it opens (the admin area shows it). */
  userAgent?: string | undefined;
  /** The browser's current hosted-session cookie, ended when a new one starts. */
  previousCookie: string | undefined;
  /**
   * A returning browser, whose live cookie is `previousCookie`: it keeps its cookie and
   * resumes the API session it opened, so that visits write nothing new.
   */
  returning?: boolean;
}

/**
 * A right first factor whose second step is due (docs/design.md §13): no session, no
 * cookie, no code yet; the browser keeps `challenge` and goes to `/sign-in/verify`
 * (a code of its factors) or `/sign-in/setup` (the `required` policy, no factor yet).
 */
export interface SecondStepDue {
  next: 'verify' | 'setup';
  challenge: string;
}

/** What a first factor leads to: signed in, or a second step. */
export type BrowserOutcome = BrowserSignIn | SecondStepDue;

export interface OpenedBrowser {
  /** Undefined for an OpenID Provider's sign-in: the app's tokens come from its own grant. */
  opened: OpenedSession | undefined;
  cookie: string;
  code: string | undefined;
}

/** The writes of a browser sign-in, within the caller's transaction. */
export async function openBrowserIn(
  deps: HostedDeps,
  tx: Tx,
  h: HostedRequest,
  user: User,
  meta: BrowserMeta,
  amr: readonly AuthMethod[] | undefined,
): Promise<OpenedBrowser> {
  if (h.interaction !== undefined)
    return {
      opened: undefined,
      cookie: await interactionSessionIn(tx, h, user, meta, amr),
      code: undefined,
    };
  const { opened, cookie } = await browserSessionIn(deps, tx, h, user, meta, amr);
  if (h.codeChallenge === undefined) return { opened, cookie, code: undefined };
  const code = randomBytes(32).toString('base64url');
  const now = Date.now();
  await tx.db
    .insertInto('auth_codes')
    .values({
      hash: sha256Hex(code),
      tenant_id: h.tenant.id,
      session_id: opened.sessionId,
      code_challenge: h.codeChallenge,
      redirect_origin: h.redirectUrl.origin,
      created_at: now,
      expires_at: now + defaults.hosted.codeLifetimeMs,
      used_at: null,
    })
    .execute();
  return { opened, cookie, code };
}

/**
 * The hosted session of an OpenID Provider's sign-in (docs/design.md §14): the proof the
 * interaction route hands to the provider. No API session: the app's tokens come from the
 * code it exchanges. A returning browser keeps its cookie; a new sign-in ends the old one.
 */
async function interactionSessionIn(
  tx: Tx,
  h: HostedRequest,
  user: User,
  meta: BrowserMeta,
  amr: readonly AuthMethod[] | undefined,
): Promise<string> {
  if (meta.returning && meta.previousCookie) return meta.previousCookie;
  if (meta.previousCookie) await endBrowserSession(tx.db, meta.previousCookie);
  return startBrowserSession(tx.db, h.tenant.id, user.id, null, amr);
}

/** The hosted session and its API session: resumed for a returning browser, else new. */
async function browserSessionIn(
  deps: HostedDeps,
  tx: Tx,
  h: HostedRequest,
  user: User,
  meta: BrowserMeta,
  amr: readonly AuthMethod[] | undefined,
): Promise<{ opened: OpenedSession; cookie: string }> {
  const open = (authenticatedAt?: number, methods = amr) =>
    deps.sessions.openIn(tx, h.tenant, user, {
      channel: 'browser',
      ip: meta.ip,
      userAgent: meta.userAgent,
      amr: methods,
      authenticatedAt,
    });
  const current = meta.returning ? meta.previousCookie : undefined;
  if (current) {
    const bound = await browserSessionBinding(tx.db, h.tenant.id, current);
    const resumed = bound?.sessionId
      ? await deps.sessions.resumeIn(tx, h.tenant, bound.sessionId)
      : undefined;
    if (resumed && resumed.user.id === user.id) return { opened: resumed, cookie: current };
    // A new API session on the hosted session's proof: the person authenticated when it
    // started, as it says (older hosted sessions kept no `amr`: none).
    const opened = await open(bound?.startedAt, bound?.amr as AuthMethod[] | undefined);
    await bindBrowserSession(tx.db, current, opened.sessionId);
    return { opened, cookie: current };
  }
  if (meta.previousCookie) await endBrowserSession(tx.db, meta.previousCookie);
  const opened = await open();
  return {
    opened,
    cookie: await startBrowserSession(tx.db, h.tenant.id, user.id, opened.sessionId, amr),
  };
}

/**
 * After a first factor (`amr`), within the caller's transaction: the browser signed in, or,
 * when the tenant's policy and the user's factors ask for a second step, a pending sign-in
 * (channel `browser`) and nothing else.
 */
async function afterFirstFactorIn(
  deps: HostedDeps,
  tx: Tx,
  h: HostedRequest,
  user: User,
  meta: BrowserMeta,
  amr: readonly AuthMethod[],
): Promise<OpenedBrowser | SecondStepDue> {
  const step = await secondStepFor(tx.db, h.tenant, user.id);
  if (step.kind === 'none') return openBrowserIn(deps, tx, h, user, meta, amr);
  const challenge = await createChallenge(tx.db, h.tenant.id, user.id, amr, 'browser');
  return { next: step.kind, challenge };
}

/** After the commit: where a first factor leads. */
const outcomeOf = (
  deps: HostedDeps,
  h: HostedRequest,
  done: OpenedBrowser | SecondStepDue,
): Promise<BrowserOutcome> | SecondStepDue => ('next' in done ? done : redirectFor(deps, h, done));

/** After the commit: the access token, in the fragment (never the query). */
export async function redirectFor(
  deps: HostedDeps,
  h: HostedRequest,
  { opened, cookie, code }: OpenedBrowser,
): Promise<BrowserSignIn> {
  // An OpenID Provider's sign-in goes back to its interaction, which answers the app.
  if (!opened) return { location: h.redirectUrl.href, cookie };
  const fragment = new URLSearchParams({
    access_token: await deps.sessions.accessToken(h.tenant, opened),
    token_type: 'Bearer',
    expires_in: String(h.tenant.accessTokenTtl),
    tenant_id: h.tenant.id,
  });
  if (h.state !== undefined) fragment.set('state', h.state);
  if (code !== undefined) fragment.set('code', code);
  return { location: `${h.redirectUrl.href}#${fragment.toString()}`, cookie };
}

/**
 * Signs a browser in, in one transaction: a returning one (`meta.returning`: its live
 * hosted session is the proof, made by a sign-in that passed every factor) resumes its API
 * session, one that proved both factors at once (a passkey) gets new ones; and the PKCE
 * code when the caller asked for one. A first factor alone goes through
 * `afterFirstFactorIn` instead.
 */
export async function signInBrowser(
  deps: HostedDeps,
  h: HostedRequest,
  user: User,
  meta: BrowserMeta,
  /** Undefined: a returning browser's session keeps its own `amr`. */
  amr: readonly AuthMethod[] | undefined,
): Promise<BrowserSignIn> {
  const opened = await transact(deps.db, deps.bus, (tx) =>
    openBrowserIn(deps, tx, h, user, meta, amr),
  );
  return redirectFor(deps, h, opened);
}

/**
 * Social sign-in after the provider vouched for `profile`: the user and identity found or
 * made (the linking policy of `userForProfileIn`) and the browser signed in, in one
 * transaction, so that no user is left without the sign-in that made them. When a second
 * step is due, the same transaction writes its pending sign-in instead of the session.
 */
export async function signInWithProvider(
  deps: HostedDeps,
  h: HostedRequest,
  provider: ProviderId,
  profile: Profile,
  meta: BrowserMeta,
): Promise<BrowserOutcome> {
  const done = await retryingRace(() =>
    transact(deps.db, deps.bus, async (tx) => {
      const user = await userForProfileIn(tx, h.tenant, provider, profile);
      return afterFirstFactorIn(deps, tx, h, user, meta, ['fed']);
    }),
  );
  return outcomeOf(deps, h, done);
}

/** A right password for an address not yet verified: no sign-in, maybe a new link. */
export interface Unverified {
  unverified: true;
  /** Whether a new verification link went out (within the mail limits). */
  resent: boolean;
}

/**
 * The hosted sign-in form: e-mail and password, then the browser signed in or its second
 * step. An unverified address gets a new verification link instead (`resendVerification`).
 */
export async function signInWithPassword(
  deps: HostedDeps,
  h: HostedRequest,
  input: { email: string; password: string } & BrowserMeta,
): Promise<BrowserOutcome | Unverified> {
  let user: User;
  try {
    user = await verifyCredentials(deps, h.tenant, { ...input, returnTo: returnToOf(h) });
  } catch (error) {
    if (!(error instanceof LatchkeyError && error.code === 'email_not_verified')) throw error;
    return { unverified: true, resent: await resendVerification(deps, h, input.email, input.ip) };
  }
  const done = await transact(deps.db, deps.bus, async (tx) => {
    await upgradePasswordIn(tx.db, user);
    return afterFirstFactorIn(deps, tx, h, user, input, ['pwd']);
  });
  return outcomeOf(deps, h, done);
}

/**
 * Signed in at once (or, under the `required` policy, on to set up a second factor), or
 * told to look in the mailbox of `mailedTo`.
 */
export type BrowserSignUp =
  | { signedIn: BrowserOutcome; mailedTo?: undefined }
  | { signedIn: undefined; mailedTo: string };

/**
 * The hosted sign-up form, within the per-address sign-up limit (rate_limited past it).
 * A tenant that needs a verified address gets the user and a mailed link; otherwise the
 * browser is signed in, the user and sessions written in one transaction.
 *
 * An address that has an account already gets the answer a new one gets on a tenant that
 * verifies addresses ("check your inbox", after the same argon2 work), and its owner a
 * mail (OWASP Authentication Cheat Sheet, "account enumeration"): the page never tells
 * who has an account. (Where a new account signs in at once, that difference remains.)
 */
export async function signUpInBrowser(
  deps: HostedDeps,
  h: HostedRequest,
  input: { email: string; password: string } & BrowserMeta,
): Promise<BrowserSignUp> {
  if (!(await withinLimit(deps, 'signUp', addressBucket(input.ip))))
    throw new LatchkeyError('rate_limited', 'Too many sign-ups from this address');
  const email = input.email.trim();
  const taken = async (error: unknown, hashed: boolean) => {
    if (!(error instanceof LatchkeyError && error.code === 'email_taken')) throw error;
    if (!hashed) await deps.hasher.hash(input.password);
    await mailAccountExists(deps, h, email);
    return { signedIn: undefined, mailedTo: email };
  };
  let row: UserRow;
  try {
    row = await preparePasswordUser(deps, h.tenant, input);
  } catch (error) {
    return taken(error, false);
  }
  const verify = h.tenant.requireEmailVerification;
  // The user and what follows (a link, or the sessions) are written together; a sign-up
  // of the same address that won the race makes this one a duplicate like any other.
  const done = await transact(deps.db, deps.bus, async (tx) => {
    const user = await insertNewUser(tx.db, row);
    if (verify) {
      const token = await createEmailToken(tx.db, h.tenant.id, user.id, 'verify', returnToOf(h));
      return { user, token, browser: undefined };
    }
    return {
      user,
      token: undefined,
      browser: await afterFirstFactorIn(deps, tx, h, user, input, ['pwd']),
    };
  }).catch((error: unknown) => taken(error, true));
  if (!('user' in done)) return done;
  if (done.browser) return { signedIn: await outcomeOf(deps, h, done.browser) };
  await mailLink(deps, h.tenant, done.user, 'verify', done.token as string);
  return { signedIn: undefined, mailedTo: done.user.email };
}

/**
 * RFC 7636 section 4.6: the code works once, within its lifetime, for the verifier whose
 * S256 hash was sent, from the origin it was issued to.
 */
export async function redeemCode(
  deps: HostedDeps,
  tenant: Tenant,
  input: { code: string; codeVerifier: string; origin: string | undefined },
): Promise<TokenSet | undefined> {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(input.codeVerifier)) return undefined;
  const hash = sha256Hex(input.code);
  const row = await deps.db
    .selectFrom('auth_codes')
    .selectAll()
    .where('hash', '=', hash)
    .where('tenant_id', '=', tenant.id)
    .executeTakeFirst();
  if (!row) return undefined;
  // Only the browser page the code was sent to may redeem it (its Origin is sent by browsers).
  if (input.origin !== row.redirect_origin) return undefined;
  // Checked before the code is claimed, so that a wrong guess cannot burn it for its owner.
  const challenge = sha256Base64url(input.codeVerifier);
  if (challenge !== row.code_challenge || row.expires_at <= Date.now()) return undefined;
  const signer = await deps.sessions.signer(tenant);
  // Signed before the commit: a code is never used up without its tokens being handed out.
  return transact(deps.db, deps.bus, async (tx) => {
    const claimed = await tx.db
      .updateTable('auth_codes')
      .set({ used_at: Date.now() })
      .where('hash', '=', hash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) {
      // RFC 6749 section 4.1.2: a code used twice revokes what it gave.
      await deps.sessions.revokeIn(tx, tenant.id, { sessionId: row.session_id }, 'code_reused');
      return undefined;
    }
    const opened = await deps.sessions.continueIn(tx, tenant, row.session_id);
    return opened && deps.sessions.tokens(tenant, opened, signer);
  });
}
