import type { Kysely } from 'kysely';
import { TtlCache } from '../../cache/ttl-cache.js';
import { defaults } from '../../config/defaults.js';
import type { AppRow, AppType, Schema } from '../../storage/index.js';
import type { KeyCacheBus } from '../keys/index.js';
import { type Tenant, toTenant } from '../tenants/index.js';
import { isAppId, secretMatches } from './apps.service.js';

/** An app that authenticated with its client secret, and the tenant it belongs to. */
export interface AppCaller {
  app: { id: string; type: AppType };
  tenant: Tenant;
}

interface CachedApp extends AppCaller {
  firstParty: boolean;
  secrets: Pick<AppRow, 'secret_hash' | 'previous_secret_hash' | 'previous_secret_expires_at'>;
}

/**
 * Apps as introspection meets them (docs/design.md §14): as its caller (RFC 7662 section
 * 2.1, the app's client credentials) and as the subject of a client-credentials token. Like
 * `KeyResolver` it caches the apps it finds (never a miss) for `defaults.keyCacheMs`, only
 * while the bus can tell it that one was deleted or got a new secret (`app:{tid}/{id}`,
 * published by `deleteApp` and `rotateAppSecret`), and asks the database otherwise. The
 * previous secret's grace is checked against the clock on every use, so it ends on time
 * from the cache too.
 */
export class AppCredentials {
  readonly #db: Kysely<Schema>;
  readonly #bus: KeyCacheBus;
  readonly #cache = new TtlCache<CachedApp>(defaults.keyCacheMs);

  constructor(db: Kysely<Schema>, bus: KeyCacheBus) {
    this.#db = db;
    this.#bus = bus;
    // App and tenant changes are rare operator actions: drop everything.
    bus.onInvalidate((topic) => {
      if (topic === '*' || topic.startsWith('app:') || topic.startsWith('tenant:'))
        this.#cache.clear();
    });
  }

  /**
   * The confidential app (`web`, `m2m`) whose client secret this is; undefined otherwise.
   * Only an operator's (first-party) app: one that registered itself (RFC 7591, anyone may
   * while registration is on) must not spend the tenant's plan at introspection.
   */
  async authenticate(clientId: string, secret: string): Promise<AppCaller | undefined> {
    const found = await this.#find(clientId);
    if (!found?.firstParty || !secretMatches(found.secrets, secret)) return undefined;
    return { app: found.app, tenant: found.tenant };
  }

  /**
   * Whether `appId` is an m2m app of the tenant, from memory alone (introspection's hot
   * path): null when only the database can answer.
   */
  cachedIsM2m(tenantId: string, appId: string): boolean | null {
    if (!isAppId(appId)) return false;
    const cached = this.#cached(appId);
    return cached ? isM2m(cached, tenantId) : null;
  }

  /** Whether `appId` is an m2m app of the tenant. */
  async isM2m(tenantId: string, appId: string): Promise<boolean> {
    const found = await this.#find(appId);
    return found !== undefined && isM2m(found, tenantId);
  }

  #cached(appId: string): CachedApp | undefined {
    return this.#bus.live ? this.#cache.get(appId) : undefined;
  }

  async #find(appId: string): Promise<CachedApp | undefined> {
    if (!isAppId(appId)) return undefined;
    const cached = this.#cached(appId);
    if (cached) return cached;
    const live = this.#bus.live;
    const readAt = this.#cache.generation;
    const row = await this.#db
      .selectFrom('apps as a')
      .innerJoin('tenants as t', 't.id', 'a.tenant_id')
      .selectAll('t')
      .select([
        'a.id as a_id',
        'a.type as a_type',
        'a.first_party as a_first_party',
        'a.secret_hash as a_secret_hash',
        'a.previous_secret_hash as a_previous_secret_hash',
        'a.previous_secret_expires_at as a_previous_secret_expires_at',
      ])
      .where('a.id', '=', appId)
      .executeTakeFirst();
    if (!row) return undefined;
    const {
      a_id,
      a_type,
      a_first_party,
      a_secret_hash,
      a_previous_secret_hash,
      a_previous_secret_expires_at,
      ...tenant
    } = row;
    const found: CachedApp = {
      app: { id: a_id, type: a_type },
      firstParty: a_first_party === 1,
      tenant: toTenant(tenant),
      secrets: {
        secret_hash: a_secret_hash,
        previous_secret_hash: a_previous_secret_hash,
        previous_secret_expires_at: a_previous_secret_expires_at,
      },
    };
    if (live) this.#cache.set(appId, found, readAt);
    return found;
  }
}

const isM2m = (found: CachedApp, tenantId: string) =>
  found.tenant.id === tenantId && found.app.type === 'm2m';
