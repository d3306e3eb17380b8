import { verify } from '@node-rs/argon2';
import { boundedInt, fromBase64, phcParams } from './base64.js';
import type { HashVerifier } from './verifier.js';

/** The PHC string form that argon2's reference implementation writes. */
function argon2(variant: 'argon2id' | 'argon2i'): HashVerifier {
  return {
    accepts(encoded) {
      const parts = encoded.split('$');
      if (parts.length !== 6 || parts[0] !== '' || parts[1] !== variant) return false;
      if (parts[2] !== 'v=19' && parts[2] !== 'v=16') return false;
      const p = phcParams(parts[3] ?? '');
      // Up to 128 MiB and 16 passes: a check must not become a denial of service.
      return (
        boundedInt(p.get('m'), 8, 131_072) !== undefined &&
        boundedInt(p.get('t'), 1, 16) !== undefined &&
        boundedInt(p.get('p'), 1, 16) !== undefined &&
        fromBase64(parts[4] ?? '') !== undefined &&
        fromBase64(parts[5] ?? '') !== undefined
      );
    },
    async verify(encoded, password) {
      try {
        return await verify(encoded, password);
      } catch {
        return false;
      }
    },
  };
}

export const argon2id = argon2('argon2id');
export const argon2i = argon2('argon2i');
