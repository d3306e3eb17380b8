import { createPublicKey } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestTenant } from '../../server/test/support.js';
import { createLatchkey, LatchkeyError, LatchkeyTokenError } from '../src/index.js';
import {
  attackerHost,
  JWKS_ROUTE,
  PUBLIC_URL,
  type RealLatchkey,
  type Session,
  startLatchkey,
  stoppedLatchkey,
  viaLoopback,
} from './latchkey-server.js';

let service: RealLatchkey;
let t: TestTenant;
/** A real session of a user with the role `admin`, signed in through the API. */
let ada: Session;

beforeAll(async () => {
  service = await startLatchkey();
  t = await service.tenant();
  ada = await service.session(t, ['admin']);
});
afterAll(() => service.dispose());
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
});

const now = () => Math.floor(Date.now() / 1000);
const jwksFetches = () => service.requests('GET', JWKS_ROUTE);

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

describe('verifyToken against the real service', () => {
  it("returns exactly the Latchkey claims of a real sign-in's access token", async () => {
    const claims = await service.client(t).verifyToken(ada.accessToken);
    expect(claims).toEqual({
      iss: `${PUBLIC_URL}/t/${t.tenant.id}`,
      sub: ada.user.id,
      email: ada.user.email,
      tid: t.tenant.id,
      sid: ada.sessionId,
      roles: ['admin'],
      scope: 'openid email profile',
      iat: expect.any(Number),
      exp: expect.any(Number),
      jti: expect.any(String),
      aud: `${PUBLIC_URL}/t/${t.tenant.id}/api`,
      client_id: t.tenant.id,
      // A password sign-in (RFC 8176), at the time of the sign-in.
      amr: ['pwd'],
      auth_time: claims.iat,
    });
    expect(claims).toEqual(decodeJwt(ada.accessToken));
    expect(claims.exp - claims.iat).toBe(600);
  });

  it('accepts an authUrl with a trailing slash, and the media-type form of typ', async () => {
    const latchkey = service.client(t, { authUrl: `${PUBLIC_URL}/` });
    await expect(latchkey.verifyToken(ada.accessToken)).resolves.toMatchObject({
      sub: ada.user.id,
    });
    const mediaType = await service.forge(t, { header: { typ: 'application/at+jwt' } });
    await expect(latchkey.verifyToken(mediaType)).resolves.toMatchObject({ tid: t.tenant.id });
  });

  it.each([
    ['expired', () => ({ iat: now() - 1200, exp: now() - 60 }), 'token_expired'],
    ['not valid before a future nbf', () => ({ nbf: now() + 600 }), 'token_not_yet_valid'],
    ['issued by another issuer', () => ({ iss: 'https://evil.example/t/x' }), 'issuer_mismatch'],
    ['without iss', () => ({ iss: undefined }), 'issuer_mismatch'],
    [
      "signed with this tenant's key but naming another tenant (tid)",
      () => ({ tid: '8d1c5bd2-64a4-4c3e-9a5e-0d4b7b0f6f01' }),
      'tenant_mismatch',
    ],
    ['without exp', () => ({ exp: undefined }), 'claims_invalid'],
    ['without email', () => ({ email: undefined }), 'claims_invalid'],
    ['with roles that are not strings', () => ({ roles: ['admin', 7] }), 'claims_invalid'],
    ['with scope as an array', () => ({ scope: ['openid'] }), 'claims_invalid'],
    ['with an empty sub', () => ({ sub: '' }), 'claims_invalid'],
    ['with amr that is not a list of strings', () => ({ amr: 'pwd' }), 'claims_invalid'],
    ['with auth_time that is not a number', () => ({ auth_time: '1700000000' }), 'claims_invalid'],
    ['without aud', () => ({ aud: undefined }), 'claims_invalid'],
    ['without client_id', () => ({ client_id: undefined }), 'claims_invalid'],
  ] as const)('rejects a token %s', async (_, claims, code) => {
    const token = await service.forge(t, {
      claims: { ...decodeJwt(ada.accessToken), ...claims() },
    });
    const error = await rejection(service.client(t).verifyToken(token));
    expect(error.code).toBe(code);
    expect(error.message).not.toContain(token);
  });

  it("checks aud when given the tenant's audience, and names the mismatch", async () => {
    const audience = `${PUBLIC_URL}/t/${t.tenant.id}/api`;
    await expect(
      service.client(t, { audience }).verifyToken(ada.accessToken),
    ).resolves.toMatchObject({ aud: audience });
    const elsewhere = service.client(t, { audience: 'https://billing.example/api' });
    const error = await rejection(elsewhere.verifyToken(ada.accessToken));
    expect(error.code).toBe('audience_mismatch');
    expect(error.action).toContain('LATCHKEY_AUDIENCE');
    vi.stubEnv('LATCHKEY_AUDIENCE', 'https://billing.example/api');
    expect((await rejection(service.client(t).verifyToken(ada.accessToken))).code).toBe(
      'audience_mismatch',
    );
  });

  it('honours clockToleranceSeconds for exp', async () => {
    const token = await service.forge(t, { claims: { exp: now() - 3 } });
    await expect(service.client(t).verifyToken(token)).resolves.toBeDefined();
    const strict = service.client(t, { clockToleranceSeconds: 0 });
    expect((await rejection(strict.verifyToken(token))).code).toBe('token_expired');
  });

  it("rejects another tenant's real token as key_not_found: each tenant has its own keys", async () => {
    const other = await service.tenant();
    const theirs = await service.session(other);
    const error = await rejection(service.client(t).verifyToken(theirs.accessToken));
    expect(error.code).toBe('key_not_found');
    // The other tenant's SDK accepts it, of course.
    await expect(service.client(other).verifyToken(theirs.accessToken)).resolves.toMatchObject({
      tid: other.tenant.id,
    });
  });

  it('tells an SDK pointed at the internal URL instead of PUBLIC_URL to fix authUrl', async () => {
    // The keys are fetched fine from the app's own address, but the issuer names PUBLIC_URL.
    const latchkey = createLatchkey({ tenantId: t.tenant.id, authUrl: service.url });
    const error = await rejection(latchkey.verifyToken(ada.accessToken));
    expect(error.code).toBe('issuer_mismatch');
    expect(error.action).toContain('authUrl');
  });

  it.each([
    ['no typ', { typ: undefined }],
    ['typ JWT', { typ: 'JWT' }],
  ])('rejects a token with %s (not an access token, RFC 9068)', async (_, header) => {
    const token = await service.forge(t, { header });
    expect((await rejection(service.client(t).verifyToken(token))).code).toBe('token_malformed');
  });

  it('rejects a real token whose signature was altered', async () => {
    const [header, payload, signature = ''] = ada.accessToken.split('.');
    const flipped = `${header}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    expect((await rejection(service.client(t).verifyToken(flipped))).code).toBe(
      'signature_invalid',
    );
  });

  it('rejects a real token whose payload was altered after signing', async () => {
    const [header, , signature] = ada.accessToken.split('.');
    const payload = base64url({ ...decodeJwt(ada.accessToken), roles: ['owner'] });
    const forged = `${header}.${payload}.${signature}`;
    expect((await rejection(service.client(t).verifyToken(forged))).code).toBe('signature_invalid');
  });

  it('rejects alg none', async () => {
    const [, payload] = ada.accessToken.split('.');
    const token = `${base64url({ alg: 'none', typ: 'at+jwt' })}.${payload}.`;
    expect((await rejection(service.client(t).verifyToken(token))).code).toBe('signature_invalid');
  });

  it("rejects HS256 signed with the tenant's published key as the HMAC secret (algorithm confusion)", async () => {
    const { kid } = decodeProtectedHeader(ada.accessToken);
    const jwks = (await (
      await service.app.request(`/t/${t.tenant.id}/.well-known/jwks.json`)
    ).json()) as {
      keys: { kid: string }[];
    };
    const jwk = jwks.keys.find((key) => key.kid === kid);
    const pem = createPublicKey({ key: jwk as never, format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    });
    const token = await new SignJWT(decodeJwt(ada.accessToken))
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid })
      .sign(new TextEncoder().encode(pem as string));
    expect((await rejection(service.client(t).verifyToken(token))).code).toBe('signature_invalid');
  });

  it('never uses a key embedded in the header (jwk), whatever the kid', async () => {
    const attacker = await generateKeyPair('RS256', { extractable: true });
    const jwk = await exportJWK(attacker.publicKey);
    const claims = decodeJwt(ada.accessToken);
    const sameKid = await service.forge(t, { claims, header: { jwk }, key: attacker.privateKey });
    const ownKid = await service.forge(t, {
      claims,
      header: { jwk, kid: 'attacker' },
      key: attacker.privateKey,
    });
    const latchkey = service.client(t);
    expect((await rejection(latchkey.verifyToken(sameKid))).code).toBe('signature_invalid');
    expect((await rejection(latchkey.verifyToken(ownKid))).code).toBe('key_not_found');
  });

  it("never fetches keys from a URL in the header (jku, x5u), even the attacker's own", async () => {
    const attacker = await generateKeyPair('RS256', { extractable: true });
    const publicJwk = { ...(await exportJWK(attacker.publicKey)), kid: 'attacker', alg: 'RS256' };
    // Something the real service can never be: an attacker's host serving the attacker's keys.
    const host = await attackerHost({ keys: [publicJwk] });
    try {
      const token = await service.forge(t, {
        claims: decodeJwt(ada.accessToken),
        header: { kid: 'attacker', jku: `${host.url}/jwks`, x5u: `${host.url}/x5u` },
        key: attacker.privateKey,
      });
      expect((await rejection(service.client(t).verifyToken(token))).code).toBe('key_not_found');
      expect(host.requests()).toBe(0);
    } finally {
      await host.close();
    }
  });

  it.each([
    ['garbage', 'not-a-token'],
    ['three garbage segments', 'aaa.bbb.ccc'],
    ['a header that is not JSON', `${Buffer.from('{').toString('base64url')}.e30.sig`],
    ['a JWE-shaped token', 'a.b.c.d.e'],
  ])('rejects %s as token_malformed', async (_, token) => {
    expect((await rejection(service.client(t).verifyToken(token))).code).toBe('token_malformed');
  });

  it('rejects an empty token as token_missing', async () => {
    expect((await rejection(service.client(t).verifyToken(''))).code).toBe('token_missing');
  });

  it('rejects a 1 MB string without fetching keys', async () => {
    const before = await jwksFetches();
    const error = await rejection(service.client(t).verifyToken('a'.repeat(1024 * 1024)));
    expect(error.code).toBe('token_malformed');
    expect(await jwksFetches()).toBe(before);
  });

  it('fetches the JWKS once for many verifications, concurrent ones included', async () => {
    const tokens = [ada];
    for (let i = 0; i < 4; i += 1) tokens.push(await service.refresh(t, tokens[i] as Session));
    const before = await jwksFetches();
    const latchkey = service.client(t);
    await Promise.all(tokens.map((s) => latchkey.verifyToken(s.accessToken)));
    for (let round = 0; round < 4; round += 1) {
      for (const s of tokens) {
        await expect(latchkey.verifyToken(s.accessToken)).resolves.toMatchObject({
          sid: ada.sessionId,
        });
      }
    }
    expect(await jwksFetches()).toBe(before + 1);
  });

  it('follows a key rotation with one refetch; tokens of the old key still verify', async () => {
    const rotating = await service.tenant();
    const before = await service.session(rotating);
    const latchkey = service.client(rotating);
    const fetchesAtStart = await jwksFetches();
    await latchkey.verifyToken(before.accessToken);
    expect(await jwksFetches()).toBe(fetchesAtStart + 1);

    // An emergency rotation: the new key is published and signs at once.
    const { kid: newKid } = await service.app.ctx.signingKeys.rotate(rotating.tenant.id, 600, 0);
    const after = await service.refresh(rotating, before);
    expect(decodeProtectedHeader(after.accessToken).kid).toBe(newKid);
    expect(decodeProtectedHeader(before.accessToken).kid).not.toBe(newKid);

    // Within jose's refetch cooldown (30 s after the last fetch) an unknown kid fetches nothing,
    // so an unknown kid cannot be used to hammer the service. This is why the service's default
    // rotation publishes a key 120 s before it signs.
    vi.useFakeTimers({ toFake: ['Date'] });
    expect((await rejection(latchkey.verifyToken(after.accessToken))).code).toBe('key_not_found');
    expect(await jwksFetches()).toBe(fetchesAtStart + 1);

    vi.setSystemTime(Date.now() + 31_000);
    await expect(latchkey.verifyToken(after.accessToken)).resolves.toMatchObject({
      sid: before.sessionId,
    });
    expect(await jwksFetches()).toBe(fetchesAtStart + 2);

    // The retired key stays published until its last token has expired.
    await expect(latchkey.verifyToken(before.accessToken)).resolves.toMatchObject({
      sid: before.sessionId,
    });
    await latchkey.verifyToken(after.accessToken);
    expect(await jwksFetches()).toBe(fetchesAtStart + 2);
  });

  it('stops trusting a revoked signing key within a minute, and keeps its set through a hiccup', async () => {
    const tenant = await service.tenant();
    const before = await service.session(tenant);
    let reachable = true;
    const latchkey = service.client(tenant, {
      fetch: (input, init) =>
        reachable ? viaLoopback(service.url)(input, init) : Promise.reject(new Error('down')),
    });
    await latchkey.verifyToken(before.accessToken);
    const { kid } = decodeProtectedHeader(before.accessToken);
    await service.app.ctx.signingKeys.revoke(tenant.tenant.id, kid as string);
    const after = await service.refresh(tenant, before);

    vi.useFakeTimers({ toFake: ['Date'] });
    // The service is down past the set's minute: the set it has keeps verifying.
    reachable = false;
    vi.setSystemTime(Date.now() + 61_000);
    await expect(latchkey.verifyToken(before.accessToken)).resolves.toMatchObject({
      sid: before.sessionId,
    });
    // Back: the refetched set lacks the revoked key, and has the new one.
    reachable = true;
    vi.setSystemTime(Date.now() + 1_000);
    expect((await rejection(latchkey.verifyToken(before.accessToken))).code).toBe('key_not_found');
    await expect(latchkey.verifyToken(after.accessToken)).resolves.toMatchObject({
      sid: before.sessionId,
    });
    // Down for longer than the stale allowance: nothing verifies on a set that old.
    reachable = false;
    vi.setSystemTime(Date.now() + 6 * 60_000);
    expect((await rejection(latchkey.verifyToken(after.accessToken))).code).toBe(
      'jwks_unavailable',
    );
  });

  it('answers jwks_unavailable when the service that issued the token is down', async () => {
    const stopped = await stoppedLatchkey();
    const latchkey = createLatchkey({
      tenantId: stopped.tenant.tenant.id,
      authUrl: PUBLIC_URL,
      fetch: viaLoopback(stopped.url),
    });
    const error = await rejection(latchkey.verifyToken(stopped.token));
    expect(error.code).toBe('jwks_unavailable');
    expect(error.action).toContain('LATCHKEY_AUTH_URL');
  });

  it('answers jwks_unavailable for a tenant the service does not know (its JWKS is 404)', async () => {
    const latchkey = service.client(t, { tenantId: '0b9c7f0e-1111-4222-8333-444455556666' });
    const error = await rejection(latchkey.verifyToken(ada.accessToken));
    expect(error.code).toBe('jwks_unavailable');
    expect(await service.requests('GET', JWKS_ROUTE, 404)).toBeGreaterThan(0);
  });

  it('fetches the keys through the fetch option, from {authUrl}/t/{tenantId}', async () => {
    const fetchSpy = vi.fn(viaLoopback(service.url));
    await service.client(t, { fetch: fetchSpy }).verifyToken(ada.accessToken);
    expect(fetchSpy).toHaveBeenCalledWith(
      `${PUBLIC_URL}/t/${t.tenant.id}/.well-known/jwks.json`,
      expect.objectContaining({ method: 'GET' }),
    );
  });

  it('reads the tenant and URL from the environment', async () => {
    vi.stubEnv('LATCHKEY_AUTH_URL', PUBLIC_URL);
    vi.stubEnv('LATCHKEY_TENANT_ID', t.tenant.id);
    const latchkey = createLatchkey({ fetch: viaLoopback(service.url) });
    await expect(latchkey.verifyToken(ada.accessToken)).resolves.toMatchObject({
      sub: ada.user.id,
    });
  });

  it('says what to do when no tenant id is configured', async () => {
    vi.stubEnv('LATCHKEY_TENANT_ID', '');
    const latchkey = createLatchkey({ authUrl: PUBLIC_URL, fetch: viaLoopback(service.url) });
    const error = await latchkey.verifyToken(ada.accessToken).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LatchkeyError);
    expect(error).toMatchObject({ code: 'tenant_id_missing' });
    expect((error as LatchkeyError).action).toContain('LATCHKEY_TENANT_ID');
  });

  it('refuses http:// for a host that is not this machine; allows it for loopback', () => {
    for (const url of ['http://auth.example.com', 'http://10.0.0.5:8787']) {
      expect(() => createLatchkey({ authUrl: url })).toThrow(
        expect.objectContaining({ code: 'option_invalid' }),
      );
      expect(() => createLatchkey({ apiUrl: url })).toThrow(
        expect.objectContaining({ code: 'option_invalid' }),
      );
    }
    for (const url of [
      'http://localhost:8787',
      'http://127.0.0.1',
      'http://[::1]:1',
      'https://a.example',
    ]) {
      expect(() => createLatchkey({ authUrl: url, apiUrl: url })).not.toThrow();
    }
  });

  it('refuses a token issued in the future beyond the clock tolerance', async () => {
    const latchkey = service.client(t);
    const later = await service.forge(t, { claims: { iat: now() + 120 } });
    expect((await rejection(latchkey.verifyToken(later))).code).toBe('token_not_yet_valid');
    const skewed = await service.forge(t, { claims: { iat: now() + 3 } });
    await expect(latchkey.verifyToken(skewed)).resolves.toMatchObject({ tid: t.tenant.id });
  });

  it('refuses a URL that is not http(s) when created', () => {
    expect(() => createLatchkey({ apiUrl: 'ftp://example.com' })).toThrow(
      expect.objectContaining({ code: 'option_invalid' }),
    );
  });
});
