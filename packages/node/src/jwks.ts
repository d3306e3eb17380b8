import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';

/** The key set is fetched again once it is this old, so a revoked key stops verifying. */
export const JWKS_MAX_AGE_MS = 60_000;
/** A token with a `kid` the set lacks fetches it again, at most this often. */
export const JWKS_COOLDOWN_MS = 30_000;
/** While the service cannot be reached, a set up to this old keeps verifying. */
export const JWKS_STALE_IF_ERROR_MS = 5 * 60_000;
const JWKS_TIMEOUT_MS = 5_000;

class JwksFetchFailed extends Error {
  override name = 'JwksFetchFailed';
}

/**
 * The tenant's key set, cached. jose's remote set keeps keys for 10 minutes, so a key the
 * service revoked would keep verifying that long; this one is refetched once it is a minute
 * old (the service's own max-age), and on a `kid` it lacks (a rotation) at most once per
 * cooldown, so unknown `kid`s cannot be used to hammer the service. A failed refetch keeps
 * the last set for a while: a hiccup of the service does not stop verification.
 */
export function cachedJwks(url: URL, fetchImpl: typeof globalThis.fetch): JWTVerifyGetKey {
  let keys: ReturnType<typeof createLocalJWKSet> | undefined;
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let attemptedAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<void> | undefined;

  const load = async () => {
    attemptedAt = Date.now();
    const res = await fetchImpl(url.href, {
      method: 'GET',
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(JWKS_TIMEOUT_MS),
    });
    if (res.status !== 200) throw new JwksFetchFailed(`The JWKS answered ${res.status}`);
    keys = createLocalJWKSet((await res.json()) as JSONWebKeySet);
    fetchedAt = Date.now();
  };
  const reload = () => {
    pending ??= load().finally(() => {
      pending = undefined;
    });
    return pending;
  };

  return async (header, token) => {
    const age = Date.now() - fetchedAt;
    if (keys === undefined || age >= JWKS_MAX_AGE_MS) {
      await reload().catch((error: unknown) => {
        if (keys === undefined || age >= JWKS_STALE_IF_ERROR_MS) throw error;
      });
    }
    const current = keys as NonNullable<typeof keys>;
    try {
      return await current(header, token);
    } catch (error) {
      const retry = error instanceof errors.JWKSNoMatchingKey;
      if (!retry || Date.now() - attemptedAt < JWKS_COOLDOWN_MS) throw error;
      await reload();
      return (keys as NonNullable<typeof keys>)(header, token);
    }
  };
}
