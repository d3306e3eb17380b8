/** A bounded in-process map whose entries expire; the oldest entry goes first when full. */
export class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; expires: number }>();
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
  entry(key: string): { value: V; expires: number } | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /** `expiresAt` (epoch ms) shortens the entry's life below the cache's TTL. */
  set(key: string, value: V, readAt?: number, expiresAt = Number.POSITIVE_INFINITY): void {
    if (this.ttlMs <= 0 || (readAt !== undefined && readAt !== this.#generation)) return;
    this.#entries.delete(key);
    if (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(key, { value, expires: Math.min(Date.now() + this.ttlMs, expiresAt) });
  }

  get size(): number {
    return this.#entries.size;
  }

  delete(key: string): void {
    this.#generation++;
    this.#entries.delete(key);
  }

  /** Drops every entry whose value matches. */
  deleteWhere(match: (value: V) => boolean): void {
    this.#generation++;
    for (const [key, entry] of this.#entries) if (match(entry.value)) this.#entries.delete(key);
  }

  clear(): void {
    this.#generation++;
    this.#entries.clear();
  }
}
