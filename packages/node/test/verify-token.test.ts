import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLatchkey, LatchkeyError, LatchkeyTokenError } from '../src/index.js';
import { closedPortUrl, createSigningKey, FakeLatchkey } from './fake-latchkey.js';

let service: FakeLatchkey;

beforeAll(async () => {
  service = await FakeLatchkey.start();
});
afterAll(() => service.close());
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
});

function client(options: Parameters<typeof createLatchkey>[0] = {}) {
  return createLatchkey({ apiUrl: service.url, tenantId: service.tenantId, ...options });
}

async function rejection(promise: Promise<unknown>): Promise<LatchkeyTokenError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the token to be rejected');
    },
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(LatchkeyTokenError);
  return error as LatchkeyTokenError;
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

describe('verifyToken', () => {
  it('returns exactly the Latchkey claims of a valid token', async () => {
    const claims = service.claims();
    const token = await service.sign({ claims: { ...claims, extra: 'not copied' } });

    await expect(client().verifyToken(token)).resolves.toEqual(claims);
  });

  it('accepts the media-type form of typ (application/at+jwt)', async () => {
    const token = await service.sign({ header: { typ: 'application/at+jwt' } });
    await expect(client().verifyToken(token)).resolves.toMatchObject({ tid: service.tenantId });
  });

  it('accepts an authUrl with a trailing slash', async () => {
    const token = await service.sign();
    const latchkey = client({ authUrl: `${service.url}/` });
    await expect(latchkey.verifyToken(token)).resolves.toMatchObject({ iss: service.issuer });
  });

  it.each([
    ['expired', { exp: Math.floor(Date.now() / 1000) - 60 }, 'token_expired'],
    [
      'not valid before a future nbf',
      { nbf: Math.floor(Date.now() / 1000) + 600 },
      'token_not_yet_valid',
    ],
    ['issued by another issuer', { iss: 'https://evil.example/t/x' }, 'issuer_mismatch'],
    ['without iss', { iss: undefined }, 'issuer_mismatch'],
    ['of another tenant', { tid: '8d1c5bd2-64a4-4c3e-9a5e-0d4b7b0f6f01' }, 'tenant_mismatch'],
    ['without exp', { exp: undefined }, 'claims_invalid'],
    ['without email', { email: undefined }, 'claims_invalid'],
    ['with roles that are not strings', { roles: ['admin', 7] }, 'claims_invalid'],
    ['with scope as an array', { scope: ['openid'] }, 'claims_invalid'],
    ['with an empty sub', { sub: '' }, 'claims_invalid'],
  ] as const)('rejects a token %s', async (_, claims, code) => {
    const token = await service.sign({ claims });
    const error = await rejection(client().verifyToken(token));
    expect(error.code).toBe(code);
    expect(error.message).not.toContain(token);
  });

  it('honours clockToleranceSeconds for exp', async () => {
    const token = await service.sign({ claims: { exp: Math.floor(Date.now() / 1000) - 3 } });
    await expect(client().verifyToken(token)).resolves.toBeDefined();
    const error = await rejection(client({ clockToleranceSeconds: 0 }).verifyToken(token));
    expect(error.code).toBe('token_expired');
  });

  it.each([
    ['no typ', { typ: undefined }],
    ['typ JWT', { typ: 'JWT' }],
  ])('rejects a token with %s (not an access token, RFC 9068)', async (_, header) => {
    const token = await service.sign({ header });
    expect((await rejection(client().verifyToken(token))).code).toBe('token_malformed');
  });

  it('rejects a token signed by another key under the right kid', async () => {
    const attacker = await createSigningKey(service.keys[0]?.kid);
    const token = await service.sign({ key: attacker });
    expect((await rejection(client().verifyToken(token))).code).toBe('signature_invalid');
  });

  it('rejects a token whose payload was altered after signing', async () => {
    const [header, , signature] = (await service.sign()).split('.');
    const forged = `${header}.${base64url({ ...service.claims(), roles: ['owner'] })}.${signature}`;
    expect((await rejection(client().verifyToken(forged))).code).toBe('signature_invalid');
  });

  it('rejects alg none', async () => {
    const token = `${base64url({ alg: 'none', typ: 'at+jwt' })}.${base64url(service.claims())}.`;
    expect((await rejection(client().verifyToken(token))).code).toBe('signature_invalid');
  });

  it('rejects HS256 signed with the public key as the HMAC secret (algorithm confusion)', async () => {
    const key = service.keys[0];
    if (!key) throw new Error('no key');
    const pem = new TextEncoder().encode(await exportSPKI(key.publicKey));
    const token = await new SignJWT(service.claims())
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: key.kid })
      .sign(pem);
    expect((await rejection(client().verifyToken(token))).code).toBe('signature_invalid');
  });

  it('never uses a key embedded in the header (jwk), whatever the kid', async () => {
    const attacker = await createSigningKey();
    const jwk = await exportJWK(attacker.publicKey);
    const sameKid = await service.sign({
      key: attacker,
      header: { kid: service.keys[0]?.kid, jwk },
    });
    const ownKid = await service.sign({ key: attacker, header: { jwk } });

    expect((await rejection(client().verifyToken(sameKid))).code).toBe('signature_invalid');
    expect((await rejection(client().verifyToken(ownKid))).code).toBe('key_not_found');
  });

  it('never fetches keys from a URL in the header (jku, x5u)', async () => {
    const attacker = await createSigningKey();
    let attackerRequests = 0;
    const attackerServer = createServer((_, res) => {
      attackerRequests += 1;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [attacker.jwk] }));
    });
    await new Promise<void>((resolve) => attackerServer.listen(0, '127.0.0.1', resolve));
    const attackerUrl = `http://127.0.0.1:${(attackerServer.address() as AddressInfo).port}/jwks`;
    try {
      const token = await service.sign({
        key: attacker,
        header: { jku: attackerUrl, x5u: attackerUrl },
      });
      expect((await rejection(client().verifyToken(token))).code).toBe('key_not_found');
      expect(attackerRequests).toBe(0);
    } finally {
      await new Promise((resolve) => attackerServer.close(resolve));
    }
  });

  it.each([
    ['garbage', 'not-a-token'],
    ['three garbage segments', 'aaa.bbb.ccc'],
    ['a header that is not JSON', `${Buffer.from('{').toString('base64url')}.e30.sig`],
    ['a JWE-shaped token', 'a.b.c.d.e'],
  ])('rejects %s as token_malformed', async (_, token) => {
    expect((await rejection(client().verifyToken(token))).code).toBe('token_malformed');
  });

  it('rejects an empty token as token_missing', async () => {
    expect((await rejection(client().verifyToken(''))).code).toBe('token_missing');
  });

  it('rejects a 1 MB string at once, without fetching keys', async () => {
    const before = service.jwksRequests;
    const started = performance.now();
    const error = await rejection(client().verifyToken('a'.repeat(1024 * 1024)));
    expect(error.code).toBe('token_malformed');
    expect(performance.now() - started).toBeLessThan(50);
    expect(service.jwksRequests).toBe(before);
  });

  it('fetches the JWKS once for many verifications, and again for an unknown kid', async () => {
    const rotating = await FakeLatchkey.start();
    try {
      const latchkey = createLatchkey({ apiUrl: rotating.url, tenantId: rotating.tenantId });
      for (let i = 0; i < 20; i += 1) {
        await latchkey.verifyToken(await rotating.sign());
      }
      expect(rotating.jwksRequests).toBe(1);

      // Rotation: the service publishes a new key next to the old one and signs with it.
      const next = await createSigningKey();
      rotating.keys.unshift(next);
      const fresh = await rotating.sign();

      // Within jose's cooldown (30 s) an unknown kid does not trigger a fetch.
      vi.useFakeTimers({ toFake: ['Date'] });
      expect((await rejection(latchkey.verifyToken(fresh))).code).toBe('key_not_found');
      expect(rotating.jwksRequests).toBe(1);

      vi.setSystemTime(Date.now() + 31_000);
      await expect(latchkey.verifyToken(fresh)).resolves.toMatchObject({ tid: rotating.tenantId });
      expect(rotating.jwksRequests).toBe(2);

      // Tokens signed by the retired key still verify, and nothing is fetched again.
      const old = rotating.keys[1];
      await expect(latchkey.verifyToken(await rotating.sign({ key: old }))).resolves.toBeDefined();
      await latchkey.verifyToken(await rotating.sign());
      expect(rotating.jwksRequests).toBe(2);
    } finally {
      await rotating.close();
    }
  });

  it('answers jwks_unavailable when the service is down', async () => {
    const token = await service.sign();
    const latchkey = createLatchkey({ apiUrl: await closedPortUrl(), tenantId: service.tenantId });
    const error = await rejection(latchkey.verifyToken(token));
    expect(error.code).toBe('jwks_unavailable');
    expect(error.action).toContain('LATCHKEY_AUTH_URL');
  });

  it('answers jwks_unavailable when the JWKS endpoint fails', async () => {
    const failing = await FakeLatchkey.start();
    failing.jwksStatus = 503;
    try {
      const latchkey = createLatchkey({ apiUrl: failing.url, tenantId: failing.tenantId });
      const error = await rejection(latchkey.verifyToken(await failing.sign()));
      expect(error.code).toBe('jwks_unavailable');
    } finally {
      await failing.close();
    }
  });

  it('fetches the keys through the fetch option', async () => {
    const fetchSpy = vi.fn(globalThis.fetch);
    const latchkey = client({ fetch: fetchSpy });
    await latchkey.verifyToken(await service.sign());
    expect(fetchSpy).toHaveBeenCalledWith(
      `${service.issuer}/.well-known/jwks.json`,
      expect.objectContaining({ method: 'GET' }),
    );
  });

  it('reads the tenant and URL from the environment', async () => {
    vi.stubEnv('LATCHKEY_API_URL', service.url);
    vi.stubEnv('LATCHKEY_TENANT_ID', service.tenantId);
    await expect(createLatchkey().verifyToken(await service.sign())).resolves.toBeDefined();
  });

  it('says what to do when no tenant id is configured', async () => {
    vi.stubEnv('LATCHKEY_TENANT_ID', '');
    const latchkey = createLatchkey({ apiUrl: service.url });
    const error = await latchkey.verifyToken(await service.sign()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LatchkeyError);
    expect(error).toMatchObject({ code: 'tenant_id_missing' });
    expect((error as LatchkeyError).action).toContain('LATCHKEY_TENANT_ID');
  });

  it('refuses a URL that is not http(s) when created', () => {
    expect(() => createLatchkey({ apiUrl: 'ftp://example.com' })).toThrow(
      expect.objectContaining({ code: 'option_invalid' }),
    );
  });
});
