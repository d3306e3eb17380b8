import type { Kysely } from 'kysely';
import type { InvalidationBus } from '../../cache/invalidation.js';
import { type Schema, type SessionChannel, type Tx, transact } from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import type { User } from '../users/index.js';
import { RefreshRotation } from './refresh-rotation.js';
import {
  type IssuedSession,
  type OpenedSession,
  type OpenMeta,
  SessionIssuer,
  type Signer,
  type TokenSet,
} from './session-issuing.js';
import {
  getSession,
  listSessions,
  type RevokeFilter,
  revokeSessionsIn,
  type Session,
} from './session-records.js';
import { SessionStates, type SessionUser } from './session-state.js';
import type { SigningKeys } from './signing-keys.service.js';

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

/**
 * Sessions as the rest of the service sees them, one object over their parts: token
 * issuing (session-issuing.ts), refresh rotation (refresh-rotation.ts), the session-state
 * cache (session-state.ts), and revocation and the session list (session-records.ts).
 */
export class Sessions {
  readonly #db: Kysely<Schema>;
  readonly #bus: InvalidationBus;
  readonly #issuer: SessionIssuer;
  readonly #rotation: RefreshRotation;
  readonly #states: SessionStates;

  constructor(deps: SessionsDeps) {
    this.#db = deps.db;
    this.#bus = deps.bus;
    this.#issuer = new SessionIssuer(deps);
    this.#rotation = new RefreshRotation({ ...deps, issuer: this.#issuer });
    this.#states = new SessionStates(deps);
  }

  /** See `SessionIssuer.signer`: fetched before a workflow claims anything. */
  signer(tenant: Tenant): Promise<Signer> {
    return this.#issuer.signer(tenant);
  }

  /** See `SessionIssuer.openIn`: a new session, written in the workflow's transaction. */
  openIn(tx: Tx, tenant: Tenant, user: User, meta: OpenMeta<'server'>): Promise<IssuedSession>;
  openIn(tx: Tx, tenant: Tenant, user: User, meta: OpenMeta<'browser'>): Promise<OpenedSession>;
  openIn(
    tx: Tx,
    tenant: Tenant,
    user: User,
    meta: OpenMeta<SessionChannel>,
  ): Promise<OpenedSession | IssuedSession> {
    return this.#issuer.openIn(tx, tenant, user, meta);
  }

  resumeIn(tx: Tx, tenant: Tenant, sessionId: string): Promise<OpenedSession | undefined> {
    return this.#issuer.resumeIn(tx, tenant, sessionId);
  }

  continueIn(tx: Tx, tenant: Tenant, sessionId: string): Promise<IssuedSession | undefined> {
    return this.#issuer.continueIn(tx, tenant, sessionId);
  }

  accessToken(tenant: Tenant, opened: OpenedSession): Promise<string> {
    return this.#issuer.accessToken(tenant, opened);
  }

  tokens(tenant: Tenant, opened: IssuedSession, signer?: Signer): Promise<TokenSet> {
    return this.#issuer.tokens(tenant, opened, signer);
  }

  refresh(
    tenant: Tenant,
    refreshToken: string,
    channel: SessionChannel,
  ): Promise<TokenSet & { user: User }> {
    return this.#rotation.refresh(tenant, refreshToken, channel);
  }

  signOut(tenantId: string, refreshToken: string, channel?: SessionChannel): Promise<void> {
    return this.#rotation.signOut(tenantId, refreshToken, channel);
  }

  /** Revokes one session; not_found when the tenant has no such session. */
  async revokeSession(tenantId: string, sessionId: string): Promise<void> {
    await this.get(tenantId, sessionId);
    await this.revoke(tenantId, { sessionId }, 'revoked');
  }

  revoke(tenantId: string, filter: RevokeFilter, reason: string): Promise<string[]> {
    return transact(this.#db, this.#bus, (tx) => this.revokeIn(tx, tenantId, filter, reason));
  }

  /** See `revokeSessionsIn`: ends the bound hosted-page sessions in the same transaction. */
  revokeIn(tx: Tx, tenantId: string, filter: RevokeFilter, reason: string): Promise<string[]> {
    return revokeSessionsIn(tx, tenantId, filter, reason);
  }

  get(tenantId: string, sessionId: string): Promise<Session> {
    return getSession(this.#db, tenantId, sessionId);
  }

  list(tenantId: string, userId: string): Promise<Session[]> {
    return listSessions(this.#db, tenantId, userId);
  }

  state(tenantId: string, sessionId: string, userId: string): Promise<SessionUser | undefined> {
    return this.#states.state(tenantId, sessionId, userId);
  }

  /** See `SessionStates.cachedState`: no await (introspection's warm path). */
  cachedState(sessionId: string, userId: string): SessionUser | undefined | null {
    return this.#states.cachedState(sessionId, userId);
  }
}
