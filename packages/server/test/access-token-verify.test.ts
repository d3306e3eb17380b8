/**
 * The JWT rules of the introspection hot path (node:crypto, not jose), pinned one by one:
 * each case is a token jose's jwtVerify with our options refused, or one we refuse on
 * purpose; the genuine token passes.
 */
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { parseAccessToken, verifyAccessToken } from '../src/modules/sessions/index.js';

const ISSUER = 'http://127.0.0.1:1/t/tenant';
const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
const NOW = Math.floor(Date.now() / 1000);

const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** A compact JWS over exactly these header and payload texts, RS256 with `key`. */
function jws(header: unknown, payload: unknown, key: KeyObject = privateKey): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${sign('RSA-SHA256', Buffer.from(input), key).toString('base64url')}`;
}

const HEADER = { alg: 'RS256', typ: 'at+jwt', kid: 'k1' };
const CLAIMS = {
  iss: ISSUER,
  sub: 'user',
  jti: 'id',
  iat: NOW,
  exp: NOW + 600,
  tid: 'tenant',
};

function check(token: string, key: KeyObject = publicKey, now = NOW) {
  const parsed = parseAccessToken(token, 'RS256');
  return parsed && verifyAccessToken(parsed, key, ISSUER, now);
}

describe('access token verification (node:crypto)', () => {
  it('passes a genuine token, including one signed by jose', async () => {
    expect(check(jws(HEADER, CLAIMS))).toEqual(CLAIMS);
    const byJose = await new SignJWT({ tid: 'tenant' })
      .setProtectedHeader(HEADER)
      .setIssuer(ISSUER)
      .setSubject('user')
      .setJti('id')
      .setIssuedAt(NOW)
      .setExpirationTime(NOW + 600)
      .sign(privateKey);
    expect(check(byJose)).toMatchObject({ sub: 'user', exp: NOW + 600 });
  });

  it('judges a header it has already passed the same way again, and per algorithm', () => {
    const token = jws(HEADER, CLAIMS);
    expect(parseAccessToken(token, 'RS256')?.kid).toBe('k1');
    // The same header text, now kept: another algorithm still refuses it.
    expect(parseAccessToken(token, 'ES256')).toBeUndefined();
    expect(parseAccessToken(token, 'RS256')?.kid).toBe('k1');
    // More headers than are kept: each is still read right, the first included.
    for (let i = 0; i < 1100; i++)
      expect(parseAccessToken(`${b64({ ...HEADER, kid: `k${i}` })}.e30.c2ln`, 'RS256')?.kid).toBe(
        `k${i}`,
      );
    expect(check(token)).toEqual(CLAIMS);
    // A refused header is refused every time.
    const crit = jws({ ...HEADER, crit: ['b64'] }, CLAIMS);
    expect(parseAccessToken(crit, 'RS256')).toBeUndefined();
    expect(parseAccessToken(crit, 'RS256')).toBeUndefined();
  });

  it('is active until the second of exp and not after; nbf is honoured', () => {
    const token = jws(HEADER, CLAIMS);
    expect(check(token, publicKey, NOW + 599)).toBeDefined();
    expect(check(token, publicKey, NOW + 600)).toBeUndefined();
    const later = jws(HEADER, { ...CLAIMS, nbf: NOW + 10 });
    expect(check(later, publicKey, NOW + 9)).toBeUndefined();
    expect(check(later, publicKey, NOW + 10)).toBeDefined();
  });

  const genuine = jws(HEADER, CLAIMS);
  const [h, p, s] = genuine.split('.') as [string, string, string];
  const cases: Record<string, string> = {
    'another key': jws(HEADER, CLAIMS, other.privateKey),
    'a changed payload under the old signature': `${h}.${b64({ ...CLAIMS, sub: 'admin' })}.${s}`,
    'a signature with junk appended': `${genuine}AA`,
    'a signature with a character too many (4n+1)': `${genuine}A`,
    'base64 padding': `${h}.${p}.${s}==`,
    'standard base64 characters': `${h}.${p}.${s.replace(/[-_]/g, (c) => (c === '-' ? '+' : '/'))}x`,
    'four parts': `${genuine}.x`,
    'two parts': `${h}.${p}`,
    'an empty signature': `${h}.${p}.`,
    'alg none': `${b64({ ...HEADER, alg: 'none' })}.${p}.`,
    'alg RS512': jws({ ...HEADER, alg: 'RS512' }, CLAIMS),
    'typ JWT': jws({ ...HEADER, typ: 'JWT' }, CLAIMS),
    'typ application/at+jwt': jws({ ...HEADER, typ: 'application/at+jwt' }, CLAIMS),
    'no typ': jws({ alg: 'RS256', kid: 'k1' }, CLAIMS),
    'a crit header': jws({ ...HEADER, crit: ['b64'], b64: false }, CLAIMS),
    'no kid': jws({ alg: 'RS256', typ: 'at+jwt' }, CLAIMS),
    'a numeric kid': jws({ ...HEADER, kid: 7 }, CLAIMS),
    'a 65-character kid': jws({ ...HEADER, kid: 'k'.repeat(65) }, CLAIMS),
    'a header that is an array': jws([HEADER], CLAIMS),
    'a header that is not JSON': jws('{"alg":"RS256"', CLAIMS),
    'a payload that is not JSON': jws(HEADER, 'not json'),
    'a payload that is an array': jws(HEADER, [CLAIMS]),
    'a payload that is null': jws(HEADER, 'null'),
    'another issuer': jws(HEADER, { ...CLAIMS, iss: 'https://evil.example/t/tenant' }),
    'no iss': jws(HEADER, { ...CLAIMS, iss: undefined }),
    'no sub': jws(HEADER, { ...CLAIMS, sub: undefined }),
    'no jti': jws(HEADER, { ...CLAIMS, jti: undefined }),
    'no iat': jws(HEADER, { ...CLAIMS, iat: undefined }),
    'no exp': jws(HEADER, { ...CLAIMS, exp: undefined }),
    'exp as a string': jws(HEADER, { ...CLAIMS, exp: String(NOW + 600) }),
    'iat as a string': jws(HEADER, { ...CLAIMS, iat: String(NOW) }),
    'nbf as a string': jws(HEADER, { ...CLAIMS, nbf: String(NOW) }),
    expired: jws(HEADER, { ...CLAIMS, exp: NOW - 1 }),
    'non-ASCII in the payload part': `${h}.${p}Ł.${s}`,
    'whitespace in a part': `${h}.${p} .${s}`,
    'an empty string': '',
    garbage: 'not.a.jwt',
  };
  for (const [name, token] of Object.entries(cases)) {
    it(`refuses ${name}`, () => {
      expect(check(token)).toBeUndefined();
    });
  }
});
