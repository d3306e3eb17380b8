import type { Kysely } from 'kysely';
import type { SealedStore } from '../../crypto/secret-box.js';
import type { Schema, SigningKeyRow } from '../../storage/index.js';

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
