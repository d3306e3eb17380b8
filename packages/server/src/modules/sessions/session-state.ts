import { isDeepStrictEqual } from 'node:util';
import type { Kysely } from 'kysely';
import type { InvalidationBus } from '../../cache/invalidation.js';
import { TtlCache } from '../../cache/ttl-cache.js';
import { defaults } from '../../config/defaults.js';
import type { Schema } from '../../storage/index.js';

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

export interface StateDeps {
  db: Kysely<Schema>;
  bus: InvalidationBus;
  /** Told whether each session-state look-up came from the cache. */
  onCacheLookup?: ((hit: boolean) => void) | undefined;
}

/** A cached state used within this of its entry's end is read again (see #refresh). */
const REFRESH_BEFORE_MS = defaults.sessions.stateCacheMs / 6;
/** States due to be read again are gathered this long, then read together. */
const REFRESH_GATHER_MS = 250;
/** Sessions per `… IN (…)`: well under SQLite's and PostgreSQL's parameter limits. */
const REFRESH_CHUNK = 500;

type StateRow = { user_id: string } & Pick<
  NonNullable<Awaited<ReturnType<typeof findSessionState>>>,
  'revoked_at' | 'disabled_at' | 'expires_at' | 'email' | 'roles'
>;

function stateOf(row: StateRow | undefined): SessionState {
  return {
    userId: row?.user_id ?? '',
    active:
      !!row && row.revoked_at === null && row.disabled_at === null && row.expires_at > Date.now(),
    user: Object.freeze({
      email: row?.email ?? '',
      roles: row ? (JSON.parse(row.roles) as string[]) : [],
    }),
  };
}

/** Whether a session is live, and its user's current e-mail and roles; cached. */
export class SessionStates {
  readonly #deps: StateDeps;
  /** sid -> state, only while the invalidation bus is live. */
  readonly #states = new TtlCache<SessionState>(defaults.sessions.stateCacheMs);
  /** States to be read again before their entry ends, by session id, with the cached state. */
  readonly #refreshing = new Map<string, SessionState>();
  #refreshTimer: NodeJS.Timeout | undefined;

  constructor(deps: StateDeps) {
    this.#deps = deps;
    deps.bus.onInvalidate((topic) => {
      if (topic === '*') return this.#states.clear();
      const [kind, id] = topic.split(':');
      if (kind === 'session' && id) this.#states.delete(id);
      if (kind === 'user' && id) this.#states.deleteWhere((s) => s.userId === id);
    });
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
    const state = stateOf(row);
    if (live && row) this.#states.set(sessionId, state, readAt);
    return state.active && state.userId === userId ? state.user : undefined;
  }

  /**
   * `state` answered from the cache alone, with no await (introspection's warm path);
   * null when the cache cannot answer. The session id is unique across tenants, and the
   * caller has already checked that the token belongs to its tenant.
   */
  cachedState(sessionId: string, userId: string): SessionUser | undefined | null {
    const entry = this.#deps.bus.live ? this.#states.entry(sessionId) : undefined;
    this.#deps.onCacheLookup?.(entry !== undefined);
    if (!entry) return null;
    const state = entry.value;
    if (entry.expires - Date.now() < REFRESH_BEFORE_MS) this.#refresh(sessionId, state);
    return state.active && state.userId === userId ? state.user : undefined;
  }

  /**
   * A state used near the end of its entry is read again meanwhile, as a busy key is
   * (KeyResolver): a thousand sessions first asked about within a second would otherwise
   * end together, and each of their next requests wait for its own query (issue 31). The
   * states due are gathered for `REFRESH_GATHER_MS` and read in one query per chunk; the
   * entry still comes from the database at least every `stateCacheMs`.
   */
  #refresh(sessionId: string, previous: SessionState): void {
    if (this.#refreshing.has(sessionId)) return;
    this.#refreshing.set(sessionId, previous);
    if (this.#refreshTimer) return;
    this.#refreshTimer = setTimeout(() => void this.#readAgain(), REFRESH_GATHER_MS);
    this.#refreshTimer.unref();
  }

  /** Reads the gathered states again (see #refresh); a session gone leaves the cache. */
  async #readAgain(): Promise<void> {
    this.#refreshTimer = undefined;
    const due = [...this.#refreshing];
    for (let i = 0; i < due.length; i += REFRESH_CHUNK) {
      const chunk = due.slice(i, i + REFRESH_CHUNK);
      const live = this.#deps.bus.live;
      const readAt = this.#states.generation;
      try {
        const rows = await findSessionStates(
          this.#deps.db,
          chunk.map(([id]) => id),
        );
        const found = new Map(rows.map((row) => [row.id, row]));
        // Every state found first: a deletion starts a new generation, which `set` refuses.
        if (live)
          for (const [id, previous] of chunk) {
            const row = found.get(id);
            if (!row) continue;
            // The same state while nothing changed: answers are kept by its user object.
            const now = stateOf(row);
            this.#states.set(id, isDeepStrictEqual(now, previous) ? previous : now, readAt);
          }
        for (const [id] of chunk) if (!found.has(id)) this.#states.delete(id);
      } catch {
        // The database is away: the entries end as they would have, then a use reads them.
      } finally {
        for (const [id] of chunk) this.#refreshing.delete(id);
      }
    }
  }
}

// ----- Rows -----

/** What introspection needs to know about a session, in one query. */
export async function findSessionState(db: Kysely<Schema>, tenantId: string, id: string) {
  return db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.user_id', 's.revoked_at', 's.expires_at', 'u.disabled_at', 'u.email', 'u.roles'])
    .where('s.tenant_id', '=', tenantId)
    .where('s.id', '=', id)
    .executeTakeFirst();
}

/** `findSessionState` for several sessions (by id alone: ids are unique), in one query. */
async function findSessionStates(db: Kysely<Schema>, ids: string[]) {
  return db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select([
      's.id',
      's.user_id',
      's.revoked_at',
      's.expires_at',
      'u.disabled_at',
      'u.email',
      'u.roles',
    ])
    .where('s.id', 'in', ids)
    .execute();
}
