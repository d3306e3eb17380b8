import type { InvalidationBus } from '../../cache/invalidation.js';
import { TtlCache } from '../../cache/ttl-cache.js';

/** What a verified token proved: its tenant and claims. The session is checked on every use. */
export interface VerifiedToken<C> {
  tenantId: string;
  claims: C;
}

/**
 * How many characters of a token's end (its signature's) the map is keyed by. The key only
 * finds the entry: the entry keeps the whole token and answers only for that exact string.
 */
const KEY_CHARS = 32;

/**
 * A number made of a token's last characters (its signature's): how a token verified once
 * is remembered without keeping it (a small integer: no allocation). Another token with the
 * same number only gets kept a verification early.
 */
function markOf(token: string): number {
  let mark = 0;
  for (let i = Math.max(0, token.length - 8); i < token.length; i++)
    mark = (Math.imul(mark, 31) + token.charCodeAt(i)) | 0;
  return mark & 0x3fffffff;
}

/**
 * Tokens whose signature and claims passed, so that a token seen again skips RSA. An entry
 * answers only for the exact token it was verified as (never a part of it: a cached signature
 * must not vouch for another payload). It is found by the last 32 characters of the token,
 * part of its RS256 signature, and then the whole string is compared: a SHA-256 of the
 * token (1,100 characters) cost 1.4 µs a request, more than JavaScript's own hash of it
 * (about 3 ns a character); the tail's hash and the comparison cost about 0.25 µs. Another
 * token with the same tail is a miss, verified as any new token. Each entry keeps its
 * token, about 1 KB: at most `maxEntries` of them.
 *
 * An entry lives until the token's `exp` or its key's end of publication, whichever comes
 * first, and at most `ttlMs`; the map holds at most `maxEntries` (the oldest goes first).
 * A revoked (or rotated) signing key drops its tenant's tokens, any change the bus reports
 * that it cannot name empties it; while the bus is down it is not used.
 */
export class VerifiedTokens<C> {
  readonly #bus: InvalidationBus;
  readonly #cache: TtlCache<VerifiedToken<C> & { token: string }>;
  /** Tokens verified once and not kept (see `keep`), by `markOf`; at most as many as the cache. */
  readonly #once = new Set<number>();

  constructor(bus: InvalidationBus, options: { ttlMs: number; maxEntries: number }) {
    this.#bus = bus;
    this.#cache = new TtlCache(options.ttlMs, options.maxEntries);
    bus.onInvalidate((topic) => {
      if (topic === '*') return this.#cache.clear();
      // `signing-key:<tenant>/<kid>`: that tenant's tokens go, the other tenants' stay (with
      // thousands of tenants, one revocation must not send every token back to RSA).
      if (!topic.startsWith('signing-key:')) return;
      const tenantId = topic.slice('signing-key:'.length).split('/')[0];
      if (tenantId) this.#cache.deleteWhere((entry) => entry.tenantId === tenantId);
      else this.#cache.clear();
    });
  }

  get size(): number {
    return this.#cache.size;
  }

  /** Read before verifying; an invalidation in between keeps the answer out of the cache. */
  get generation(): number {
    return this.#cache.generation;
  }

  /** The entry of exactly this token, if it was verified and is still valid. */
  get(token: string): VerifiedToken<C> | undefined {
    if (!this.#bus.live) return undefined;
    const entry = this.#cache.get(token.slice(-KEY_CHARS));
    return entry?.token === token ? entry : undefined;
  }

  /**
   * A token just verified is kept from its second verification on: the first only marks it.
   * A token asked about once (a service that checks each token once, a scan of stolen or
   * forged ones, a burst of new sign-ins) then costs no entry: it neither pushes the tokens
   * in use out of the cache nor lives on in memory, where keeping it (1 KB and its claims)
   * and dropping it later cost the garbage collector more than its verification costs again.
   * A token in use is verified twice instead of once in its life, then answered from memory.
   */
  keep(token: string, entry: VerifiedToken<C>, readAt: number, expiresAt: number): void {
    const mark = markOf(token);
    if (this.#once.delete(mark)) {
      this.set(token, entry, readAt, expiresAt);
      return;
    }
    if (this.#once.size >= this.#cache.maxEntries) this.#once.clear();
    this.#once.add(mark);
  }

  /** `expiresAt`: epoch ms when the token stops being valid (exp, or its key's end). */
  set(token: string, entry: VerifiedToken<C>, readAt: number, expiresAt: number): void {
    if (this.#bus.live)
      this.#cache.set(
        token.slice(-KEY_CHARS),
        { tenantId: entry.tenantId, claims: entry.claims, token },
        readAt,
        expiresAt,
      );
  }
}
