import { randomBytes } from 'node:crypto';
import type SQLiteType from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import { sha256Hex } from '../../crypto/hash.js';
import type { Schema, SessionRow, UserRow } from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import { toUser, type User } from '../users/index.js';
import { signAccessToken } from './access-token-sign.js';
import {
  type Authentication,
  audienceOf,
  authenticationOf,
  issuerOf,
  type TokenSet,
} from './session-issuing.js';
import type { ActiveKey, SigningKeys } from './signing-keys.service.js';

export interface RefreshBatchDeps {
  /** Kysely over `sqlite`: its connection is taken through it, so no other transaction is open. */
  db: Kysely<Schema>;
  sqlite: SQLiteType.Database;
  signingKeys: SigningKeys;
  authUrl: string;
}

/** A refresh's answer: what POST /v1/auth/token returns. */
export type Refreshed = TokenSet & { user: User };

interface Waiting {
  tenant: Tenant;
  hash: string;
  signer: ActiveKey;
  resolve: (answer: Refreshed | undefined) => void;
}

/** The most refreshes written by one transaction; more wait for the next. */
const MOST_PER_TRANSACTION = 128;

/** A refresh written by the batch, its access token still to sign. */
interface Written {
  sessionId: string;
  refreshToken: string;
  user: User;
  authentication: Authentication;
}

type Found = Pick<
  SessionRow,
  'channel' | 'revoked_at' | 'created_at' | 'last_used_at' | 'amr' | 'authenticated_at' | 'user_id'
> & {
  used_at: number | null;
  expires_at: number;
  session_id: string;
  session_expires_at: number;
};

/**
 * The refreshes of a server's secret key on SQLite (`POST /v1/auth/token`), the common case
 * only: a token that is unused, on the server channel, of a live session and an enabled user.
 * The refreshes that arrive in one turn of the event loop are written by one transaction
 * (one commit for all, as SQLite takes one writer at a time anyway), each exactly as
 * RefreshRotation.refresh writes it: the token claimed, the session touched, the next token
 * stored; then each access token is signed. Anything else (unknown, used within or after
 * the reuse interval, revoked, expired, disabled, another channel) writes nothing here and
 * is answered by RefreshRotation, which knows every rule: `refresh` returns undefined.
 */
export class SqliteRefreshBatch {
  readonly #deps: RefreshBatchDeps;
  #waiting: Waiting[] = [];
  #statements: ReturnType<typeof prepare> | undefined;

  constructor(deps: RefreshBatchDeps) {
    this.#deps = deps;
  }

  /**
   * The new pair for `refreshToken`, written with the other refreshes of this turn; undefined
   * (nothing written) when it is not the common case: the caller then asks RefreshRotation.
   */
  refresh(tenant: Tenant, refreshToken: string): Promise<Refreshed | undefined> {
    // The key first, so that a claimed token always gets its signature (session-issuing.ts).
    const signer = this.#deps.signingKeys.activeCached(tenant.id);
    if (signer) return this.#enqueue(tenant, refreshToken, signer);
    return this.#deps.signingKeys.active(tenant.id).then(
      (key) => this.#enqueue(tenant, refreshToken, key),
      () => undefined,
    );
  }

  #enqueue(tenant: Tenant, refreshToken: string, signer: ActiveKey) {
    return new Promise<Refreshed | undefined>((resolve) => {
      this.#waiting.push({ tenant, hash: sha256Hex(refreshToken), signer, resolve });
      if (this.#waiting.length === 1) setImmediate(() => this.#run());
    });
  }

  #run(): void {
    const batch = this.#waiting.splice(0, MOST_PER_TRANSACTION);
    if (this.#waiting.length > 0) setImmediate(() => this.#run());
    // Through Kysely's connection: it waits while a workflow's transaction is open on it.
    this.#deps.db
      .connection()
      .execute(async () => this.#write(batch))
      .then(
        (written) => {
          for (const [i, item] of batch.entries()) {
            const opened = written[i];
            item.resolve(opened && this.#answer(item, opened));
          }
        },
        // A busy or failing database: RefreshRotation tries again, and answers the error.
        () => {
          for (const item of batch) item.resolve(undefined);
        },
      );
  }

  /** One transaction for the batch; undefined for each refresh left to RefreshRotation. */
  #write(batch: Waiting[]): (Written | undefined)[] {
    this.#statements ??= prepare(this.#deps.sqlite);
    const s = this.#statements;
    const run = this.#deps.sqlite.transaction(() => {
      const now = Date.now();
      return batch.map(({ tenant, hash }) => {
        const found = s.find.get(tenant.id, hash) as Found | undefined;
        if (
          !found ||
          found.used_at !== null ||
          found.channel !== 'server' ||
          found.revoked_at !== null ||
          found.session_expires_at <= now ||
          found.expires_at <= now
        )
          return undefined;
        const user = s.user.get(found.user_id, tenant.id) as UserRow | undefined;
        if (!user || user.disabled_at !== null) return undefined;
        if (s.claim.run(now, hash).changes !== 1) return undefined;
        if (now - found.last_used_at >= defaults.sessions.touchIntervalMs)
          s.touch.run(now, found.session_id);
        const refreshToken = `lkr_${randomBytes(32).toString('base64url')}`;
        s.insert.run(
          sha256Hex(refreshToken),
          found.session_id,
          tenant.id,
          now,
          found.session_expires_at,
        );
        return {
          sessionId: found.session_id,
          refreshToken,
          user: toUser(user),
          // The session's own amr and auth_time, unchanged: a refresh is no new authentication.
          authentication: authenticationOf(found),
        };
      });
    });
    // BEGIN IMMEDIATE: the write lock from the start, as the first statement writes anyway.
    return run.immediate();
  }

  #answer(item: Waiting, opened: Written): Refreshed {
    const { authUrl } = this.#deps;
    const { tenant } = item;
    return {
      accessToken: signAccessToken(
        issuerOf(authUrl, tenant.id),
        audienceOf(authUrl, tenant),
        tenant.accessTokenTtl,
        opened,
        tenant.id,
        item.signer,
      ),
      tokenType: 'Bearer' as const,
      expiresIn: tenant.accessTokenTtl,
      refreshToken: opened.refreshToken,
      sessionId: opened.sessionId,
      user: opened.user,
    };
  }
}

/** The statements, prepared once (refresh-rotation.ts has their Kysely forms). */
function prepare(sqlite: SQLiteType.Database) {
  return {
    find: sqlite.prepare(
      `select r.used_at, r.expires_at, s.id as session_id, s.channel, s.revoked_at,
         s.expires_at as session_expires_at, s.created_at, s.last_used_at, s.amr, s.authenticated_at, s.user_id
       from refresh_tokens r join sessions s on s.id = r.session_id
       where r.tenant_id = ? and r.hash = ?`,
    ),
    user: sqlite.prepare('select * from users where id = ? and tenant_id = ?'),
    claim: sqlite.prepare(
      'update refresh_tokens set used_at = ? where hash = ? and used_at is null',
    ),
    touch: sqlite.prepare('update sessions set last_used_at = ? where id = ?'),
    insert: sqlite.prepare(
      `insert into refresh_tokens (hash, session_id, tenant_id, created_at, expires_at, used_at)
       values (?, ?, ?, ?, ?, null)`,
    ),
  };
}
