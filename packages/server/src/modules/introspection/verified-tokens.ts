import type { InvalidationBus } from '../../cache/invalidation.js';
import { TtlCache } from '../../cache/ttl-cache.js';
import { sha256Base64url } from '../../crypto/hash.js';

/** What a verified token proved: its tenant and claims. The session is checked on every use. */
export interface VerifiedToken<C> {
  tenantId: string;
  claims: C;
}

/**
 * Tokens whose signature and claims passed, keyed by the SHA-256 of the whole token (never
 * a part of it: a cached signature must not vouch for another payload), so that a token
 * seen again skips RSA. An entry lives until the token's `exp` or its key's end of
 * publication, whichever comes first, and at most `ttlMs`; the map holds at most
 * `maxEntries` (the oldest goes first). A revoked signing key drops its tenant's tokens,
 * any change the bus reports that it cannot name empties it; while the bus is down it is
 * not used.
 */
export class VerifiedTokens<C> {
  readonly #bus: InvalidationBus;
  readonly #cache: TtlCache<VerifiedToken<C>>;

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

  /** The digest a token is cached under. */
  static digest(token: string): string {
    return sha256Base64url(token);
  }

  get size(): number {
    return this.#cache.size;
  }

  /** Read before verifying; an invalidation in between keeps the answer out of the cache. */
  get generation(): number {
    return this.#cache.generation;
  }

  get(digest: string): VerifiedToken<C> | undefined {
    return this.#bus.live ? this.#cache.get(digest) : undefined;
  }

  /** `expiresAt`: epoch ms when the token stops being valid (exp, or its key's end). */
  set(digest: string, entry: VerifiedToken<C>, readAt: number, expiresAt: number): void {
    if (this.#bus.live) this.#cache.set(digest, entry, readAt, expiresAt);
  }
}
