/**
 * Random values drawn from one pooled CSPRNG buffer (crypto/random.ts): the sizes and
 * alphabets their users rely on (a token's 256 bits as base64url, a CSP nonce's 128 bits
 * as base64), and no value handed out twice across the pool's refills.
 */
import { describe, expect, it } from 'vitest';
import { randomNonce, randomToken } from '../src/crypto/random.js';

describe('pooled random values', () => {
  it('gives tokens and nonces of their sizes, never the same twice across refills', () => {
    const seen = new Set<string>();
    // 10,000 of each, interleaved: the 4 KiB pool is refilled about 370 times.
    for (let i = 0; i < 10_000; i++) {
      const token = randomToken();
      const nonce = randomNonce();
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token, 'base64url')).toHaveLength(32);
      expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
      expect(Buffer.from(nonce, 'base64')).toHaveLength(16);
      seen.add(token).add(nonce);
    }
    expect(seen.size).toBe(20_000);
  });
});
