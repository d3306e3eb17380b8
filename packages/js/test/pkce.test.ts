import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { base64url, randomString, s256 } from '../src/pkce.js';

describe('PKCE (RFC 7636)', () => {
  it('makes 43-character base64url verifiers, different each time', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const v = randomString();
      expect(v).toMatch(/^[A-Za-z0-9_-]{43}$/);
      seen.add(v);
    }
    expect(seen.size).toBe(100);
  });

  it('S256 is base64url(sha256(verifier)) without padding', async () => {
    for (let i = 0; i < 20; i++) {
      const v = randomString();
      expect(await s256(v)).toBe(createHash('sha256').update(v).digest('base64url'));
    }
    expect(await s256('dBjftJeZ4CVP-mJ92K9qCNXH6l3H1bxTEq4HCmtc2xo')).toBe(
      'ao3rBpcEAldoYBom2FwUkpHJddc-bTVolCvYQy_2Jd8',
    );
  });

  it('base64url has no +, / or = whatever the bytes', () => {
    expect(base64url(new Uint8Array([0xfb, 0xff, 0xbf]))).toBe('-_-_');
    expect(base64url(new Uint8Array([0xff]))).toBe('_w');
    expect(base64url(new Uint8Array([]))).toBe('');
  });
});
