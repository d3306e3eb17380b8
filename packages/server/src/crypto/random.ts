import { randomFillSync } from 'node:crypto';

/**
 * Random bytes for tokens, drawn from the CSPRNG 4 KiB at a time (as node:crypto's own
 * randomUUID keeps a cache of random bytes): one call into OpenSSL serves 128 tokens, where
 * `randomBytes(32)` made one per token. Each byte is handed out once.
 */
const pool = Buffer.alloc(4096);
let offset = pool.length;

function draw(bytes: number, encoding: 'base64' | 'base64url'): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const text = pool.toString(encoding, offset, offset + bytes);
  offset += bytes;
  return text;
}

/** 256 random bits as base64url (43 characters): the body of a token we issue. */
export function randomToken(): string {
  return draw(32, 'base64url');
}

/**
 * 128 random bits as base64 (24 characters): a page's CSP nonce. One `randomBytes(16)`
 * per page cost a hosted sign-in about 40 µs of its main thread on a virtual machine.
 */
export function randomNonce(): string {
  return draw(16, 'base64');
}
