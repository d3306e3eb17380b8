import { hash } from 'node:crypto';

/**
 * How tokens we issue (refresh tokens, codes, link and cookie tokens, API keys) are stored:
 * they carry at least 256 random bits, so a fast unsalted hash suffices and lets a lookup
 * find the row by its hash.
 */
export function sha256Hex(value: string): string {
  // One-shot: no Hash object per call (an API key is hashed on every request).
  return hash('sha256', value, 'hex');
}
