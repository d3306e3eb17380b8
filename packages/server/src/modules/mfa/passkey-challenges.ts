import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import { sha256Hex } from '../../crypto/hash.js';
import { LatchkeyError } from '../../errors/index.js';
import type { Schema } from '../../storage/index.js';

/**
 * The challenges of the passkey ceremonies (docs/design.md §13): random, stored by their
 * SHA-256, each for one tenant, one purpose and (a registration) one user, live
 * `defaults.passkeys.challengeLifetimeMs`, spent once.
 */

type Purpose = 'register' | 'authenticate';

/** A ceremony refused: what the person is told, and why in the log (`cause`). */
export const refused = (message: string, cause?: unknown) =>
  new LatchkeyError('invalid_credentials', message, { cause });

/** A new challenge of `purpose`, stored by its hash; the browser signs its base64url form. */
export async function newChallenge(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string | null,
  purpose: Purpose,
): Promise<Uint8Array<ArrayBuffer>> {
  const bytes = new Uint8Array(randomBytes(32));
  const now = Date.now();
  await db
    .insertInto('passkey_challenges')
    .values({
      hash: sha256Hex(Buffer.from(bytes).toString('base64url')),
      tenant_id: tenantId,
      user_id: userId,
      purpose,
      created_at: now,
      expires_at: now + defaults.passkeys.challengeLifetimeMs,
      used_at: null,
    })
    .execute();
  return bytes;
}

/**
 * The challenge a response signed, if it is ours, for this purpose (and user), live and
 * unused. SimpleWebAuthn asks before it checks the signature, so this only looks: the
 * challenge is used up (`claimChallenge`) once the response has proved itself, and a forged
 * response cannot spend someone else's.
 */
export function challengeCheck(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string | null,
  purpose: Purpose,
) {
  const signed = { challenge: '' };
  const where = (challenge: string) => {
    let q = db
      .selectFrom('passkey_challenges')
      .select('hash')
      .where('hash', '=', sha256Hex(challenge))
      .where('tenant_id', '=', tenantId)
      .where('purpose', '=', purpose)
      .where('used_at', 'is', null)
      .where('expires_at', '>', Date.now());
    q = userId === null ? q.where('user_id', 'is', null) : q.where('user_id', '=', userId);
    return q;
  };
  return {
    signed,
    expectedChallenge: async (challenge: string) => {
      signed.challenge = challenge;
      return (await where(challenge).executeTakeFirst()) !== undefined;
    },
  };
}

/**
 * Uses up a challenge, once: WebAuthn Level 3 section 13.4.3, a challenge is accepted
 * once. Of two responses that raced with one challenge, one gets it.
 */
export async function claimChallenge(db: Kysely<Schema>, challenge: string): Promise<void> {
  const claimed = await db
    .updateTable('passkey_challenges')
    .set({ used_at: Date.now() })
    .where('hash', '=', sha256Hex(challenge))
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) !== 1)
    throw refused('This passkey request was used already. Try again.');
}
