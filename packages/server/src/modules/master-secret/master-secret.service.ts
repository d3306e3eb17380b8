import type { Kysely } from 'kysely';
import { ConfigError, type SecretSource, writeSecretFile } from '../../config/config.js';
import { type Sealed, type SealedStore, SecretBox } from '../../crypto/secret-box.js';
import { type Schema, transact } from '../../storage/index.js';
import { sealedTotpSecrets } from '../mfa/index.js';
import { sealedSigningKeys } from '../sessions/index.js';
import { sealedProviderSecrets } from '../social/index.js';
import { sealedWebhookSecrets } from '../webhooks/index.js';

/** Everything sealed with the master secret, by the module that owns it. */
const STORES: SealedStore[] = [
  sealedSigningKeys,
  sealedProviderSecrets,
  sealedTotpSecrets,
  sealedWebhookSecrets,
];

/** The check value: sealed when the database first meets a secret, opened at every start. */
const CHECK = ['master-secret', 'check'] as const;
const CHECK_PLAINTEXT = 'latchkey';

export interface MasterSecret {
  secret: string;
  secretSource: SecretSource;
}

/** How the operator named the secret that failed, for the messages below. */
function named(source: SecretSource): string {
  return source.kind === 'env' ? 'LATCHKEY_SECRET' : `the secret in ${source.path}`;
}

function wrongSecret(source: SecretSource, what: string): ConfigError {
  const where =
    source.kind === 'env'
      ? 'Set LATCHKEY_SECRET to the secret they were sealed with'
      : `Set LATCHKEY_SECRET, or put back in ${source.path}, the secret they were sealed with`;
  return new ConfigError(
    `${named(source)} does not open the ${what} sealed in this database: it is not the master secret they were sealed with. ${where}. Latchkey does not start with another one, nor replace a sealed key (to change the secret: latchkey secret rotate; if an older version started with two secrets and sealed values with each, run it with the other in LATCHKEY_PREVIOUS_SECRET).`,
  );
}

function lostSecret(path: string, what: string): ConfigError {
  return new ConfigError(
    `LATCHKEY_SECRET is not set and ${path} does not exist, but this database holds ${what} sealed with a master secret. Set LATCHKEY_SECRET to that secret, or restore ${path} (keep it apart from the database backup). Latchkey does not make a new secret for a database that has one.`,
  );
}

/** Opens a sealed value with the first of `boxes` that can; undefined when none can. */
async function openWithAny(boxes: SecretBox[], sealed: Sealed): Promise<string | undefined> {
  for (const box of boxes) {
    const plaintext = await box
      .open(sealed.jwe, sealed.purpose, sealed.subject)
      .catch(() => undefined);
    if (plaintext !== undefined) return plaintext;
  }
  return undefined;
}

/** The first kind of sealed value that none of `boxes` opens, or none. */
async function unopened(db: Kysely<Schema>, boxes: SecretBox[]): Promise<string | undefined> {
  for (const store of STORES)
    for (const sealed of await store.list(db))
      if ((await openWithAny(boxes, sealed)) === undefined) return store.what;
  return undefined;
}

async function anySealed(db: Kysely<Schema>): Promise<string | undefined> {
  for (const store of STORES) if ((await store.list(db)).length > 0) return store.what;
  return undefined;
}

const checkOf = (jwe: string): Sealed => ({
  id: 'check',
  jwe,
  purpose: CHECK[0],
  subject: CHECK[1],
});

/**
 * The master secret's box, once the database agrees to it. Refused (ConfigError, which
 * names LATCHKEY_SECRET or the file): a secret that does not open the database's check
 * value; a new secret (none set, no file) for a database that holds sealed values. On a
 * database that has no check value yet (a new one, or one from before the check), every
 * sealed value must open; then the check value is written, and a new secret's file.
 */
