import { hash, verify } from '@node-rs/argon2';

export interface Argon2Params {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
}

/**
 * argon2id (the library's default algorithm) computed on libuv's thread pool, so the
 * event loop stays free. NIST SP 800-63B section 5.1.1.2: passwords are NFKC-normalised
 * before hashing, so the same password typed on two keyboards verifies; nothing is cut.
 */
export function createPasswordHasher(params: Argon2Params): PasswordHasher {
  return {
    hash: (password) => hash(password.normalize('NFKC'), params),
    async verify(digest, password) {
      try {
        return await verify(digest, password.normalize('NFKC'));
      } catch {
        return false;
      }
    },
  };
}

/** Counts Unicode code points, not UTF-16 units: "🔑" is one character. */
export function codePointLength(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}
