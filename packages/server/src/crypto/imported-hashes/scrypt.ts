import { scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { boundedInt, fromBase64, phcParams } from './base64.js';
import type { HashVerifier } from './verifier.js';

const derive = (password: string, salt: Buffer, length: number, N: number, r: number, p: number) =>
  new Promise<Buffer>((resolve, reject) =>
    // maxmem: scrypt needs 128 * N * r bytes; parse() keeps that within 128 MiB.
    scryptCallback(password, salt, length, { N, r, p, maxmem: 256 * N * r + 1024 }, (e, key) =>
      e ? reject(e) : resolve(key),
    ),
  );

/** The PHC form (as passlib writes it): `$scrypt$ln=LOG2N,r=R,p=P$SALT$KEY`. */
function parse(encoded: string) {
  const parts = encoded.split('$');
  if (parts.length !== 5 || parts[0] !== '' || parts[1] !== 'scrypt') return undefined;
  const q = phcParams(parts[2] ?? '');
  const ln = boundedInt(q.get('ln'), 1, 20);
  const r = boundedInt(q.get('r'), 1, 32);
  const p = boundedInt(q.get('p'), 1, 16);
  const salt = fromBase64(parts[3] ?? '');
  const key = fromBase64(parts[4] ?? '');
  if (ln === undefined || r === undefined || p === undefined || !salt || !key) return undefined;
  if (key.length < 16 || key.length > 128 || 128 * 2 ** ln * r > 2 ** 27) return undefined;
  return { N: 2 ** ln, r, p, salt, key };
}

/** scrypt (node:crypto) in the PHC string form. */
export const scrypt: HashVerifier = {
  accepts: (encoded) => parse(encoded) !== undefined,
  async verify(encoded, password) {
    const q = parse(encoded);
    if (!q) return false;
    const key = await derive(password, q.salt, q.key.length, q.N, q.r, q.p);
    return timingSafeEqual(key, q.key);
  },
};
