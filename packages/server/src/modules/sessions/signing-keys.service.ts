import {
  createPrivateKey,
  createPublicKey,
  type JsonWebKeyInput,
  type KeyObject,
  randomUUID,
} from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import type { InvalidationBus } from '../../cache/invalidation.js';
import { TtlCache } from '../../cache/ttl-cache.js';
import { defaults } from '../../config/defaults.js';
import type { SealedStore, SecretBox } from '../../crypto/secret-box.js';
import { LatchkeyError } from '../../errors/index.js';
import type { Schema, SigningKeyRow } from '../../storage/index.js';

export const SIGNING_ALG = 'RS256';
const { jwks, verifierCooldownSeconds } = defaults.signingKeys;
/**
 * A rotated-in key is published this long before it signs: the JWKS max-age plus
 * stale-while-revalidate plus the refetch cooldown of common verifiers (120 s by default).
 * Sooner, a verifier holding a fresh copy of the old JWKS would refuse the new tokens.
 */
export const DEFAULT_ACTIVATION_DELAY_SECONDS =
  jwks.maxAgeSeconds + jwks.staleWhileRevalidateSeconds + verifierCooldownSeconds;

/** The key that signs a tenant's new tokens: its kid and private key. */
export interface ActiveKey {
  kid: string;
  key: KeyObject;
}

export interface PublicJwk extends JWK {
  kid: string;
  alg: string;
  use: string;
}

export interface VerificationKey {
  key: KeyObject;
  /** Epoch ms after which the key no longer verifies; null while it is neither retired nor revoked. */
  publishUntil: number | null;
}

export interface SigningKeyInfo {
  kid: string;
  createdAt: string;
  activatesAt: string;
  retiredAt: string | null;
  publishUntil: string | null;
}

/**
 * One RS256 key pair per tenant. Private keys are stored sealed with the master secret;
 * a retired key stays published until every token it signed has expired.
 */
/** A key verifies until the end of its publication (null: no end yet). */
function usable(entry: VerificationKey): VerificationKey | undefined {
  return entry.publishUntil === null || entry.publishUntil > Date.now() ? entry : undefined;
}

export class SigningKeys {
  readonly #db: Kysely<Schema>;
  readonly #box: SecretBox;
  /** Keys never change once written, so caching them by kid is always safe. */
  readonly #private = new TtlCache<KeyObject>(defaults.signingKeys.privateCacheMs, 1000);
  /**
   * Each tenant's signing key, for a few seconds (until it retires, if sooner), so that a
   * token's signature needs no query. A revocation drops it at once (the bus); a rotation
   * makes its new key sign at most that long after it activates, well within the time the
   * retired key stays published (defaults.signingKeys.retiredGraceMs).
   */
  readonly #active = new TtlCache<ActiveKey>(defaults.signingKeys.activeCacheMs, 10_000);
  /** node:crypto KeyObjects, made once per key: verifying is the hot path of introspection. */
  readonly #public = new TtlCache<VerificationKey>(defaults.signingKeys.publicCacheMs, 10_000);
  readonly #bus: InvalidationBus | undefined;

  constructor(db: Kysely<Schema>, box: SecretBox, bus?: InvalidationBus) {
    this.#db = db;
    this.#box = box;
    this.#bus = bus;
    bus?.onInvalidate((topic) => {
      if (topic === '*') {
        this.#public.clear();
        this.#active.clear();
      } else if (topic.startsWith('signing-key:')) {
        // `signing-key:<tenant>/<kid>` (a rotation or revocation): that key and that tenant's
        // signing key only, so other tenants stay warm.
        const named = topic.slice('signing-key:'.length);
        this.#public.delete(named);
        this.#active.delete(named.split('/', 1)[0] as string);
      }
    });
  }

