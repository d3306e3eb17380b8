import { randomBytes, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Kysely } from 'kysely';
import type { InvalidationBus } from '../../cache/invalidation.js';
import { TtlCache } from '../../cache/ttl-cache.js';
import { defaults } from '../../config/defaults.js';
import { sha256Hex } from '../../crypto/hash.js';
import { LatchkeyError } from '../../errors/index.js';
import {
  isUuid,
  type Schema,
  type SessionChannel,
  type SessionRow,
  type Tx,
  transact,
} from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import { getUser, type User } from '../users/index.js';
import { endBrowserSessionsOf } from './browser-sessions.js';
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

/** The `scope` claim of user access tokens. */
export const USER_TOKEN_SCOPE = 'openid email profile';

export interface TokenSet {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  refreshToken: string;
  sessionId: string;
}

/** A session written or resumed by a transaction whose access token is not signed yet. */
export interface OpenedSession {
  sessionId: string;
  user: User;
}

/** An opened session with a new refresh token for its client. */
export interface IssuedSession extends OpenedSession {
  refreshToken: string;
}

type OpenMeta<C extends SessionChannel> = {
  channel: C;
  ip?: string | undefined;
  userAgent?: string | undefined;
};

/** A tenant's signing key, ready to sign. */
export type Signer = Awaited<ReturnType<SigningKeys['active']>>;

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

/** A user's current e-mail and roles, as introspection answers them. */
export type SessionUser = Readonly<{ email: string; roles: string[] }>;

interface SessionState {
  active: boolean;
  userId: string;
  /**
   * One frozen object for as long as the entry is cached: an answer built from it can be
   * kept with it (introspection keeps its serialized answer while this object is the same).
   */
  user: SessionUser;
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

/**
 * The `aud` of the tenant's access tokens (RFC 9068 section 2.2): the API it set with
 * `latchkey tenant update --audience`, else `{auth_url}/t/{tenant_id}/api`, one per tenant,
 * so that a verifier configured for one tenant's API refuses every other tenant's tokens.
 */
export function audienceOf(authUrl: string, tenant: Pick<Tenant, 'id' | 'audience'>): string {
  return tenant.audience ?? `${issuerOf(authUrl, tenant.id)}/api`;
}

const hashToken = sha256Hex;

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
  readonly #states = new TtlCache<SessionState>(defaults.sessions.stateCacheMs);

  constructor(deps: SessionsDeps) {
    this.#deps = deps;
    deps.bus.onInvalidate((topic) => {
      if (topic === '*') return this.#states.clear();
      const [kind, id] = topic.split(':');
      if (kind === 'session' && id) this.#states.delete(id);
      if (kind === 'user' && id) this.#states.deleteWhere((s) => s.userId === id);
    });
  }

  /**
   * The tenant's signing key, fetched before a workflow claims anything: signing inside
   * the transaction then needs no more I/O, so a refresh token or code is never used up
   * by a transaction whose tokens could not be signed (the retry would look like theft).
   */
  async signer(tenant: Tenant): Promise<Signer> {
    return this.#deps.signingKeys.active(tenant.id);
  }

