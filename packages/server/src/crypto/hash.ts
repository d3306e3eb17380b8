import { hash } from 'node:crypto';

// One-shot SHA-256 (strings as UTF-8): no Hash object per call (an API key is hashed on
// every request). The encodings are the ones stored and compared today: never change them.

/**
 * How tokens we issue (refresh tokens, codes, link and cookie tokens, API keys) are stored:
 * they carry at least 256 random bits, so a fast unsalted hash suffices and lets a lookup
 * find the row by its hash.
 */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/** SHA-256 as base64url: PKCE's S256 (RFC 7636 section 4.2), ETags, cache keys. */
export function sha256Base64url(value: string | Buffer): string {
  return hash('sha256', value, 'base64url');
}

/** SHA-256 as bytes: equal-length inputs for `timingSafeEqual`. */
export function sha256Bytes(value: string): Buffer {
  return hash('sha256', value, 'buffer');
}

/**
 * SHA-1 as upper-case hex, only to look a password up in a breached-password range API
 * (Have I Been Pwned's format), never to store or compare anything of ours.
 */
export function sha1HexUpper(value: string): string {
  return hash('sha1', value, 'hex').toUpperCase();
}
