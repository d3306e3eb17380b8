import type { Kysely } from 'kysely';
import { type Publisher, type Schema, transact } from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import {
  applyUserUpdate,
  getUser,
  type SignInDeps,
  type UpdateUserInput,
  type User,
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
export interface AccountDeps {
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

/** E-mail and password to a new session (REST sign-in). */
export async function signIn(
  deps: AccountDeps & SignInDeps,
  tenant: Tenant,
  input: SignInInput,
): Promise<TokenSet & { user: User }> {
  const user = await verifyCredentials(deps, tenant, input);
  const opened = await transact(deps.db, deps.bus, (tx) =>
    deps.sessions.openIn(tx, tenant, user, {
      channel: 'server',
      amr: ['pwd'],
      ip: input.sessionIp ?? input.ip,
      userAgent: input.userAgent,
    }),
  );
  return { ...(await deps.sessions.tokens(tenant, opened)), user };
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
