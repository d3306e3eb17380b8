import { randomBytes, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Kysely } from 'kysely';
import { ReadAhead } from '../../cache/read-ahead.js';
import { type CacheEntry, TtlCache } from '../../cache/ttl-cache.js';
import { defaults, type Environment } from '../../config/defaults.js';
import { sha256Hex } from '../../crypto/hash.js';
import { LatchkeyError, validationFailed } from '../../errors/index.js';
import {
  type ApiKeyRow,
  type Publisher,
  type Schema,
  type TenantRow,
  transact,
} from '../../storage/index.js';
import { type PlanHandle, tenantPlan } from '../rate-limit/index.js';
import { getTenant, type Tenant, toTenant } from '../tenants/index.js';

export const SCOPES = ['users:read', 'users:write', 'sessions:write', 'tokens:introspect'] as const;
export type Scope = (typeof SCOPES)[number];
export type KeyKind = 'secret' | 'publishable';

export interface ApiKey {
  id: string;
  tenantId: string;
  kind: KeyKind;
  /** How the key is listed: prefix and last four characters, never the whole secret. */
  display: string;
  /** The whole key, for publishable keys only (they are public). */
  publishableKey: string | null;
  scopes: Scope[];
  name: string | null;
  createdAt: string;
  revokedAt: string | null;
  /** To the minute: written at most once a minute per key and process. */
  lastUsedAt: string | null;
}

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 43 base62 characters carry 256 bits; the contract asks for at least 192. */
const RANDOM_LENGTH = 43;

/** Unbiased base62: bytes of 248 and above (62 * 4) are dropped, not folded. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function keyPrefix(kind: KeyKind, environment: Environment): string {
  if (kind === 'secret') return environment === 'production' ? 'sk_prod_' : 'sk_test_';
  return environment === 'production' ? 'pk_live_' : 'pk_test_';
}

/** Keys carry 256 random bits, so a fast hash is the right one (no salt or stretching needed). */
export function hashKey(key: string): string {
  return sha256Hex(key);
}

/**
 * A kind or scope as read from the database, as this module's own constant where it is one.
 * Every request checks its key's kind and scope (`kind === 'secret'`, `scopes.includes`):
 * two equal strings that are one object compare at once, two copies by their characters,
 * and a thousand tenants' keys are a thousand copies, each a cache miss (issue 31).
 */
const CANONICAL = new Map<string, string>(
  [...SCOPES, 'secret', 'publishable'].map((name) => [name, name]),
);
const canonical = (name: string): string => CANONICAL.get(name) ?? name;

export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    kind: canonical(row.kind) as KeyKind,
    display: `${row.prefix}…${row.last4}`,
    publishableKey: row.publishable,
    scopes: row.scopes ? (row.scopes.split(' ').map(canonical) as Scope[]) : [],
    name: row.name,
    createdAt: new Date(row.created_at).toISOString(),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at).toISOString(),
    lastUsedAt: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
  };
}

export interface CreateKeyInput {
  kind: KeyKind;
  scopes?: string[];
  name?: string;
}

/** Creates a key; the returned `plaintext` is the only time a secret key is ever shown. */
export async function createKey(
  db: Kysely<Schema>,
  tenantId: string,
  input: CreateKeyInput,
): Promise<{ key: ApiKey; plaintext: string }> {
  const tenant = await getTenant(db, tenantId);
  if (input.kind === 'publishable' && input.scopes?.length) {
    throw validationFailed([
      {
        path: '/scopes',
        code: 'scopes_invalid',
        message: 'publishable keys carry no scopes; scopes are for secret keys',
      },
    ]);
  }
  const scopes = input.kind === 'secret' ? (input.scopes ?? [...SCOPES]) : [];
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length || (input.kind === 'secret' && scopes.length === 0)) {
    throw validationFailed([
      {
        path: '/scopes',
        code: 'scopes_invalid',
        message: `scopes must be one or more of ${SCOPES.join(', ')}`,
      },
    ]);
  }
  const random = randomBase62(RANDOM_LENGTH);
  const prefix = keyPrefix(input.kind, tenant.environment);
  const plaintext = prefix + random;
  const row: ApiKeyRow = {
    id: randomUUID(),
    tenant_id: tenant.id,
    kind: input.kind,
    hash: hashKey(plaintext),
    prefix: prefix + random.slice(0, 4),
    last4: random.slice(-4),
    publishable: input.kind === 'publishable' ? plaintext : null,
    scopes: [...new Set(scopes)].join(' '),
    name: input.name?.trim() || null,
    created_at: Date.now(),
    revoked_at: null,
    last_used_at: null,
  };
  await insertKey(db, row);
  return { key: toApiKey(row), plaintext };
}

