import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Kysely } from 'kysely';
import type { InvalidationBus } from '../../cache/invalidation.js';
import { TtlCache } from '../../cache/ttl-cache.js';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import type { Schema, SessionRow } from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import type { User } from '../users/index.js';
import {
  findRefreshToken,
  findSession,
  findSessionState,
  insertRefreshToken,
  insertSession,
  listSessionRows,
  markRefreshTokenUsed,
  revokeSessionRows,
  touchSession,
} from './sessions.repository.js';
import { SIGNING_ALG, type SigningKeys } from './signing-keys.service.js';

/** A session (and so its refresh tokens) lives at most this long, whatever its use. */
export const SESSION_LIFETIME_MS = 30 * 24 * 60 * 60_000;
/** The `scope` claim of user access tokens. */
export const USER_TOKEN_SCOPE = 'openid email profile';

export interface TokenSet {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  refreshToken: string;
  sessionId: string;
}

export interface Session {
  id: string;
  userId: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  revokedAt: string | null;
  revokedReason: string | null;
  ip: string | null;
  userAgent: string | null;
}

interface SessionState {
  active: boolean;
  userId: string;
  email: string;
  roles: string[];
}

export interface SessionsDeps {
  db: Kysely<Schema>;
  signingKeys: SigningKeys;
  bus: InvalidationBus;
  /** `{auth_url}`: issuers are `{auth_url}/t/{tenant_id}`. */
  authUrl: string;
  /** Told whether each session-state look-up came from the cache. */
  onCacheLookup?: (hit: boolean) => void;
  /** Grace period for a rotated refresh token (defaults.ts: refreshReuseIntervalMs). */
  refreshReuseIntervalMs?: number;
}

