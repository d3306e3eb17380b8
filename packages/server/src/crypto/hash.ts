import { createHash } from 'node:crypto';

/**
 * How tokens we issue (refresh tokens, codes, link and cookie tokens, API keys) are stored:
 * they carry at least 256 random bits, so a fast unsalted hash suffices and lets a lookup
 * find the row by its hash.
 */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
