import { randomUUID } from 'node:crypto';
import type { InsertResult, Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import { sha256Hex } from '../../crypto/hash.js';
import { randomToken } from '../../crypto/random.js';
import {
  columnValues,
  prepared,
  type RefreshTokenRow,
  type Schema,
  type SessionChannel,
  type SessionRow,
  type Tx,
} from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import { getUser, type User } from '../users/index.js';
import { signAccessToken } from './access-token-sign.js';
import { findSession, insertSessionRow } from './session-records.js';
import type { SigningKeys } from './signing-keys.service.js';

export interface TokenSet {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  refreshToken: string;
  sessionId: string;
}

/**
 * RFC 8176 authentication method reference values a session can be opened with: `pwd` a
 * password, `fed` a social provider (federated), `otp` an authenticator app's code or a
 * recovery code, `hwk`/`swk` a passkey kept in hardware or synced, `user` the user
 * verification a passkey did, `mfa` when two factors were used (docs/design.md §13).
 */
export type AuthMethod = 'pwd' | 'fed' | 'otp' | 'hwk' | 'swk' | 'user' | 'mfa';

/** How and when the person behind a session authenticated (its tokens' `amr` and `auth_time`). */
export interface Authentication {
  /** Undefined on sessions opened before they were recorded: the token carries no `amr`. */
  amr: readonly string[] | undefined;
  /** Epoch seconds (RFC 7519 NumericDate). */
  authTime: number;
}

/** A session written or resumed by a transaction whose access token is not signed yet. */
export interface OpenedSession {
  sessionId: string;
  user: User;
  authentication: Authentication;
}

/** An opened session with a new refresh token for its client. */
export interface IssuedSession extends OpenedSession {
  refreshToken: string;
}

export type OpenMeta<C extends SessionChannel> = {
  channel: C;
  /**
   * How the person just authenticated; undefined when the session is opened on an earlier
   * proof whose methods were not kept (a returning browser's hosted session).
   */
  amr: readonly AuthMethod[] | undefined;
  /** When they authenticated, epoch ms; now when absent. */
  authenticatedAt?: number | undefined;
  ip?: string | undefined;
  userAgent?: string | undefined;
};

/** A tenant's signing key, ready to sign. */
export type Signer = Awaited<ReturnType<SigningKeys['active']>>;

export interface IssuingDeps {
  signingKeys: SigningKeys;
  /** `{auth_url}`: issuers are `{auth_url}/t/{tenant_id}`. */
  authUrl: string;
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

/** The `amr` and `auth_time` of a session row (older rows: no `amr`, `auth_time` its opening). */
export function authenticationOf(
  row: Pick<SessionRow, 'amr' | 'authenticated_at' | 'created_at'>,
): Authentication {
  return {
    amr: row.amr === null ? undefined : (JSON.parse(row.amr) as string[]),
    authTime: Math.floor((row.authenticated_at ?? row.created_at) / 1000),
  };
}

/**
 * Writes a new refresh token of a session, stored by its hash, and returns it (the only
 * time it is seen whole).
 */
export async function newRefreshToken(
  db: Kysely<Schema>,
  tenantId: string,
  sessionId: string,
  expiresAt: number,
): Promise<string> {
  const token = `lkr_${randomToken()}`;
  await insertRefreshToken(db, {
    hash: sha256Hex(token),
    session_id: sessionId,
    tenant_id: tenantId,
    created_at: Date.now(),
    expires_at: expiresAt,
    used_at: null,
  });
  return token;
}

/** Token issuing: sessions opened, resumed or continued, and their tokens signed. */
export class SessionIssuer {
  readonly #deps: IssuingDeps;

  constructor(deps: IssuingDeps) {
    this.#deps = deps;
  }

  /**
   * The tenant's signing key, fetched before a workflow claims anything: signing inside
   * the transaction then needs no more I/O, so a refresh token or code is never used up
   * by a transaction whose tokens could not be signed (the retry would look like theft).
   */
  async signer(tenant: Tenant): Promise<Signer> {
    return this.#deps.signingKeys.active(tenant.id);
  }

  async #accessToken(tenant: Tenant, opened: OpenedSession, signer?: Signer): Promise<string> {
    const key = signer ?? (await this.#deps.signingKeys.active(tenant.id));
    const { authUrl } = this.#deps;
    return signAccessToken(
      issuerOf(authUrl, tenant.id),
      audienceOf(authUrl, tenant),
      tenant.accessTokenTtl,
      opened,
      tenant.id,
      key,
    );
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
  ): Promise<OpenedSession | IssuedSession>;
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
      amr: meta.amr === undefined ? null : JSON.stringify(meta.amr),
      authenticated_at: meta.authenticatedAt ?? now,
      oauth_grant_id: null,
      oauth_client_id: null,
    };
    await insertSessionRow(tx.db, row);
    const opened = { sessionId: row.id, user, authentication: authenticationOf(row) };
    if (meta.channel === 'browser') return opened;
    const refreshToken = await newRefreshToken(tx.db, tenant.id, row.id, row.expires_at);
    return { ...opened, refreshToken };
  }

  /** A live session, resumed within a transaction (a returning browser); nothing is written. */
  async resumeIn(tx: Tx, tenant: Tenant, sessionId: string): Promise<OpenedSession | undefined> {
    return (await this.#live(tx, tenant, sessionId))?.opened;
  }

  /** New tokens for a live session within a transaction (a redeemed sign-in code). */
  async continueIn(tx: Tx, tenant: Tenant, sessionId: string): Promise<IssuedSession | undefined> {
    const live = await this.#live(tx, tenant, sessionId);
    if (!live) return undefined;
    const refreshToken = await newRefreshToken(tx.db, tenant.id, sessionId, live.expiresAt);
    return { ...live.opened, refreshToken };
  }

  async #live(tx: Tx, tenant: Tenant, sessionId: string) {
    const row = await findSession(tx.db, tenant.id, sessionId);
    if (!row || row.revoked_at !== null || row.expires_at <= Date.now()) return undefined;
    const user = await getUser(tx.db, tenant.id, row.user_id);
    if (user.disabled) return undefined;
    const opened = { sessionId: row.id, user, authentication: authenticationOf(row) };
    return { opened, expiresAt: row.expires_at };
  }

  /** The access token alone, for a session a committed transaction opened or resumed. */
  async accessToken(tenant: Tenant, opened: OpenedSession): Promise<string> {
    return this.#accessToken(tenant, opened);
  }

  /**
   * Signs the access token of a session a transaction opened or continued: after the
   * commit, or within the transaction with a `signer` fetched before it.
   */
  async tokens(tenant: Tenant, opened: IssuedSession, signer?: Signer): Promise<TokenSet> {
    return {
      accessToken: await this.#accessToken(tenant, opened, signer),
      tokenType: 'Bearer',
      expiresIn: tenant.accessTokenTtl,
      refreshToken: opened.refreshToken,
      sessionId: opened.sessionId,
    };
  }
}

// ----- Rows -----

const REFRESH_TOKEN_COLUMNS: Record<keyof RefreshTokenRow, true> = {
  hash: true,
  session_id: true,
  tenant_id: true,
  created_at: true,
  expires_at: true,
  used_at: true,
};
/** Every sign-in and refresh writes one: compiled once (storage/prepared.ts). */
const insertRefreshToken = prepared<RefreshTokenRow, InsertResult>((db, value) =>
  db.insertInto('refresh_tokens').values(columnValues(REFRESH_TOKEN_COLUMNS, value)),
);
