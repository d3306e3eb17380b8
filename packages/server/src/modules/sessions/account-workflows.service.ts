import type { Kysely } from 'kysely';
import { LatchkeyError } from '../../errors/index.js';
import { type Publisher, type Schema, transact } from '../../storage/index.js';
import { createChallenge, type MfaDeps, redeemChallenge, secondStepFor } from '../mfa/index.js';
import type { Tenant } from '../tenants/index.js';
import {
  applyUserUpdate,
  getUser,
  type SignInDeps,
  type UpdateUserInput,
  type User,
  upgradePasswordIn,
  verifyCredentials,
} from '../users/index.js';
import { endUserBrowserSessions } from './browser-sessions.js';
import type { TokenSet } from './session-issuing.js';
import type { Sessions } from './sessions.service.js';

/**
 * The workflows that change a user and their sessions together. Each checks what it
 * can before its transaction (argon2 and rate limits hold no lock), writes in one
 * transaction, and publishes its invalidations after the commit.
 */
export interface AccountDeps extends MfaDeps {
  db: Kysely<Schema>;
  bus: Publisher;
  sessions: Sessions;
}

export interface SignInInput {
  email: string;
  password: string;
  /** The end user's address when known: failures are counted per address too. */
  ip: string | undefined;
  /** Recorded on the session. */
  sessionIp?: string | undefined;
  userAgent?: string | undefined;
}

/**
 * E-mail and password to a new session (REST sign-in). A user with a second factor gets
 * no session yet but `403 mfa_required` with an `mfaToken` to redeem at `verifySignIn`;
 * under the `required` policy a user without one gets `403 mfa_setup_required`, and no
 * token either way (docs/design.md §13).
 */
export async function signIn(
  deps: AccountDeps & SignInDeps,
  tenant: Tenant,
  input: SignInInput,
): Promise<TokenSet & { user: User }> {
  const user = await verifyCredentials(deps, tenant, input);
  const step = await secondStepFor(deps.db, tenant, user.id);
  // A second step still to come: the password was right all the same (docs/design.md §16).
  if (step.kind !== 'none') await upgradePasswordIn(deps.db, user);
  if (step.kind === 'verify') {
    const mfaToken = await createChallenge(deps.db, tenant.id, user.id, ['pwd'], 'server');
    throw new LatchkeyError(
      'mfa_required',
      step.factors.some((f) => f !== 'passkey')
        ? 'This account has a second factor: send one of its codes with the mfaToken to POST /v1/auth/sign-in/verify within 5 minutes'
        : "This account's second factor is a passkey, which the hosted sign-in page checks: sign this user in there",
      { members: { mfaToken, factors: step.factors } },
    );
  }
  if (step.kind === 'setup')
    throw new LatchkeyError(
      'mfa_setup_required',
      `This tenant requires a second factor and the user has none: enrol one with POST /v1/users/${user.id}/factors and confirm it, then sign in again`,
      { members: { userId: user.id } },
    );
  const opened = await transact(deps.db, deps.bus, async (tx) => {
    await upgradePasswordIn(tx.db, user);
    return deps.sessions.openIn(tx, tenant, user, {
      channel: 'server',
      amr: ['pwd'],
      ip: input.sessionIp ?? input.ip,
      userAgent: input.userAgent,
    });
  });
  return { ...(await deps.sessions.tokens(tenant, opened)), user };
}

/** The second step of a REST sign-in: the `mfaToken` and a code to a new session. */
export async function verifySignIn(
  deps: AccountDeps,
  tenant: Tenant,
  input: {
    mfaToken: string;
    code: string;
    ip?: string | undefined;
    userAgent?: string | undefined;
  },
): Promise<TokenSet & { user: User }> {
  const signer = await deps.sessions.signer(tenant);
  return redeemChallenge(
    deps,
    tenant,
    { token: input.mfaToken, code: input.code, channel: 'server' },
    async (tx, user, amr) => {
      const opened = await deps.sessions.openIn(tx, tenant, user, {
        channel: 'server',
        amr,
        ip: input.ip,
        userAgent: input.userAgent,
      });
      return { ...(await deps.sessions.tokens(tenant, opened, signer)), user };
    },
  );
}

/**
 * Name, metadata, roles, disabled. Disabling also revokes every session of the user and
 * ends their hosted-page sign-ins, so that enabling them again revives no old cookie.
 */
export async function updateUser(
  deps: AccountDeps,
  tenantId: string,
  userId: string,
  input: UpdateUserInput,
): Promise<User> {
  return transact(deps.db, deps.bus, async (tx) => {
    const { user, disabledNow } = await applyUserUpdate(tx.db, tenantId, userId, input);
    if (disabledNow) {
      await deps.sessions.revokeIn(tx, tenantId, { userId }, 'user_disabled');
      await endUserBrowserSessions(tx.db, tenantId, userId);
    }
    tx.invalidate(`user:${userId}`);
    return user;
  });
}

/** Sign out everywhere: every API session and every hosted-page browser session. */
export async function signOutEverywhere(
  deps: AccountDeps,
  tenantId: string,
  userId: string,
): Promise<void> {
  await transact(deps.db, deps.bus, async (tx) => {
    await getUser(tx.db, tenantId, userId);
    await deps.sessions.revokeIn(tx, tenantId, { userId }, 'revoked');
    await endUserBrowserSessions(tx.db, tenantId, userId);
  });
}
