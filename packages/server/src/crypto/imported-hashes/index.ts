import { argon2i, argon2id } from './argon2.js';
import { bcrypt } from './bcrypt.js';
import { firebaseScrypt } from './firebase-scrypt.js';
import { pbkdf2Sha256 } from './pbkdf2.js';
import { scrypt } from './scrypt.js';
import type { HashVerifier } from './verifier.js';

export { firebaseScryptEncoded } from './firebase-scrypt.js';

/**
 * Password hashes brought in by `latchkey import` (docs/design.md §16), one file per
 * algorithm, each checked by a well-kept implementation. The `encoded` form of each:
 * - bcrypt: `$2a$`/`$2b$`/`$2y$` modular crypt (`$2b$10$<53 characters>`)
 * - argon2id, argon2i: the PHC string (`$argon2id$v=19$m=..,t=..,p=..$salt$hash`)
 * - scrypt: PHC (`$scrypt$ln=14,r=8,p=1$salt$key`, base64)
 * - pbkdf2-sha256: Django's (`pbkdf2_sha256$600000$salt$base64key`)
 * - firebase-scrypt: see firebase-scrypt.ts (`firebaseScryptEncoded`)
 */
const VERIFIERS = {
  bcrypt,
  argon2id,
  argon2i,
  scrypt,
  'pbkdf2-sha256': pbkdf2Sha256,
  'firebase-scrypt': firebaseScrypt,
} satisfies Record<string, HashVerifier>;

export type HashAlgorithm = keyof typeof VERIFIERS;

const verifierOf = (algorithm: string): HashVerifier | undefined =>
  Object.hasOwn(VERIFIERS, algorithm) ? VERIFIERS[algorithm as HashAlgorithm] : undefined;

/**
 * How an imported hash is stored in `users.password_hash`: `<algorithm>:<encoded>`. The
 * tenant's own hashes are argon2 PHC strings, which begin with `$`, so the two never mix;
 * undefined when the algorithm is unknown or the hash malformed (the user gets no password).
 */
export function storedImportedHash(algorithm: string, encoded: string): string | undefined {
  return verifierOf(algorithm)?.accepts(encoded) ? `${algorithm}:${encoded}` : undefined;
}

/** Whether a stored hash is an imported one, still to be replaced by the tenant's argon2id. */
export const isImportedHash = (stored: string): boolean => !stored.startsWith('$');

/** The algorithm and encoded form of a stored imported hash (for Latchkey's own export). */
export function splitImportedHash(stored: string): { algorithm: string; encoded: string } {
  const at = stored.indexOf(':');
  return { algorithm: stored.slice(0, at), encoded: stored.slice(at + 1) };
}

/**
 * Checks a password against a stored imported hash. The source systems did not normalise
 * passwords, Latchkey does (NFKC): the typed form is tried, then the normalised one if it
 * differs.
 */
export async function verifyImportedHash(stored: string, password: string): Promise<boolean> {
  const { algorithm, encoded } = splitImportedHash(stored);
  const verifier = verifierOf(algorithm);
  if (!verifier?.accepts(encoded)) return false;
  try {
    if (await verifier.verify(encoded, password)) return true;
    const normalised = password.normalize('NFKC');
    return normalised !== password && (await verifier.verify(encoded, normalised));
  } catch {
    return false;
  }
}
