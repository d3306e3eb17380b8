import { isDeepStrictEqual } from 'node:util';
import type { Kysely } from 'kysely';
import type { InvalidationBus } from '../../cache/invalidation.js';
import { ReadAhead } from '../../cache/read-ahead.js';
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

/** A cached state used within this of its entry's end is read again (see #readAhead). */
const REFRESH_BEFORE_MS = defaults.sessions.stateCacheMs / 6;

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
  /**
   * A state used near the end of its entry is read again meanwhile, as a busy key is: a
   * thousand sessions first asked about within a second would otherwise end together, and
   * each of their next requests wait for a query of its own (issue 31).
   */
  readonly #readAhead: ReadAhead<SessionState, StateRow>;

  constructor(deps: StateDeps) {
    this.#deps = deps;
    this.#readAhead = new ReadAhead({
      cache: this.#states,
      live: () => deps.bus.live,
      beforeMs: REFRESH_BEFORE_MS,
      read: async (ids) =>
        new Map<string, StateRow>(
          (await findSessionStates(deps.db, ids)).map((row) => [row.id, row]),
        ),
      // The same state while nothing changed: answers are kept by its user object.
      renew: (row, previous) => {
        const now = stateOf(row);
        return isDeepStrictEqual(now, previous) ? previous : now;
      },
    });
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
    this.#readAhead.used(sessionId, entry, Date.now());
    const state = entry.value;
    return state.active && state.userId === userId ? state.user : undefined;
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
