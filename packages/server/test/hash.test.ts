/**
 * The one SHA-256 helper: stored token hashes, PKCE challenges and ETags depend on these
 * exact encodings, so a change here would orphan every stored hash.
 */
import { describe, expect, it } from 'vitest';
import { sha256Base64url, sha256Bytes, sha256Hex } from '../src/crypto/hash.js';

// FIPS 180-2 appendix B.1: SHA-256("abc").
const ABC_HEX = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';

describe('crypto/hash', () => {
  it('gives the standard digest in each encoding', () => {
    expect(sha256Hex('abc')).toBe(ABC_HEX);
    expect(sha256Bytes('abc').toString('hex')).toBe(ABC_HEX);
    expect(sha256Base64url('abc')).toBe(Buffer.from(ABC_HEX, 'hex').toString('base64url'));
    expect(sha256Base64url(Buffer.from('abc'))).toBe(sha256Base64url('abc'));
  });

  it('hashes strings as UTF-8', () => {
    expect(sha256Base64url('é')).toBe(sha256Base64url(Buffer.from([0xc3, 0xa9])));
  });

  it('makes the PKCE S256 challenge of RFC 7636 appendix B', () => {
    expect(sha256Base64url('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });
});
