/**
 * Access tokens are signed with node:crypto (crypto/jws.ts), not jose: the token must be the
 * exact compact JWS jose would make, and verify as one.
 */
import { generateKeyPairSync } from 'node:crypto';
import { CompactSign, compactVerify, decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { signRs256 } from '../src/crypto/jws.js';

describe('crypto/jws', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const header = { alg: 'RS256', typ: 'at+jwt', kid: 'k1' };
  const payload = { sub: 'u', email: 'é@example.com', roles: ['a'], iat: 1, exp: 601 };

  it("gives jose's compact JWS, byte for byte (RS256 signatures are deterministic)", async () => {
    const token = signRs256(header, payload, privateKey);
    const bytes = new TextEncoder().encode(JSON.stringify(payload));
    expect(token).toBe(await new CompactSign(bytes).setProtectedHeader(header).sign(privateKey));
  });

  it('verifies with the public key, with its header and claims as given', async () => {
    const token = signRs256(header, payload, privateKey);
    expect(decodeProtectedHeader(token)).toEqual(header);
    const { payload: signed } = await compactVerify(token, publicKey, { algorithms: ['RS256'] });
    expect(JSON.parse(new TextDecoder().decode(signed))).toEqual(payload);
    const [h, p, s] = token.split('.');
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: 'v' })).toString('base64url')}.${s}`;
    expect(p).not.toBe(tampered.split('.')[1]);
    await expect(compactVerify(tampered, publicKey)).rejects.toThrow();
  });
});