export async function listKeys(db: Kysely<Schema>, tenantId: string): Promise<ApiKey[]> {
  await getTenant(db, tenantId);
  return (await listKeyRows(db, tenantId)).map(toApiKey);
}

/** Revokes a key; every instance's key cache forgets it as the transaction commits. */
export async function revokeKey(
  deps: { db: Kysely<Schema>; bus: Publisher },
  tenantId: string,
  keyId: string,
): Promise<ApiKey> {
  return transact(deps.db, deps.bus, async (tx) => {
    const row = await revokeKeyRow(tx.db, tenantId, keyId, Date.now());
    if (!row) throw new LatchkeyError('not_found', `No key ${keyId} on tenant ${tenantId}`);
    tx.invalidate(`key:${row.hash}`);
    return toApiKey(row);
  });
}

export interface KeyContext {
  key: ApiKey;
  tenant: Tenant;
}

const KEY_SHAPE = /^(sk_test_|sk_prod_|pk_test_|pk_live_)[0-9A-Za-z]{43}$/;

/** Where cached keys learn that keys or tenants changed. */
export interface KeyCacheBus {
  readonly live: boolean;
  onInvalidate(listener: (topic: string) => void): void;
}

/**
 * Resolves keys on every authenticated request; caches live keys (never misses) while
 * the bus can tell it about revocations and tenant changes, and asks the database otherwise.
 */
/** A cached key used within this of its entry's end is read again (see #readAhead). */
const REFRESH_BEFORE_MS = defaults.keyCacheMs / 6;

/** A key's use is written at most this often by one process (the key list's "last used"). */
const USE_WRITE_MS = 60_000;
/** Uses to write are gathered this long, then written together. */
const USE_FLUSH_MS = 1_000;
/**
 * Keys per UPDATE of their uses, the event loop turning between two: on a 10,000-tenant
 * SQLite file each row is a page of its own, and 500 rows held the loop 5 to 6 ms (every
 * request waiting), 100 rows 1.3 to 2.4 ms (issue 31). A write that sets off SQLite's WAL
 * checkpoint (every 1,000 pages) holds it 35 to 45 ms whatever its size.
 */
const USE_CHUNK = 100;

/**
 * A key read again (see KeyResolver's #refresh): the objects already cached where nothing
 * changed. A request finds its tenant's plan counters by the tenant's limits object
 * (planWindows), so a new but equal tenant every minute would start them over in new
 * records, a thousand busy tenants a thousand times a minute (issue 31).
 */
function unchanged(previous: KeyContext, found: { key: ApiKeyRow; tenant: TenantRow }): KeyContext {
  const key = toApiKey(found.key);
  const tenant = toTenant(found.tenant);
  const sameTenant = isDeepStrictEqual(previous.tenant, tenant);
  if (sameTenant && isDeepStrictEqual(previous.key, key)) return previous;
  return { key, tenant: sameTenant ? previous.tenant : tenant };
}

const SCOPE_BITS = Object.fromEntries(SCOPES.map((scope, i) => [scope, 1 << i])) as Record<
  Scope,
  number
>;

/** A scope's bit in `CachedKey.secretScopes`. */
export function scopeBit(scope: Scope): number {
  return SCOPE_BITS[scope];
}

/**
 * A cached key, with what the fast paths read of it in this one object (http/fast-path.ts):
 * a busy key's request finds it with one look-up and reads nothing else of the key's. A
 * thousand tenants' keys, contexts, scope lists and plan records were each a miss on that
 * tenant's memory, 0.1 to 0.3 us apiece per request (issue 31). It is the key's plan counter
 * handle too (its tenant's, `tenantPlan`).
 */
export interface CachedKey extends PlanHandle {
  readonly context: KeyContext;
  readonly tenant: Tenant;
  /** A secret key's scopes, one bit each (`scopeBit`); 0 for a publishable key. */
  readonly secretScopes: number;
  /** The key's hash, which the entry is cached under (see `#entries`). */
  readonly hash: string;
  /** When this process last recorded the key's use (see #used). */
  usedAt: number;
}

function toCachedKey(context: KeyContext, usedAt: number, hash: string): CachedKey {
  const { key, tenant } = context;
  // Its own copy of the tenant's counter key and windows (no other object to reach), and
  // its own slots: `consumeHeld` keeps every holder of one key on the same count.
  const { planKey, windows } = tenantPlan(tenant);
  return {
    context,
    tenant,
    secretScopes:
      key.kind === 'secret' ? key.scopes.reduce((bits, scope) => bits | scopeBit(scope), 0) : 0,
    hash,
    usedAt,
    planKey,
    windows,
    slots: undefined,
  };
}

