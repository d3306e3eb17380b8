import { pbkdf2, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { boundedInt, fromBase64 } from './base64.js';
import type { HashVerifier } from './verifier.js';

const derive = promisify(pbkdf2);

/** Django's form: `pbkdf2_sha256$<iterations>$<salt>$<base64 of the 32-byte key>`. */
function parse(encoded: string) {
  const [name, rounds, salt, digest, ...rest] = encoded.split('$');
  if (name !== 'pbkdf2_sha256' || rest.length > 0 || !salt) return undefined;
  // Django 5 uses about a million; three times that is the most a check may cost.
  const iterations = boundedInt(rounds, 1, 3_000_000);
  const key = fromBase64(digest ?? '');
  if (iterations === undefined || !key || key.length < 16 || key.length > 64) return undefined;
  return { iterations, salt, key };
}

/** PBKDF2-HMAC-SHA256 (node:crypto) in Django's format, as Clerk and Django keep it. */
export const pbkdf2Sha256: HashVerifier = {
  accepts: (encoded) => parse(encoded) !== undefined,
  async verify(encoded, password) {
    const p = parse(encoded);
    if (!p) return false;
    const key = await derive(password, p.salt, p.iterations, p.key.length, 'sha256');
    return timingSafeEqual(key, p.key);
  },
};
