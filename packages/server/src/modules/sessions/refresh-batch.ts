import type SQLiteType from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import { defaults } from '../../config/defaults.js';
import { sha256Hex } from '../../crypto/hash.js';
import { randomToken } from '../../crypto/random.js';
import type { RefreshTokenRow, Schema, SessionRow, UserRow } from '../../storage/index.js';
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
  /** On SQLite, Kysely over `sqlite`: its connection is taken through it. */
  db: Kysely<Schema>;
  signingKeys: SigningKeys;
  authUrl: string;
}

/** A refresh's answer: what POST /v1/auth/token returns. */
export type Refreshed = TokenSet & { user: User };

/** A refresh as the batch writes it: the tenant and the presented token's hash. */
interface Item {
  tenant: Tenant;
  hash: string;
}

interface Waiting extends Item {
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

/**
 * The refreshes of a server's secret key (`POST /v1/auth/token`), the common case only: a
 * token that is unused, on the server channel, of a live session and an enabled user. The
 * refreshes that arrive in one turn of the event loop are written together (one commit for
 * all), each exactly as RefreshRotation.refresh writes it: the token claimed, the session's
 * use recorded (once a minute), the next token stored; then each access token is signed.
 * Anything else (unknown, used within or after the reuse interval, revoked, expired,
 * disabled, another channel) writes nothing here and is answered by RefreshRotation, which
 * knows every rule: `refresh` resolves to undefined.
 */
export abstract class RefreshBatch {
  protected readonly deps: RefreshBatchDeps;
  #waiting: Waiting[] = [];
  /** Batches being written. */
  #writing = 0;
  /**
   * At most this many batches are written at once; the refreshes that arrive meanwhile wait
   * for one to end and go together in the next (see PostgresRefreshBatch).
   */
  protected readonly mostWriting: number = Number.POSITIVE_INFINITY;

  constructor(deps: RefreshBatchDeps) {
    this.deps = deps;
  }