export class KeyResolver {
  readonly #db: Kysely<Schema>;
  readonly #bus: KeyCacheBus;
  readonly #cache = new TtlCache<CachedKey>(defaults.keyCacheMs);
  /**
   * When this process last recorded each uncached key's use (no bus: every request reads
   * the key); a cached key keeps it on its entry, so that a busy key costs no look-up here.
   */
  readonly #touched = new Map<string, number>();
  /** Keys used since the last write of uses: written together (see flushUses). */
  #pendingUses = new Set<string>();
  #usesTimer: NodeJS.Timeout | undefined;
  /**
   * A key used near the end of its entry is read again meanwhile, so that a busy key never
   * waits for the database (a thousand keys cached together would end together).
   */
  readonly #readAhead: ReadAhead<CachedKey, { key: ApiKeyRow; tenant: TenantRow }>;
  /**
   * The cache entries of keys found live, by the key as presented: a busy key's request
   * finds its entry with one look-up, and is not hashed again (a SHA-256, about 3 % of a
   * warm introspection). An entry the cache has dropped (revoked, changed, ended) reads
   * `expires` 0; its value still names the hash to look the key up by again. Only live keys
   * come in (a stream of made-up keys adds nothing), at most as many as the key cache holds.
   */
  readonly #entries = new Map<string, CacheEntry<CachedKey>>();