  async #accessToken(
    tenant: Tenant,
    user: User,
    sessionId: string,
    signer?: Signer,
  ): Promise<string> {
    const { kid, key } = signer ?? (await this.#deps.signingKeys.active(tenant.id));
    // RFC 9068 section 2.1: typ "at+jwt"; RFC 8725 section 3.1: one algorithm, pinned.
    // Section 2.2's client_id: every app of a tenant is one client, named by the tenant id
    // (the id that also authenticates introspection, RFC 7662 section 2.1).
    return new SignJWT({
      email: user.email,
      tid: tenant.id,
      sid: sessionId,
      roles: user.roles,
      scope: USER_TOKEN_SCOPE,
      client_id: tenant.id,
    })
      .setProtectedHeader({ alg: SIGNING_ALG, typ: 'at+jwt', kid })
      .setIssuer(issuerOf(this.#deps.authUrl, tenant.id))
      .setAudience(audienceOf(this.#deps.authUrl, tenant))
      .setSubject(user.id)
      .setIssuedAt()
      .setExpirationTime(`${tenant.accessTokenTtl}s`)
      .setJti(randomUUID())
      .sign(key);
  }

  async #newRefreshToken(
    db: Kysely<Schema>,
    tenantId: string,
    sessionId: string,
    expiresAt: number,
  ): Promise<string> {
    const token = `lkr_${randomBytes(32).toString('base64url')}`;
    await insertRefreshToken(db, {
      hash: hashToken(token),
      session_id: sessionId,
      tenant_id: tenantId,
      created_at: Date.now(),
      expires_at: expiresAt,
      used_at: null,
    });
    return token;
  }

  /**
   * Writes a new session within a workflow's transaction, with its first refresh token for
   * a server; a browser gets its refresh tokens only by redeeming a code (`continueIn`).
   * The access token is signed by `tokens` once the transaction has committed.
   */
  async openIn(
    tx: Tx,
    tenant: Tenant,
    user: User,
    meta: OpenMeta<'server'>,
  ): Promise<IssuedSession>;
  async openIn(
    tx: Tx,
    tenant: Tenant,
    user: User,
    meta: OpenMeta<'browser'>,
  ): Promise<OpenedSession>;
  async openIn(
    tx: Tx,
    tenant: Tenant,
    user: User,
    meta: OpenMeta<SessionChannel>,
  ): Promise<OpenedSession | IssuedSession> {
    const now = Date.now();
    const row: SessionRow = {
      id: randomUUID(),
      tenant_id: tenant.id,
      user_id: user.id,
      created_at: now,
      last_used_at: now,
      expires_at: now + defaults.sessions.lifetimeMs,
      revoked_at: null,
      revoked_reason: null,
      ip: meta.ip ?? null,
      user_agent: meta.userAgent?.slice(0, defaults.sessions.userAgentMaxLength) ?? null,
      channel: meta.channel,
    };
    await insertSession(tx.db, row);
    if (meta.channel === 'browser') return { sessionId: row.id, user };
    const refreshToken = await this.#newRefreshToken(tx.db, tenant.id, row.id, row.expires_at);
    return { sessionId: row.id, refreshToken, user };
  }

  /** A live session, resumed within a transaction (a returning browser); nothing is written. */
  async resumeIn(tx: Tx, tenant: Tenant, sessionId: string): Promise<OpenedSession | undefined> {
    return (await this.#live(tx, tenant, sessionId))?.opened;
  }

  /** New tokens for a live session within a transaction (a redeemed sign-in code). */
  async continueIn(tx: Tx, tenant: Tenant, sessionId: string): Promise<IssuedSession | undefined> {
    const live = await this.#live(tx, tenant, sessionId);
    if (!live) return undefined;
    const refreshToken = await this.#newRefreshToken(tx.db, tenant.id, sessionId, live.expiresAt);
    return { ...live.opened, refreshToken };
  }

  async #live(tx: Tx, tenant: Tenant, sessionId: string) {
    const row = await findSession(tx.db, tenant.id, sessionId);
    if (!row || row.revoked_at !== null || row.expires_at <= Date.now()) return undefined;
    const user = await getUser(tx.db, tenant.id, row.user_id);
    if (user.disabled) return undefined;
    return { opened: { sessionId: row.id, user }, expiresAt: row.expires_at };
  }

  /** The access token alone, for a session a committed transaction opened or resumed. */
  async accessToken(tenant: Tenant, opened: OpenedSession): Promise<string> {
    return this.#accessToken(tenant, opened.user, opened.sessionId);
  }

  /**
   * Signs the access token of a session a transaction opened or continued: after the
   * commit, or within the transaction with a `signer` fetched before it.
   */
  async tokens(tenant: Tenant, opened: IssuedSession, signer?: Signer): Promise<TokenSet> {
    return {
      accessToken: await this.#accessToken(tenant, opened.user, opened.sessionId, signer),
      tokenType: 'Bearer',
      expiresIn: tenant.accessTokenTtl,
      refreshToken: opened.refreshToken,
      sessionId: opened.sessionId,
    };
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
    const hash = hashToken(refreshToken);
    const signer = await this.signer(tenant);
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
        await this.revokeIn(tx, tenant.id, { sessionId: found.session_id }, 'refresh_token_reused');
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
      await touchSession(tx.db, found.session_id, now);
      const next = await this.#newRefreshToken(
        tx.db,
        tenant.id,
        found.session_id,
        found.session_expires_at,
      );
      const opened = { sessionId: found.session_id, refreshToken: next, user };
      return { ...(await this.tokens(tenant, opened, signer)), user };
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
      const found = await findRefreshToken(tx.db, tenantId, hashToken(refreshToken));
      if (!found) return false;
      if (channel !== undefined && found.channel !== channel) return true;
      await this.revokeIn(tx, tenantId, { sessionId: found.session_id }, 'signed_out');
      return false;
    });
    if (refused) throw invalidGrant('The refresh token was not issued to this client');
  }

  /** Revokes one session; not_found when the tenant has no such session. */
  async revokeSession(tenantId: string, sessionId: string): Promise<void> {
    await this.get(tenantId, sessionId);
    await this.revoke(tenantId, { sessionId }, 'revoked');
  }

  async revoke(
    tenantId: string,
    filter: { sessionId?: string; userId?: string },
    reason: string,
  ): Promise<string[]> {
    return transact(this.#deps.db, this.#deps.bus, (tx) =>
      this.revokeIn(tx, tenantId, filter, reason),
    );
  }

  /**
   * Revokes sessions within a workflow's transaction, with the hosted-page sessions bound
   * to them (every instance reads those from the database); caches drop after the commit.
   */
  async revokeIn(
    tx: Tx,
    tenantId: string,
    filter: { sessionId?: string; userId?: string },
    reason: string,
  ): Promise<string[]> {
    const ids = await revokeSessionRows(tx.db, tenantId, filter, Date.now(), reason);
    await endBrowserSessionsOf(tx.db, tenantId, ids);
    for (const id of ids) tx.invalidate(`session:${id}`);
    return ids;
  }

  async get(tenantId: string, sessionId: string): Promise<Session> {
    const row = isUuid(sessionId)
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
  ): Promise<SessionUser | undefined> {
    const cached = this.cachedState(sessionId, userId);
    if (cached !== null) return cached;
    const live = this.#deps.bus.live;
    const readAt = this.#states.generation;
    const row = await findSessionState(this.#deps.db, tenantId, sessionId);
    const state: SessionState = {
      userId: row?.user_id ?? '',
      active:
        !!row && row.revoked_at === null && row.disabled_at === null && row.expires_at > Date.now(),
      user: Object.freeze({
        email: row?.email ?? '',
        roles: row ? (JSON.parse(row.roles) as string[]) : [],
      }),
    };
    if (live && row) this.#states.set(sessionId, state, readAt);
    return state.active && state.userId === userId ? state.user : undefined;
  }

  /**
   * `state` answered from the cache alone, with no await (introspection's warm path);
   * null when the cache cannot answer. The session id is unique across tenants, and the
   * caller has already checked that the token belongs to its tenant.
   */
  cachedState(sessionId: string, userId: string): SessionUser | undefined | null {
    const state = this.#deps.bus.live ? this.#states.get(sessionId) : undefined;
    this.#deps.onCacheLookup?.(state !== undefined);
    if (!state) return null;
    return state.active && state.userId === userId ? state.user : undefined;
  }
}