export async function openMasterSecret(
  db: Kysely<Schema>,
  { secret, secretSource }: MasterSecret,
  warn: (message: string) => void,
): Promise<SecretBox> {
  const box = new SecretBox(secret);
  const row = await db.selectFrom('master_secret').select('check_jwe').executeTakeFirst();
  if (row) {
    if (secretSource.kind === 'new') throw lostSecret(secretSource.path, 'signing keys');
    if ((await openWithAny([box], checkOf(row.check_jwe))) !== CHECK_PLAINTEXT)
      throw wrongSecret(secretSource, 'signing keys and provider secrets');
    return box;
  }
  if (secretSource.kind === 'new') {
    const what = await anySealed(db);
    if (what) throw lostSecret(secretSource.path, what);
    // Written before the database is tied to it: a secret is never in use and nowhere kept.
    try {
      writeSecretFile(secretSource.path, secret);
    } catch (error) {
      throw new ConfigError(
        `LATCHKEY_SECRET is not set, and the new secret could not be written to ${secretSource.path} (${(error as Error).message}). Set LATCHKEY_SECRET, or make that folder writable; if another process wrote the file just now, start again.`,
      );
    }
    warn(
      `LATCHKEY_SECRET is not set; generated one into ${secretSource.path}. Keep that file, apart from the database backup (it encrypts signing keys and provider secrets), or set LATCHKEY_SECRET in production.`,
    );
  } else {
    const what = await unopened(db, [box]);
    if (what) throw wrongSecret(secretSource, what);
  }
  // Two processes meeting a new database at once: the first check value written stands.
  await db
    .insertInto('master_secret')
    .values({
      id: 1,
      check_jwe: await box.seal(CHECK_PLAINTEXT, ...CHECK),
      created_at: Date.now(),
      rotated_at: null,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  // Checked as every later start will be: another process may have written its value first.
  const kept: SecretSource =
    secretSource.kind === 'new' ? { kind: 'file', path: secretSource.path } : secretSource;
  return openMasterSecret(db, { secret, secretSource: kept }, warn);
}

/**
 * Seals everything again under `next`, in one transaction (all or nothing): every signing
 * key, every provider secret, and the check value. Each must open with one of `current`
 * (the current secret, and a previous one for a database that an older version sealed
 * with two); anything that none opens stops it before anything is written. Instances must
 * be stopped: one still running with the old secret would seal new values with it.
 */
export async function rotateMasterSecret(
  db: Kysely<Schema>,
  current: SecretBox[],
  next: string,
): Promise<Record<string, number>> {
  const to = new SecretBox(next);
  const counts: Record<string, number> = {};
  await transact(db, { publish: async () => {} }, async (tx) => {
    const row = await tx.db.selectFrom('master_secret').select('check_jwe').executeTakeFirst();
    if (row && (await openWithAny(current, checkOf(row.check_jwe))) !== CHECK_PLAINTEXT)
      throw new ConfigError(
        'LATCHKEY_SECRET does not open the check value of this database: it is not its master secret, and nothing was changed.',
      );
    for (const store of STORES) {
      const all = await store.list(tx.db);
      for (const sealed of all) {
        const plaintext = await openWithAny(current, sealed);
        if (plaintext === undefined)
          throw new ConfigError(
            `Some ${store.what} open with neither LATCHKEY_SECRET nor LATCHKEY_PREVIOUS_SECRET; nothing was changed.`,
          );
        await store.replace(
          tx.db,
          sealed.id,
          await to.seal(plaintext, sealed.purpose, sealed.subject),
        );
      }
      counts[store.what] = all.length;
    }
    const check = await to.seal(CHECK_PLAINTEXT, ...CHECK);
    const now = Date.now();
    await tx.db
      .insertInto('master_secret')
      .values({ id: 1, check_jwe: check, created_at: now, rotated_at: now })
      .onConflict((oc) => oc.column('id').doUpdateSet({ check_jwe: check, rotated_at: now }))
      .execute();
  });
  return counts;
}
