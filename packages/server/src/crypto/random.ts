import { randomFillSync } from 'node:crypto';

/**
 * Random bytes for tokens, drawn from the CSPRNG 4 KiB at a time (as node:crypto's own
 * randomUUID keeps a cache of random bytes): one call into OpenSSL serves 128 tokens, where
 * `randomBytes(32)` made one per token. Each byte is handed out once.
 */
const pool = Buffer.alloc(4096);
let offset = pool.length;

/** 256 random bits as base64url (43 characters): the body of a token we issue. */
export function randomToken(): string {
  if (offset + 32 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const token = pool.toString('base64url', offset, offset + 32);
  offset += 32;
  return token;
}
