import type { Kysely } from 'kysely';
import type { InvalidationBus } from '../../cache/invalidation.js';
import { defaults } from '../../config/defaults.js';
import { sha256Hex } from '../../crypto/hash.js';
import { LatchkeyError } from '../../errors/index.js';
import { type Schema, type SessionChannel, transact } from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import { getUser, type User } from '../users/index.js';
import {
  authenticationOf,
  newRefreshToken,
  type SessionIssuer,
  type TokenSet,
} from './session-issuing.js';
import { revokeSessionsIn } from './session-records.js';
import { findSessionState } from './session-state.js';

export interface RotationDeps {
  db: Kysely<Schema>;
  bus: InvalidationBus;
  issuer: SessionIssuer;
  /** Grace period for a rotated refresh token (defaults.ts: refreshReuseIntervalMs). */
  refreshReuseIntervalMs?: number | undefined;
}

function invalidGrant(detail: string): LatchkeyError {
  return new LatchkeyError('invalid_grant', detail);
}

/** What a client does with its refresh token: trade it for a new pair, or sign out. */
export class RefreshRotation {
  readonly #deps: RotationDeps;

  constructor(deps: RotationDeps) {
    this.#deps = deps;
  }

  /**
   * Rotates a refresh token (RFC 9700 section 4.14.2): each one works once; presenting a
   * used one again means it was copied, so the whole session is revoked. Within the reuse
   * interval after its rotation a token gets a new pair instead (two tabs at once). A token
   * works only on the channel it was issued to (a server's token is no browser's).
   */
  async refresh(
    tenant: Tenant,
    refreshToken: string,
    channel: SessionChannel,
  ): Promise<TokenSet & { user: User }> {
    const { issuer } = this.#deps;
    const hash = sha256Hex(refreshToken);
    const signer = await issuer.signer(tenant);
    // A refusal is returned, not thrown, so that the reuse revocation commits.
    const outcome = await transact(this.#deps.db, this.#deps.bus, async (tx) => {
      const found = await findRefreshToken(tx.db, tenant.id, hash);
      if (!found) return 'The refresh token is not valid';
      // Refused before it is claimed: presenting it on the wrong channel burns nothing.
      if (found.channel !== channel) return 'The refresh token was not issued to this client';
      const now = Date.now();
      const claimed = found.used_at === null && (await markRefreshTokenUsed(tx.db, hash, now));
      // Not claimed: used before, or by a request that won the race just now. Within the
      // reuse interval (two tabs refreshing at once) it still gets a pair; after it, a
      // replay means the token was copied.
      const usedAt = found.used_at ?? now;
      const reuse = this.#deps.refreshReuseIntervalMs ?? defaults.refreshReuseIntervalMs;
      if (!claimed && now - usedAt > reuse) {
        await revokeSessionsIn(
          tx,
          tenant.id,
          { sessionId: found.session_id },
          'refresh_token_reused',
        );
        return 'The refresh token was already used; the session has been revoked';
      }
      // Read again after claiming the token: a revocation may have landed in between.
      const current = await findSessionState(tx.db, tenant.id, found.session_id);
      if (found.revoked_at !== null || !current || current.revoked_at !== null)
        return 'The session has been revoked';
      if (found.session_expires_at <= now || found.expires_at <= now)
        return 'The session has expired';
      if (found.disabled_at !== null || current.disabled_at !== null) return 'The user is disabled';
      const user = await getUser(tx.db, tenant.id, found.user_id);
      if (now - found.last_used_at >= defaults.sessions.touchIntervalMs)
        await touchSession(tx.db, found.session_id, now);
      const next = await newRefreshToken(
        tx.db,
        tenant.id,
        found.session_id,
        found.session_expires_at,
      );
      // The session's own amr and auth_time, unchanged: a refresh is no new authentication.
      const opened = {
        sessionId: found.session_id,
        refreshToken: next,
        user,
        authentication: authenticationOf(found),
      };
      return { ...(await issuer.tokens(tenant, opened, signer)), user };
    });
    if (typeof outcome === 'string') throw invalidGrant(outcome);
    return outcome;
  }

  /**
   * Ends the session of a refresh token; nothing happens for an unknown one (RFC 7009
   * section 2.2). A `channel` caller (a browser, with only the public key) may end only
   * that channel's sessions: a token issued to another client is refused (section 2.1).
   */
  async signOut(tenantId: string, refreshToken: string, channel?: SessionChannel): Promise<void> {
    const refused = await transact(this.#deps.db, this.#deps.bus, async (tx) => {
      const found = await findRefreshToken(tx.db, tenantId, sha256Hex(refreshToken));
      if (!found) return false;
      if (channel !== undefined && found.channel !== channel) return true;
      await revokeSessionsIn(tx, tenantId, { sessionId: found.session_id }, 'signed_out');
      return false;
    });
    if (refused) throw invalidGrant('The refresh token was not issued to this client');
  }
}

// ----- Rows -----

/** The refresh token, its session and its user's state, within one tenant. */
async function findRefreshToken(db: Kysely<Schema>, tenantId: string, hash: string) {
  return db
    .selectFrom('refresh_tokens as r')
    .innerJoin('sessions as s', 's.id', 'r.session_id')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select([
      'r.hash',
      'r.used_at',
      'r.expires_at',
      's.id as session_id',
      's.channel',
      's.revoked_at',
      's.expires_at as session_expires_at',
      's.created_at',
      's.last_used_at',
      's.amr',
      's.authenticated_at',
      'u.id as user_id',
      'u.disabled_at',
    ])
    .where('r.tenant_id', '=', tenantId)
    .where('r.hash', '=', hash)
    .executeTakeFirst();
}

/** Marks a refresh token used; false when another request used it first. */
async function markRefreshTokenUsed(
  db: Kysely<Schema>,
  hash: string,
  at: number,
): Promise<boolean> {
  const result = await db
    .updateTable('refresh_tokens')
    .set({ used_at: at })
    .where('hash', '=', hash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

async function touchSession(db: Kysely<Schema>, id: string, at: number): Promise<void> {
  await db.updateTable('sessions').set({ last_used_at: at }).where('id', '=', id).execute();
}
