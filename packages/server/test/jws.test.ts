/**
 * Access tokens are signed with node:crypto (modules/sessions/access-token-sign.ts), not
 * jose: the token must be the exact compact JWS jose would make of the same header and
 * claims, and verify as one.
 */
import { generateKeyPairSync } from 'node:crypto';
import { CompactSign, compactVerify, decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { signAccessToken } from '../src/modules/sessions/access-token-sign.js';

describe('access token signing', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signer = { kid: 'k1', key: privateKey };
  const subject = {
    sessionId: 's1',
    user: { id: 'u1', email: 'é@example.com', roles: ['a'] },
    authentication: { amr: ['pwd'], authTime: 1 },
  };
  const sign = () => signAccessToken('https://iss', 'https://aud', 600, subject, 't1', signer);

  it("gives jose's compact JWS of the same header and claims, byte for byte (RS256 is deterministic)", async () => {
    const token = sign();
    const header = decodeProtectedHeader(token);
    expect(header).toEqual({ alg: 'RS256', typ: 'at+jwt', kid: 'k1' });
    const claims = decodeJwt(token);
    const bytes = new TextEncoder().encode(JSON.stringify(claims));
    const jose = new CompactSign(bytes).setProtectedHeader({
      alg: 'RS256',
      typ: 'at+jwt',
      kid: 'k1',
    });
    expect(token).toBe(await jose.sign(privateKey));
    expect(claims).toEqual({
      email: 'é@example.com',
      tid: 't1',
      sid: 's1',
      roles: ['a'],
      scope: 'openid email profile',
      client_id: 't1',
      amr: ['pwd'],
      auth_time: 1,
      iss: 'https://iss',
      aud: 'https://aud',
      sub: 'u1',
      iat: expect.any(Number),
      exp: (claims.iat as number) + 600,
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  });

  it('verifies with the public key, and not once a claim is changed', async () => {
    const token = sign();
    await expect(compactVerify(token, publicKey, { algorithms: ['RS256'] })).resolves.toBeTruthy();
    const [h, , s] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...decodeJwt(token), sub: 'u2' })).toString(
      'base64url',
    );
    await expect(compactVerify(`${h}.${forged}.${s}`, publicKey)).rejects.toThrow();
    expect(sign()).not.toBe(token); // a new jti each time
  });
});
