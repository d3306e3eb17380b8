import type Provider from 'oidc-provider';
import { TtlCache } from '../../cache/ttl-cache.js';
import { defaults } from '../../config/defaults.js';
import type { Tenant } from '../tenants/index.js';
import { createTenantProvider, type ProviderDeps } from './provider.js';

/** Where the registry learns that a tenant's keys or settings changed. */
interface ProviderBus {
  onInvalidate(listener: (topic: string) => void): void;
}

/**
 * One node-oidc-provider per tenant (docs/design.md §14), built on first use (about 1 ms and
 * 40 KB) and kept for `defaults.oauth.providerCacheMs`, at most `maxProviders` of them.
 * A provider holds the tenant's signing key, so a key rotation or revocation
 * (`signing-key:{tid}/…`) or a change of the tenant (`tenant:{tid}`) drops it at once; the
 * TTL bounds what an instance without the bus can miss, and stays within the grace period
 * that a retired key is still published for. Everything else a request needs (apps, TTLs,
 * the audience) is read per request.
 */
export class OAuthProviders {
  readonly #deps: ProviderDeps;
  readonly #cache = new TtlCache<Promise<Provider>>(
    defaults.oauth.providerCacheMs,
    defaults.oauth.maxProviders,
  );

  constructor(deps: ProviderDeps, bus?: ProviderBus) {
    this.#deps = deps;
    bus?.onInvalidate((topic) => {
      if (topic === '*') return this.#cache.clear();
      const tenantId = /^(?:signing-key|tenant):([^/]+)/.exec(topic)?.[1];
      if (tenantId) this.#cache.delete(tenantId);
    });
  }

  /** The tenant's provider; concurrent first requests share one build. */
  get(tenant: Tenant): Promise<Provider> {
    const cached = this.#cache.get(tenant.id);
    if (cached) return cached;
    const built = createTenantProvider(this.#deps, tenant);
    this.#cache.set(tenant.id, built);
    built.catch(() => {
      if (this.#cache.get(tenant.id) === built) this.#cache.delete(tenant.id);
    });
    return built;
  }
}
