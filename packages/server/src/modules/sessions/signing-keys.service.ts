import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import { TtlCache } from '../../cache/ttl-cache.js';
import type { SecretBox } from '../../crypto/secret-box.js';
import type { Schema, SigningKeyRow } from '../../storage/index.js';
import {
  findKey,
  findNewestKey,
  findSigningKey,
  insertKey,
  publishedKeys,
  retireKeys,
} from './signing-keys.repository.js';

export const SIGNING_ALG = 'RS256';
/** Tokens are accepted a little past `exp` on clocks that drift; keys outlive that too. */
const RETIRED_KEY_GRACE_MS = 5 * 60_000;
/**
 * A rotated-in key is published this long before it signs: the JWKS max-age (60 s) plus
 * stale-while-revalidate (30 s) plus the refetch cooldown of common verifiers (jose: 30 s).
 * Sooner, a verifier holding a fresh copy of the old JWKS would refuse the new tokens.
 */
export const DEFAULT_ACTIVATION_DELAY_SECONDS = 120;

type Key = Exclude<Awaited<ReturnType<typeof importJWK>>, Uint8Array>;

export interface PublicJwk extends JWK {
  kid: string;
  alg: string;
  use: string;
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
export class SigningKeys {
  readonly #db: Kysely<Schema>;
  readonly #box: SecretBox;
  /** Keys never change once written, so caching them by kid is always safe. */
  readonly #private = new TtlCache<Key>(60 * 60_000, 1000);
  readonly #public = new TtlCache<Key>(10 * 60_000, 10_000);

  constructor(db: Kysely<Schema>, box: SecretBox) {
    this.#db = db;
    this.#box = box;
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
        'signing-key',
        `${tenantId}/${kid}`,
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
  async active(tenantId: string): Promise<{ kid: string; key: Key }> {
    const now = Date.now();
    const row =
      (await findSigningKey(this.#db, tenantId, now)) ?? (await this.#create(tenantId, now));
    let key = this.#private.get(row.id);
    if (!key) {
      const jwk = JSON.parse(
        await this.#box.open(row.private_jwe, 'signing-key', `${tenantId}/${row.id}`),
      ) as JWK;
      key = (await importJWK(jwk, SIGNING_ALG)) as Key;
      this.#private.set(row.id, key);
    }
    return { kid: row.id, key };
  }

  /** The public key for `kid`, looked up within this tenant only. */
  async verificationKey(tenantId: string, kid: string): Promise<Key | undefined> {
    const id = `${tenantId}/${kid}`;
    const cached = this.#public.get(id);
    if (cached) return cached;
    const row = await findKey(this.#db, tenantId, kid);
    if (!row) return undefined;
    if (row.publish_until !== null && row.publish_until <= Date.now()) return undefined;
    const key = (await importJWK(JSON.parse(row.public_jwk) as JWK, SIGNING_ALG)) as Key;
    this.#public.set(id, key);
    return key;
  }

  async jwks(tenantId: string): Promise<{ keys: PublicJwk[] }> {
    const rows = await publishedKeys(this.#db, tenantId, Date.now());
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
      activatesAt + tokenTtlSeconds * 1000 + RETIRED_KEY_GRACE_MS,
    );
    const row = await this.#create(tenantId, activatesAt);
    return {
      kid: row.id,
      activatesAt: new Date(activatesAt).toISOString(),
      retired: previous?.id ?? null,
    };
  }
}