export function issuerOf(authUrl: string, tenantId: string): string {
  return `${authUrl}/t/${tenantId}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

function toSession(row: SessionRow): Session {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: row.id,
    userId: row.user_id,
    createdAt: new Date(row.created_at).toISOString(),
    lastUsedAt: new Date(row.last_used_at).toISOString(),
    expiresAt: new Date(row.expires_at).toISOString(),
    revokedAt: iso(row.revoked_at),
    revokedReason: row.revoked_reason,
    ip: row.ip,
    userAgent: row.user_agent,
  };
}

function invalidGrant(detail: string): LatchkeyError {
  return new LatchkeyError('invalid_grant', detail);
}

export class Sessions {
  readonly #deps: SessionsDeps;
  /** sid -> state, only while the invalidation bus is live. */
  readonly #states = new TtlCache<SessionState>(60_000);

  constructor(deps: SessionsDeps) {
    this.#deps = deps;
    deps.bus.onInvalidate((topic) => {
      if (topic === '*') return this.#states.clear();
      const [kind, id] = topic.split(':');
      if (kind === 'session' && id) this.#states.delete(id);
      if (kind === 'user' && id) this.#states.deleteWhere((s) => s.userId === id);
    });
  }

  async #accessToken(tenant: Tenant, user: User, sessionId: string): Promise<string> {
    const { kid, key } = await this.#deps.signingKeys.active(tenant.id);
    // RFC 9068 section 2.1: typ "at+jwt"; RFC 8725 section 3.1: one algorithm, pinned.
    return new SignJWT({
      email: user.email,
      tid: tenant.id,
      sid: sessionId,
      roles: user.roles,
      scope: USER_TOKEN_SCOPE,
    })
      .setProtectedHeader({ alg: SIGNING_ALG, typ: 'at+jwt', kid })
      .setIssuer(issuerOf(this.#deps.authUrl, tenant.id))
      .setSubject(user.id)
      .setIssuedAt()
      .setExpirationTime(`${tenant.accessTokenTtl}s`)
      .setJti(randomUUID())
      .sign(key);
  }

  async #newRefreshToken(tenantId: string, sessionId: string, expiresAt: number): Promise<string> {
    const token = `lkr_${randomBytes(32).toString('base64url')}`;
    await insertRefreshToken(this.#deps.db, {
      hash: hashToken(token),
      session_id: sessionId,
      tenant_id: tenantId,
      created_at: Date.now(),
      expires_at: expiresAt,
      used_at: null,
    });
    return token;
  }

  /** Starts a session for a user who just proved who they are. */
  async start(
    tenant: Tenant,
    user: User,
    meta: { ip?: string; userAgent?: string } = {},
  ): Promise<TokenSet> {
    const now = Date.now();
    const row: SessionRow = {
      id: randomUUID(),
      tenant_id: tenant.id,
      user_id: user.id,
      created_at: now,
      last_used_at: now,
      expires_at: now + SESSION_LIFETIME_MS,
      revoked_at: null,
      revoked_reason: null,
      ip: meta.ip ?? null,
      user_agent: meta.userAgent?.slice(0, 512) ?? null,
    };
    await insertSession(this.#deps.db, row);
    return {
      accessToken: await this.#accessToken(tenant, user, row.id),
      tokenType: 'Bearer',
      expiresIn: tenant.accessTokenTtl,
      refreshToken: await this.#newRefreshToken(tenant.id, row.id, row.expires_at),
      sessionId: row.id,
    };
  }

  /**
   * Rotates a refresh token (RFC 9700 section 4.14.2): each one works once; presenting a
   * used one again means it was copied, so the whole session is revoked. Within the reuse
   * interval after its rotation a token gets a new pair instead (two tabs at once).
   */
  async refresh(
    tenant: Tenant,
    refreshToken: string,
    loadUser: (id: string) => Promise<User>,
  ): Promise<TokenSet & { user: User }> {
    const hash = hashToken(refreshToken);
    const found = await findRefreshToken(this.#deps.db, tenant.id, hash);
    if (!found) throw invalidGrant('The refresh token is not valid');
    const now = Date.now();
    const claimed =
      found.used_at === null && (await markRefreshTokenUsed(this.#deps.db, hash, now));
    // Not claimed: used before, or by a request that won the race just now.
    const usedAt = found.used_at ?? now;
    const reuse = this.#deps.refreshReuseIntervalMs ?? defaults.refreshReuseIntervalMs;
    if (!claimed && now - usedAt > reuse) {
      await this.revoke(tenant.id, { sessionId: found.session_id }, 'refresh_token_reused');
      throw invalidGrant('The refresh token was already used; the session has been revoked');
    }
    // Read again after claiming the token: a revocation may have landed in between.
    const current = await findSessionState(this.#deps.db, tenant.id, found.session_id);
    if (found.revoked_at !== null || !current || current.revoked_at !== null) {
      throw invalidGrant('The session has been revoked');
    }
    if (found.session_expires_at <= now || found.expires_at <= now)
      throw invalidGrant('The session has expired');
    if (found.disabled_at !== null || current.disabled_at !== null)
      throw invalidGrant('The user is disabled');
    const user = await loadUser(found.user_id);
    await touchSession(this.#deps.db, found.session_id, now);
    return {
      accessToken: await this.#accessToken(tenant, user, found.session_id),
      tokenType: 'Bearer',
      expiresIn: tenant.accessTokenTtl,
      refreshToken: await this.#newRefreshToken(
        tenant.id,
        found.session_id,
        found.session_expires_at,
      ),
      sessionId: found.session_id,
      user,
    };
  }

  /** New tokens for a live session (a redeemed sign-in code); undefined if it ended. */
  async issueFor(
    tenant: Tenant,
    sessionId: string,
    loadUser: (id: string) => Promise<User>,
  ): Promise<TokenSet | undefined> {
    const row = await findSession(this.#deps.db, tenant.id, sessionId);
    if (!row || row.revoked_at !== null || row.expires_at <= Date.now()) return undefined;
    const user = await loadUser(row.user_id);
    if (user.disabled) return undefined;
    return {
      accessToken: await this.#accessToken(tenant, user, row.id),
      tokenType: 'Bearer',
      expiresIn: tenant.accessTokenTtl,
      refreshToken: await this.#newRefreshToken(tenant.id, row.id, row.expires_at),
      sessionId: row.id,
    };
  }

  /** Ends the session of a refresh token; unknown tokens are ignored (RFC 7009 section 2.2). */
  async signOut(tenantId: string, refreshToken: string): Promise<void> {
    const sessionId = await this.sessionOfRefreshToken(tenantId, refreshToken);
    if (sessionId) await this.revoke(tenantId, { sessionId }, 'signed_out');
  }

  /** The session of a refresh token (for sign-out), or undefined. */
  async sessionOfRefreshToken(tenantId: string, refreshToken: string): Promise<string | undefined> {
    return (await findRefreshToken(this.#deps.db, tenantId, hashToken(refreshToken)))?.session_id;
  }

  async revoke(
    tenantId: string,
    filter: { sessionId?: string; userId?: string },
    reason: string,
  ): Promise<string[]> {
    const ids = await revokeSessionRows(this.#deps.db, tenantId, filter, Date.now(), reason);
    await Promise.all(ids.map((id) => this.#deps.bus.publish(`session:${id}`)));
    return ids;
  }

  async get(tenantId: string, sessionId: string): Promise<Session> {
    const row = UUID.test(sessionId)
      ? await findSession(this.#deps.db, tenantId, sessionId)
      : undefined;
    if (!row) throw new LatchkeyError('not_found', `No session ${sessionId}`);
    return toSession(row);
  }

  async list(tenantId: string, userId: string): Promise<Session[]> {
    return (await listSessionRows(this.#deps.db, tenantId, userId)).map(toSession);
  }

  /**
   * The live state of a session: undefined when it is revoked or expired, or its user is
   * disabled, deleted or not `userId`; otherwise the user's current e-mail and roles.
   * Cached while invalidations flow.
   */
  async state(
    tenantId: string,
    sessionId: string,
    userId: string,
  ): Promise<{ email: string; roles: string[] } | undefined> {
    const live = this.#deps.bus.live;
    let state = live ? this.#states.get(sessionId) : undefined;
    this.#deps.onCacheLookup?.(state !== undefined);
    if (!state) {
      const readAt = this.#states.generation;
      const row = await findSessionState(this.#deps.db, tenantId, sessionId);
      state = {
        userId: row?.user_id ?? '',
        active:
          !!row &&
          row.revoked_at === null &&
          row.disabled_at === null &&
          row.expires_at > Date.now(),
        email: row?.email ?? '',
        roles: row ? (JSON.parse(row.roles) as string[]) : [],
      };
      if (live && row) this.#states.set(sessionId, state, readAt);
    }
    return state.active && state.userId === userId
      ? { email: state.email, roles: state.roles }
      : undefined;
  }

  async isActive(tenantId: string, sessionId: string, userId: string): Promise<boolean> {
    return (await this.state(tenantId, sessionId, userId)) !== undefined;
  }
}
