import type { Kysely } from 'kysely';
import Provider, { type Account, type KoaContextWithOIDC } from 'oidc-provider';
import type { Publisher, Schema } from '../../storage/index.js';
import { transact } from '../../storage/index.js';
import { openOAuthSession, revokeSessionsIn } from '../sessions/index.js';
import type { Tenant } from '../tenants/index.js';

/**
 * The Latchkey session (docs/design.md §14) of the token request being served: opened
 * when a code is exchanged, found again through the refresh token's row, and handed on to
 * the next refresh token. Kept per request (node-oidc-provider's Koa context).
 */
const sessions = new WeakMap<object, string>();

/** The Latchkey session of the current request, if one is known yet. */
export const currentSession = (): string | undefined => {
  const ctx = Provider.ctx;
  return ctx ? sessions.get(ctx) : undefined;
};

/** Remembers the Latchkey session of a refresh token the current request presents. */
export const rememberSession = (sessionId: string): void => {
  const ctx = Provider.ctx;
  if (ctx) sessions.set(ctx, sessionId);
};

interface AccountUser {
  id: string;
  email: string;
  name: string | null;
  roles: string;
  email_verified_at: number | null;
  disabled_at: number | null;
}

async function findUserRow(db: Kysely<Schema>, tenantId: string, id: string) {
  return db
    .selectFrom('users')
    .select(['id', 'email', 'name', 'roles', 'email_verified_at', 'disabled_at'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

async function sessionIsLive(db: Kysely<Schema>, tenantId: string, id: string, userId: string) {
  const row = await db
    .selectFrom('sessions')
    .select(['revoked_at', 'expires_at', 'user_id'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return !!row && row.revoked_at === null && row.expires_at > Date.now() && row.user_id === userId;
}

/**
 * node-oidc-provider's `findAccount`: the tenant's user, or undefined for one disabled or
 * deleted (the grant then fails with invalid_grant), and on a refresh also when the
 * Latchkey session of the refresh token has ended (signed out, revoked).
 */
export function accountFinder(db: Kysely<Schema>, tenant: Tenant) {
  return async (_ctx: KoaContextWithOIDC, sub: string): Promise<Account | undefined> => {
    const user = await findUserRow(db, tenant.id, sub);
    if (!user || user.disabled_at !== null) return undefined;
    const sid = currentSession();
    if (sid && !(await sessionIsLive(db, tenant.id, sid, user.id))) return undefined;
    return { accountId: user.id, claims: () => claimsOf(user) };
  };
}

const claimsOf = (user: AccountUser) => ({
  sub: user.id,
  email: user.email,
  email_verified: user.email_verified_at !== null,
  ...(user.name ? { name: user.name } : {}),
});

interface TokenSource {
  amr?: string[] | undefined;
  authTime?: number | undefined;
}

/**
 * node-oidc-provider's `extraTokenClaims`: what docs/design.md §5's access tokens carry
 * besides the standard claims (`tid`; for a user also `sid`, `email`, `roles`, `amr`,
 * `auth_time`), so that introspection and @latchkey/node accept them as they are. The first
 * access token of a code opens the Latchkey session they belong to.
 */
export function tokenClaims(db: Kysely<Schema>, tenant: Tenant) {
  return async (
    ctx: KoaContextWithOIDC,
    token: { accountId?: string | undefined; grantId?: string | undefined; clientId?: string },
  ): Promise<Record<string, unknown>> => {
    if (!token.accountId) return { tid: tenant.id };
    const user = await findUserRow(db, tenant.id, token.accountId);
    if (!user) throw new Error('the account of a token being issued is gone');
    const source = (ctx.oidc.entities.AuthorizationCode ?? ctx.oidc.entities.RefreshToken) as
      | TokenSource
      | undefined;
    const authTime = source?.authTime;
    let sid = sessions.get(ctx);
    if (!sid) {
      sid = await openOAuthSession(db, {
        tenantId: tenant.id,
        userId: user.id,
        grantId: token.grantId ?? '',
        clientId: token.clientId ?? '',
        amr: source?.amr,
        authenticatedAt: (authTime ?? Math.floor(Date.now() / 1_000)) * 1_000,
      });
      sessions.set(ctx, sid);
    }
    return {
      tid: tenant.id,
      sid,
      email: user.email,
      roles: JSON.parse(user.roles) as string[],
      ...(source?.amr ? { amr: source.amr } : {}),
      ...(authTime ? { auth_time: authTime } : {}),
    };
  };
}

/** Ends the Latchkey sessions of a revoked grant (refresh-token or code reuse, revocation). */
export async function endGrantSessions(
  deps: { db: Kysely<Schema>; bus: Publisher },
  tenantId: string,
  grantId: string,
): Promise<void> {
  // An empty filter would end every session of the tenant.
  if (!grantId) return;
  await transact(deps.db, deps.bus, (tx) =>
    revokeSessionsIn(tx, tenantId, { oauthGrantId: grantId }, 'oauth_grant_revoked'),
  );
}
