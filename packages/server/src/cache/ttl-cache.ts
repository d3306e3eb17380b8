/** An entry as `entry` and `set` hand it out. */
export interface CacheEntry<V> {
  readonly value: V;
  /** When it ends (epoch ms); 0 once the cache has dropped it (see `TtlCache`). */
  readonly expires: number;
}

interface HeldEntry<V> {
  value: V;
  expires: number;
}

/**
 * A bounded in-process map whose entries expire; the oldest entry goes first when full.
 *
 * An entry handed out may be kept and used again while its `expires` is ahead: the cache
 * sets it to 0 when it drops the entry (a deletion, a new value, eviction, clear), so a
 * holder never uses a value the cache no longer holds. Setting the same value again keeps
 * the entry and moves its end. So a caller can find an entry by something other than its
 * key with one look-up of its own (KeyResolver finds a key's entry by the key as presented).
 */
export class TtlCache<V> {
  readonly #entries = new Map<string, HeldEntry<V>>();
  #generation = 0;

  /**
   * Bumped by every invalidation. Read it before a database read and pass it to `set`:
   * an answer read before an invalidation arrived is then never cached.
   */
  get generation(): number {
    return this.#generation;
  }

  constructor(
    readonly ttlMs: number,
    readonly maxEntries = 10_000,
  ) {}

  get(key: string): V | undefined {
    return this.entry(key)?.value;
  }

  /** The value and when it ends (epoch ms), for a caller that reads it again before then. */
  entry(key: string): CacheEntry<V> | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /**
   * `expiresAt` (epoch ms) shortens the entry's life below the cache's TTL. Returns the
   * entry, or undefined when it was not cached (a read from before an invalidation).
   */
  set(
    key: string,
    value: V,
    readAt?: number,
    expiresAt = Number.POSITIVE_INFINITY,
  ): CacheEntry<V> | undefined {
    if (this.ttlMs <= 0 || (readAt !== undefined && readAt !== this.#generation)) return;
    const expires = Math.min(Date.now() + this.ttlMs, expiresAt);
    const previous = this.#entries.get(key);
    if (previous !== undefined) {
      this.#entries.delete(key);
      // The same value again: the same entry, with its new end (and last in line).
      if (previous.value === value) {
        previous.expires = expires;
        this.#entries.set(key, previous);
        return previous;
      }
      previous.expires = 0;
    }
    if (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.entries().next().value;
      if (oldest !== undefined) {
        oldest[1].expires = 0;
        this.#entries.delete(oldest[0]);
      }
    }
    const entry = { value, expires };
    this.#entries.set(key, entry);
    return entry;
  }

  get size(): number {
    return this.#entries.size;
  }

  delete(key: string): void {
    this.#generation++;
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    entry.expires = 0;
    this.#entries.delete(key);
  }

  /** Drops every entry whose value matches. */
  deleteWhere(match: (value: V) => boolean): void {
    this.#generation++;
    for (const [key, entry] of this.#entries)
      if (match(entry.value)) {
        entry.expires = 0;
        this.#entries.delete(key);
      }
  }

  clear(): void {
    this.#generation++;
    for (const entry of this.#entries.values()) entry.expires = 0;
    this.#entries.clear();
  }
}
