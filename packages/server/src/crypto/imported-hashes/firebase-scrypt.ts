import { FirebaseScrypt } from 'firebase-scrypt';
import { boundedInt, fromBase64, phcParams } from './base64.js';
import type { HashVerifier } from './verifier.js';

/**
 * Firebase's modified scrypt carries the project's parameters in each hash (they are the
 * same for every user of a project, and needed for each check):
 * `$firebase-scrypt$rounds=<r>,mem=<log2 N>$<salt separator>$<signer key>$<salt>$<hash>`,
 * every value in base64 as Firebase's console and `auth:export` give them.
 */
function parse(encoded: string) {
  const parts = encoded.split('$');
  if (parts.length !== 7 || parts[0] !== '' || parts[1] !== 'firebase-scrypt') return undefined;
  const q = phcParams(parts[2] ?? '');
  const rounds = boundedInt(q.get('rounds'), 1, 32);
  const memCost = boundedInt(q.get('mem'), 1, 20);
  const [saltSeparator = '', signerKey = '', salt = '', hash = ''] = parts.slice(3);
  if (rounds === undefined || memCost === undefined) return undefined;
  if (128 * 2 ** memCost * rounds > 2 ** 25) return undefined; // node's scrypt maxmem (32 MiB)
  if (
    ![signerKey, salt, hash].every((v) => fromBase64(v)) ||
    !/^[A-Za-z0-9+/_=-]*$/.test(saltSeparator)
  )
    return undefined;
  return { rounds, memCost, saltSeparator, signerKey, salt, hash };
}

/** The form above from Firebase's fields (the Firebase parser, tests). */
export function firebaseScryptEncoded(v: {
  rounds: number;
  memCost: number;
  saltSeparator: string;
  signerKey: string;
  salt: string;
  hash: string;
}): string {
  return `$firebase-scrypt$rounds=${v.rounds},mem=${v.memCost}$${v.saltSeparator}$${v.signerKey}$${v.salt}$${v.hash}`;
}

/** Checked by the `firebase-scrypt` package (scrypt and AES-256-CTR from node:crypto). */
export const firebaseScrypt: HashVerifier = {
  accepts: (encoded) => parse(encoded) !== undefined,
  async verify(encoded, password) {
    const q = parse(encoded);
    if (!q || password === '') return false;
    const scrypt = new FirebaseScrypt({
      memCost: q.memCost,
      rounds: q.rounds,
      saltSeparator: q.saltSeparator,
      signerKey: q.signerKey,
    });
    return scrypt.verify(password, q.salt, q.hash);
  },
};