  constructor(db: Kysely<Schema>, bus: KeyCacheBus) {
    this.#db = db;
    this.#bus = bus;
    this.#readAhead = new ReadAhead({
      cache: this.#cache,
      live: () => bus.live,
      beforeMs: REFRESH_BEFORE_MS,
      read: (hashes) => findLiveKeysByHashes(db, hashes),
      // The same record while nothing changed: the cache then keeps the same entry.
      renew: (found, previous) => {
        const context = unchanged(previous.context, found);
        if (context === previous.context) return previous;
        return toCachedKey(context, previous.usedAt, previous.hash);
      },
    });
    // A key's change drops that key, a tenant's its keys: rare for one tenant, but with
    // thousands of tenants frequent enough that dropping everything kept them all cold.
    bus.onInvalidate((topic) => {
      if (topic === '*') this.#cache.clear();
      else if (topic.startsWith('key:')) this.#cache.delete(topic.slice('key:'.length));
      else if (topic.startsWith('tenant:')) {
        const id = topic.slice('tenant:'.length);
        this.#cache.deleteWhere((cached) => cached.context.tenant.id === id);
      }
    });
  }

  async resolve(presented: string): Promise<KeyContext | undefined> {
    const cached = this.resolveCached(presented);
    if (cached !== null) return cached;
    const hash = hashKey(presented);
    const live = this.#bus.live;
    const readAt = this.#cache.generation;
    const found = await findLiveKeyByHash(this.#db, hash);
    if (!found) return undefined;
    const context = { key: toApiKey(found.key), tenant: toTenant(found.tenant) };
    const now = Date.now();
    const id = context.key.id;
    if (now - (this.#touched.get(id) ?? 0) >= USE_WRITE_MS) {
      // Bounded as the caches are: past 10,000 keys, those recorded over a minute ago go
      // (and if none is, all: at worst a key's use is written again within the minute).
      if (this.#touched.size >= 10_000) {
        for (const [key, at] of this.#touched)
          if (now - at >= USE_WRITE_MS) this.#touched.delete(key);
        if (this.#touched.size >= 10_000) this.#touched.clear();
      }
      this.#touched.set(id, now);
      this.#used(id);
    }
    const entry = live ? this.#cache.set(hash, toCachedKey(context, now, hash), readAt) : undefined;
    if (entry) this.#remember(presented, entry);
    return context;
  }

  /** See `#entries`. */
  #remember(presented: string, entry: CacheEntry<CachedKey>): void {
    if (this.#entries.size >= this.#cache.maxEntries) this.#entries.clear();
    this.#entries.set(presented, entry);
  }

  /**
   * `resolve` answered from memory alone, with no await (introspection's hot path):
   * undefined for a string that is not a key, null when only the database can answer.
   */
  resolveCached(presented: string): KeyContext | undefined | null {
    const held = this.cachedKey(presented);
    return held ? held.context : held;
  }

  /** `resolveCached` with the whole cached record (see CachedKey): the fast paths' look-up. */
  cachedKey(presented: string): CachedKey | undefined | null {
    // First: reading it may drop the whole cache (SQLite: another process wrote).
    const live = this.#bus.live;
    const now = Date.now();
    let cached = this.#entries.get(presented);
    if (cached === undefined || cached.expires <= now) {
      // Not seen, or dropped by the cache since: by its hash (known, or worked out).
      const hash =
        cached?.value.hash ?? (KEY_SHAPE.test(presented) ? hashKey(presented) : undefined);
      if (hash === undefined) return undefined;
      const found = live ? this.#cache.entry(hash) : undefined;
      if (!found) return null;
      this.#remember(presented, found);
      cached = found;
    } else if (!live) return null;
    const held = cached.value;
    if (now - held.usedAt >= USE_WRITE_MS) {
      held.usedAt = now;
      this.#used(held.context.key.id);
    }
    this.#readAhead.used(held.hash, cached, now);
    return held;
  }

  /**
   * Records a key's use for the key list. Uses are gathered for a second and written in one
   * statement (a thousand busy keys were a thousand commits a minute, each in the event loop
   * on SQLite); the time written is the write's, at most a second after the use.
   */
  #used(id: string): void {
    this.#pendingUses.add(id);
    if (this.#usesTimer) return;
    this.#usesTimer = setTimeout(() => void this.flushUses(), USE_FLUSH_MS);
    this.#usesTimer.unref();
  }

  /** Writes the uses gathered so far (at once; also as the server closes). */
  async flushUses(): Promise<void> {
    clearTimeout(this.#usesTimer);
    this.#usesTimer = undefined;
    const ids = [...this.#pendingUses];
    this.#pendingUses = new Set();
    const now = Date.now();
    for (let i = 0; i < ids.length; i += USE_CHUNK) {
      // The requests that came meanwhile are answered between two writes.
      if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const chunk = ids.slice(i, i + USE_CHUNK);
      await this.#db
        .updateTable('api_keys')
        .set({ last_used_at: now })
        .where('id', 'in', chunk)
        .execute()
        // Not written (the database is away): tried again at a use a minute later.
        .catch(() => {});
    }
  }

  /** A live publishable key (pk_…) and its tenant; undefined for anything else. */
  async resolvePublishable(presented: string): Promise<KeyContext | undefined> {
    const found = presented.startsWith('pk_') ? await this.resolve(presented) : undefined;
    return found?.key.kind === 'publishable' ? found : undefined;
  }
}

// ----- The api_keys table -----

export async function insertKey(db: Kysely<Schema>, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

export async function listKeyRows(db: Kysely<Schema>, tenantId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function revokeKeyRow(
  db: Kysely<Schema>,
  tenantId: string,
  keyId: string,
  at: number,
): Promise<ApiKeyRow | undefined> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .execute();
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', keyId)
    .executeTakeFirst();
}

/** Live keys joined with their tenants: a key's columns prefixed `k_`, the tenant's as they are. */
function liveKeysQuery(db: Kysely<Schema>) {
  return db
    .selectFrom('api_keys as k')
    .innerJoin('tenants as t', 't.id', 'k.tenant_id')
    .selectAll('t')
    .select([
      'k.id as k_id',
      'k.kind as k_kind',
      'k.hash as k_hash',
      'k.prefix as k_prefix',
      'k.last4 as k_last4',
      'k.publishable as k_publishable',
      'k.scopes as k_scopes',
      'k.name as k_name',
      'k.created_at as k_created_at',
      'k.revoked_at as k_revoked_at',
      'k.last_used_at as k_last_used_at',
    ])
    .where('k.revoked_at', 'is', null);
}

type LiveKeyRow = Awaited<ReturnType<ReturnType<typeof liveKeysQuery>['executeTakeFirstOrThrow']>>;

function splitLiveKey(row: LiveKeyRow): { key: ApiKeyRow; tenant: TenantRow } {
  const {
    k_id,
    k_kind,
    k_hash,
    k_prefix,
    k_last4,
    k_publishable,
    k_scopes,
    k_name,
    k_created_at,
    k_revoked_at,
    k_last_used_at,
    ...tenant
  } = row;
  return {
    key: {
      id: k_id,
      tenant_id: tenant.id,
      kind: k_kind,
      hash: k_hash,
      prefix: k_prefix,
      last4: k_last4,
      publishable: k_publishable,
      scopes: k_scopes,
      name: k_name,
      created_at: k_created_at,
      revoked_at: k_revoked_at,
      last_used_at: k_last_used_at,
    },
    tenant,
  };
}

/** The live key with this hash, and its tenant, in one query. */
export async function findLiveKeyByHash(
  db: Kysely<Schema>,
  hash: string,
): Promise<{ key: ApiKeyRow; tenant: TenantRow } | undefined> {
  const row = await liveKeysQuery(db).where('k.hash', '=', hash).executeTakeFirst();
  return row && splitLiveKey(row);
}

/** The live keys among these hashes, and their tenants, by hash, in one query. */
async function findLiveKeysByHashes(
  db: Kysely<Schema>,
  hashes: string[],
): Promise<Map<string, { key: ApiKeyRow; tenant: TenantRow }>> {
  const rows = await liveKeysQuery(db).where('k.hash', 'in', hashes).execute();
  return new Map(rows.map((row) => [row.k_hash, splitLiveKey(row)]));
}