  async #create(tenantId: string, activatesAt: number): Promise<SigningKeyRow> {
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, {
      modulusLength: 2048,
      extractable: true,
    });
    const kid = randomUUID();
    const publicJwk: PublicJwk = {
      ...(await exportJWK(publicKey)),
      kid,
      alg: SIGNING_ALG,
      use: 'sig',
    };
    const row: SigningKeyRow = {
      id: kid,
      tenant_id: tenantId,
      algorithm: SIGNING_ALG,
      public_jwk: JSON.stringify(publicJwk),
      private_jwe: await this.#box.seal(
        JSON.stringify(await exportJWK(privateKey)),
        ...sealedAs(tenantId, kid),
      ),
      created_at: Date.now(),
      activates_at: activatesAt,
      retired_at: null,
      publish_until: null,
    };
    await insertKey(this.#db, row);
    return row;
  }

  /**
   * The key that signs new tokens; the first is made on first use. (Two instances racing
   * to make it may both succeed: both keys are published and the newest signs.)
   */
  async active(tenantId: string): Promise<ActiveKey> {
    const cached = this.#active.get(tenantId);
    if (cached) return cached;
    const readAt = this.#active.generation;
    const row = await this.#activeRow(tenantId);
    let key = this.#private.get(row.id);
    if (!key) {
      const jwk = await this.#privateJwk(tenantId, row);
      key = createPrivateKey({ key: jwk as JsonWebKeyInput['key'], format: 'jwk' });
      this.#private.set(row.id, key);
    }
    const active = { kid: row.id, key };
    this.#active.set(tenantId, active, readAt, row.retired_at ?? Number.POSITIVE_INFINITY);
    return active;
  }

  /** The signing key from memory alone (a hot path's): undefined when only `active` knows. */
  activeCached(tenantId: string): ActiveKey | undefined {
    return this.#active.get(tenantId);
  }

  /**
   * The signing key as a private JWK with its `kid`, `alg` and `use`, for node-oidc-provider's
   * keystore (docs/design.md §14), which signs ID tokens and access tokens with it.
   */
  async activeJwk(tenantId: string): Promise<JWK & { kid: string }> {
    const row = await this.#activeRow(tenantId);
    return {
      ...(await this.#privateJwk(tenantId, row)),
      kid: row.id,
      alg: SIGNING_ALG,
      use: 'sig',
    };
  }

  async #activeRow(tenantId: string): Promise<SigningKeyRow> {
    const now = Date.now();
    return (await findSigningKey(this.#db, tenantId, now)) ?? (await this.#create(tenantId, now));
  }

  async #privateJwk(tenantId: string, row: SigningKeyRow): Promise<JWK> {
    return JSON.parse(await this.#box.open(row.private_jwe, ...sealedAs(tenantId, row.id))) as JWK;
  }

  /**
   * The public key for `kid`, looked up within this tenant only, and until when it
   * verifies (null: while it is not retired or revoked).
   */
  async verificationKey(tenantId: string, kid: string): Promise<VerificationKey | undefined> {
    const cached = this.cachedVerificationKey(tenantId, kid);
    if (cached !== null) return cached;
    const readAt = this.#public.generation;
    const row = await findKey(this.#db, tenantId, kid);
    if (!row) return undefined;
    const jwk = JSON.parse(row.public_jwk) as JWK & { kty: string };
    const entry = {
      key: createPublicKey({ key: jwk, format: 'jwk' }),
      publishUntil: row.publish_until,
    };
    this.#public.set(`${tenantId}/${kid}`, entry, readAt);
    return usable(entry);
  }

  /**
   * `verificationKey` answered from memory alone, with no await (introspection's hot
   * path); null when only the database can answer.
   */
  cachedVerificationKey(tenantId: string, kid: string): VerificationKey | undefined | null {
    // Reading `live` lets the bus notice a revocation made by another process (SQLite).
    const cached = this.#bus?.live === false ? undefined : this.#public.get(`${tenantId}/${kid}`);
    return cached ? usable(cached) : null;
  }

  /**
   * For a key that may have leaked: it stops verifying and leaves the JWKS at once (every
   * token it signed turns inactive), and if it was signing, a new key signs from now on.
   */
  async revoke(tenantId: string, kid: string): Promise<{ revoked: string; signing: string }> {
    const row = await findKey(this.#db, tenantId, kid);
    if (!row) throw new LatchkeyError('not_found', `No signing key ${kid} on tenant ${tenantId}`);
    const now = Date.now();
    await revokeKeyRow(this.#db, tenantId, kid, now);
    const signing =
      (await findSigningKey(this.#db, tenantId, now)) ?? (await this.#create(tenantId, now));
    await this.#bus?.publish(`signing-key:${tenantId}/${kid}`);
    return { revoked: kid, signing: signing.id };
  }

  async jwks(tenantId: string): Promise<{ keys: PublicJwk[] }> {
    let rows = await publishedKeys(this.#db, tenantId, Date.now());
    // Tenants get their key at creation; one made before that gets it here, so that no
    // verifier ever loads an empty key set.
    if (rows.length === 0) {
      await this.active(tenantId);
      rows = await publishedKeys(this.#db, tenantId, Date.now());
    }
    return { keys: rows.map((r) => JSON.parse(r.public_jwk) as PublicJwk) };
  }

  async list(tenantId: string): Promise<SigningKeyInfo[]> {
    const rows = await publishedKeys(this.#db, tenantId, Date.now());
    return rows.map((r) => ({
      kid: r.id,
      createdAt: new Date(r.created_at).toISOString(),
      activatesAt: new Date(r.activates_at).toISOString(),
      retiredAt: r.retired_at === null ? null : new Date(r.retired_at).toISOString(),
      publishUntil: r.publish_until === null ? null : new Date(r.publish_until).toISOString(),
    }));
  }

  /**
   * Publishes a new key at once and lets it sign after `delaySeconds` (0 for an emergency);
   * the old key signs until then and stays published until its last token has expired.
   */
  async rotate(
    tenantId: string,
    tokenTtlSeconds: number,
    delaySeconds = DEFAULT_ACTIVATION_DELAY_SECONDS,
  ): Promise<{ kid: string; activatesAt: string; retired: string | null }> {
    const previous = await findNewestKey(this.#db, tenantId);
    const activatesAt = Date.now() + delaySeconds * 1000;
    await retireKeys(
      this.#db,
      tenantId,
      activatesAt,
      activatesAt + tokenTtlSeconds * 1000 + defaults.signingKeys.retiredGraceMs,
    );
    const row = await this.#create(tenantId, activatesAt);
    // Every instance forgets the signing key it kept: the old one retires at `activatesAt`.
    await this.#bus?.publish(`signing-key:${tenantId}/${row.id}`);
    return {
      kid: row.id,
      activatesAt: new Date(activatesAt).toISOString(),
      retired: previous?.id ?? null,
    };
  }
}

// ----- The signing_keys table -----

/** What a private key is sealed for: the SecretBox purpose and subject. */
export const sealedAs = (tenantId: string, kid: string) =>
  ['signing-key', `${tenantId}/${kid}`] as const;

/** Every tenant's private keys, sealed with the master secret. */
export const sealedSigningKeys: SealedStore = {
  what: 'signing keys',
  async list(db) {
    const rows = await db
      .selectFrom('signing_keys')
      .select(['id', 'tenant_id', 'private_jwe'])
      .orderBy('created_at', 'desc')
      .execute();
    return rows.map((r) => {
      const [purpose, subject] = sealedAs(r.tenant_id, r.id);
      return { id: r.id, jwe: r.private_jwe, purpose, subject };
    });
  },
  async replace(db, id, jwe) {
    await db.updateTable('signing_keys').set({ private_jwe: jwe }).where('id', '=', id).execute();
  },
};

/** The key that signs at `now`: the newest one already activated and not yet retired. */
export async function findSigningKey(
  db: Kysely<Schema>,
  tenantId: string,
  now: number,
): Promise<SigningKeyRow | undefined> {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('activates_at', '<=', now)
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', now)]))
    .orderBy('activates_at', 'desc')
    .orderBy('id')
    .executeTakeFirst();
}

/** The newest key that is not retired (the current signer, or the next one waiting). */
export async function findNewestKey(
  db: Kysely<Schema>,
  tenantId: string,
): Promise<SigningKeyRow | undefined> {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('retired_at', 'is', null)
    .orderBy('activates_at', 'desc')
    .executeTakeFirst();
}

export async function findKey(
  db: Kysely<Schema>,
  tenantId: string,
  kid: string,
): Promise<SigningKeyRow | undefined> {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', kid)
    .executeTakeFirst();
}

/** Keys to publish: the active one and retired ones whose tokens may still be live. */
export async function publishedKeys(
  db: Kysely<Schema>,
  tenantId: string,
  now: number,
): Promise<SigningKeyRow[]> {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('publish_until', '>', now)]))
    .orderBy('created_at', 'desc')
    .execute();
}

export async function insertKey(db: Kysely<Schema>, row: SigningKeyRow): Promise<void> {
  await db.insertInto('signing_keys').values(row).execute();
}

/** Stops a key now: no longer signing, verifying or published. */
export async function revokeKeyRow(
  db: Kysely<Schema>,
  tenantId: string,
  kid: string,
  at: number,
): Promise<void> {
  await db
    .updateTable('signing_keys')
    .set({ retired_at: at, publish_until: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', kid)
    .execute();
}

/** Retires every unretired key at `at` (the moment the next key starts signing). */
export async function retireKeys(
  db: Kysely<Schema>,
  tenantId: string,
  at: number,
  publishUntil: number,
): Promise<void> {
  await db
    .updateTable('signing_keys')
    .set({ retired_at: at, publish_until: publishUntil })
    .where('tenant_id', '=', tenantId)
    .where('retired_at', 'is', null)
    .execute();
}