  /**
   * The new pair for `refreshToken`, written with the other refreshes of this turn; undefined
   * (nothing written) when it is not the common case: the caller then asks RefreshRotation.
   */
  refresh(tenant: Tenant, refreshToken: string): Promise<Refreshed | undefined> {
    // The key first, so that a claimed token always gets its signature (session-issuing.ts).
    const signer = this.deps.signingKeys.activeCached(tenant.id);
    if (signer) return this.#enqueue(tenant, refreshToken, signer);
    return this.deps.signingKeys.active(tenant.id).then(
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
    if (this.#writing >= this.mostWriting || this.#waiting.length === 0) return;
    const batch = this.#waiting.splice(0, MOST_PER_TRANSACTION);
    this.#writing++;
    if (this.#waiting.length > 0) setImmediate(() => this.#run());
    this.write(batch)
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
      )
      .finally(() => {
        this.#writing--;
        // Those that waited meanwhile, with what the rest of this turn reads.
        if (this.#waiting.length > 0) setImmediate(() => this.#run());
      });
  }

  /** The batch's writes, committed together; undefined for each refresh left to RefreshRotation. */
  protected abstract write(batch: readonly Item[]): Promise<(Written | undefined)[]>;

  #answer(item: Waiting, opened: Written): Refreshed {
    const { authUrl } = this.deps;
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

/** A new refresh token: what its client gets, and its hash, which is stored. */
function nextToken(): { refreshToken: string; hash: string } {
  const refreshToken = `lkr_${randomToken()}`;
  return { refreshToken, hash: sha256Hex(refreshToken) };
}

/** Whether a refresh at `now` records the session's use (defaults.sessions.touchIntervalMs). */
const touches = (lastUsedAt: number, now: number) =>
  now - lastUsedAt >= defaults.sessions.touchIntervalMs;

/**
 * SQLite: one transaction for the batch, its statements run synchronously on the
 * connection Kysely uses, taken through Kysely so that no workflow's transaction is open
 * on it meanwhile (it waits for one that is).
 */
export class SqliteRefreshBatch extends RefreshBatch {
  readonly #sqlite: SQLiteType.Database;
  #statements: ReturnType<typeof prepare> | undefined;

  constructor(deps: RefreshBatchDeps & { sqlite: SQLiteType.Database }) {
    super(deps);
    this.#sqlite = deps.sqlite;
  }

  protected write(batch: readonly Item[]): Promise<(Written | undefined)[]> {
    return this.deps.db.connection().execute(async () => this.#writeNow(batch));
  }

  #writeNow(batch: readonly Item[]): (Written | undefined)[] {
    this.#statements ??= prepare(this.#sqlite);
    const s = this.#statements;
    const run = this.#sqlite.transaction(() => {
      const now = Date.now();
      return batch.map(({ tenant, hash }) => {
        // Three look-ups by primary key: a join of the three cost SQLite several times more.
        const token = s.token.get(hash) as RefreshTokenRow | undefined;
        if (!token || token.tenant_id !== tenant.id || token.used_at !== null) return undefined;
        const session = s.session.get(token.session_id) as SessionRow | undefined;
        if (
          session?.channel !== 'server' ||
          session.revoked_at !== null ||
          session.expires_at <= now ||
          token.expires_at <= now
        )
          return undefined;
        const user = s.user.get(session.user_id, tenant.id) as UserRow | undefined;
        if (!user || user.disabled_at !== null) return undefined;
        if (s.claim.run(now, hash).changes !== 1) return undefined;
        if (touches(session.last_used_at, now)) s.touch.run(now, session.id);
        const next = nextToken();
        s.insert.run(next.hash, session.id, tenant.id, now, session.expires_at);
        return {
          sessionId: session.id,
          refreshToken: next.refreshToken,
          user: toUser(user),
          // The session's own amr and auth_time, unchanged: a refresh is no new authentication.
          authentication: authenticationOf(session),
        };
      });
    });
    // BEGIN IMMEDIATE: the write lock from the start, as the first statement writes anyway.
    return run.immediate();
  }
}

/**
 * PostgreSQL: the whole batch is one statement (data-modifying CTEs, one round trip, atomic
 * by itself). It locks the tokens it finds (`for update`), so that of two instances given
 * the same token one claims it and the other finds it used, as RefreshRotation's guarded
 * update does. A token twice in one batch is claimed once; the other is handed over.
 */
export class PostgresRefreshBatch extends RefreshBatch {
  /**
   * One statement at a time: the refreshes that arrive while one runs go together in the
   * next, instead of each turn's few taking a statement (a plan and a commit) of their own.
   * Measured (bench/README.md): about five refreshes a statement instead of three, each
   * statement's round trip halved, the same refreshes per second.
   */
  protected override readonly mostWriting: number = 1;

  protected async write(batch: readonly Item[]): Promise<(Written | undefined)[]> {
    const seen = new Set<string>();
    const items = batch.filter((item) => !seen.has(item.hash) && seen.add(item.hash));
    const next = items.map(() => nextToken());
    const now = Date.now();
    const { rows } = await sql<PgClaimed>`
      with input as (
        select * from unnest(${items.map((i) => i.tenant.id)}::text[], ${items.map((i) => i.hash)}::text[],
          ${next.map((n) => n.hash)}::text[]) as i(tenant_id, hash, next_hash)
      ), found as (
        select i.hash, i.next_hash, r.tenant_id, s.id as session_id,
          s.expires_at as session_expires_at, s.created_at, s.last_used_at, s.amr,
          s.authenticated_at, u.id, u.email, u.name, u.metadata, u.roles, u.email_verified_at,
          u.disabled_at, u.created_at as user_created_at, u.updated_at
        from input i
        join refresh_tokens r on r.hash = i.hash and r.tenant_id = i.tenant_id
        join sessions s on s.id = r.session_id
        join users u on u.id = s.user_id
        where r.used_at is null and r.expires_at > ${now} and s.channel = 'server'
          and s.revoked_at is null and s.expires_at > ${now} and u.disabled_at is null
        for update of r
      ), claimed as (
        update refresh_tokens r set used_at = ${now} from found f
        where r.hash = f.hash and r.used_at is null
        returning r.hash
      ), touched as (
        update sessions s set last_used_at = ${now} from found f
        where s.id = f.session_id and f.last_used_at <= ${now - defaults.sessions.touchIntervalMs}
          and f.hash in (select hash from claimed)
      ), inserted as (
        insert into refresh_tokens (hash, session_id, tenant_id, created_at, expires_at, used_at)
        select f.next_hash, f.session_id, f.tenant_id, ${now}, f.session_expires_at, null
        from found f where f.hash in (select hash from claimed)
      )
      select * from found where hash in (select hash from claimed)
    `.execute(this.deps.db);
    const claimed = new Map(rows.map((row) => [row.hash, row]));
    const tokens = new Map(next.map((n, i) => [items[i]?.hash, n.refreshToken]));
    return batch.map((item, i) => {
      const row = claimed.get(item.hash);
      // A second copy of a token in the batch: handed over (the grace gives it a pair).
      if (!row || batch.findIndex((other) => other.hash === item.hash) !== i) return undefined;
      const user = toUser({
        ...row,
        tenant_id: row.tenant_id,
        created_at: row.user_created_at,
      } as unknown as UserRow);
      return {
        sessionId: row.session_id,
        refreshToken: tokens.get(item.hash) as string,
        user,
        authentication: authenticationOf(row),
      };
    });
  }
}

/** A row of the PostgreSQL batch's answer: a claimed token, its session and its user. */
interface PgClaimed {
  hash: string;
  tenant_id: string;
  session_id: string;
  created_at: number;
  amr: string | null;
  authenticated_at: number | null;
  id: string;
  email: string;
  name: string | null;
  metadata: string;
  roles: string;
  email_verified_at: number | null;
  disabled_at: number | null;
  user_created_at: number;
  updated_at: number;
}

/** The statements, prepared once (refresh-rotation.ts has their Kysely forms). */
function prepare(sqlite: SQLiteType.Database) {
  return {
    token: sqlite.prepare('select * from refresh_tokens where hash = ?'),
    session: sqlite.prepare('select * from sessions where id = ?'),
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
