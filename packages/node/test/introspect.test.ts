import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../server/src/modules/oauth/index.js';
import type { TestTenant } from '../../server/test/support.js';
import { createLatchkey, LatchkeyApiError, LatchkeyError } from '../src/index.js';
import {
  INTROSPECT_ROUTE,
  type RealLatchkey,
  type Session,
  startLatchkey,
  stoppedLatchkey,
} from './latchkey-server.js';

let service: RealLatchkey;
let t: TestTenant;
let ada: Session;

beforeAll(async () => {
  service = await startLatchkey();
  t = await service.tenant();
  ada = await service.session(t, ['admin']);
});
afterAll(() => service.dispose());
afterEach(() => {
  vi.unstubAllEnvs();
});

/** The SDK as an API server uses it for introspection: the API URL and the secret key. */
function client(options: Parameters<typeof createLatchkey>[0] = {}) {
  return createLatchkey({ apiUrl: service.url, secretKey: t.secretKey, ...options });
}

async function failure(promise: Promise<unknown>): Promise<LatchkeyError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(LatchkeyError);
  return error as LatchkeyError;
}

/** A secret key of the right shape that the service never issued. */
const UNKNOWN_SECRET_KEY = `sk_test_${'x'.repeat(43)}`;

describe('introspect against the real service', () => {
  it('answers active with the same claims local verification finds', async () => {
    const result = await client().introspect(ada.accessToken);
    const local = await service.client(t).verifyToken(ada.accessToken);
    expect(result).toEqual({ active: true, ...local });
    expect(result).toMatchObject({
      sub: ada.user.id,
      sid: ada.sessionId,
      tid: t.tenant.id,
      roles: ['admin'],
    });
  });

  it("refuses an m2m app's client-credentials token (no user) as verifyToken does: claims_invalid", async () => {
    const { app } = await createApp(service.app.ctx.database.db, t.tenant.id, {
      name: 'Worker',
      type: 'm2m',
    });
    // The claims node-oidc-provider gives it (docs/design.md §14), signed with the tenant's key.
    const token = await service.forge(t, {
      claims: {
        sub: app.id,
        client_id: app.id,
        scope: '',
        sid: undefined,
        email: undefined,
        roles: undefined,
      },
    });
    const introspected = await failure(client().introspect(token));
    const local = await failure(service.client(t).verifyToken(token));
    expect([introspected.code, local.code]).toEqual(['claims_invalid', 'claims_invalid']);
    expect(introspected.reason).toContain("an app's own");
    // The service itself answers it active (its app exists).
    const answer = await service.app.request('/api/auth/introspect', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.secretKey}` },
      body: JSON.stringify({ token }),
    });
    expect(await answer.json()).toMatchObject({ active: true, sub: app.id, client_id: app.id });
    // The middleware answers it 401 in both modes (not 503: the API did answer).
    for (const mode of ['introspect', 'local'] as const) {
      const onError = vi.fn();
      const server = createServer(service.client(t).nodeHandler(() => {}, { mode, onError }));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      try {
        const res = await fetch(`http://127.0.0.1:${port}/`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect([mode, res.status, res.headers.get('www-authenticate')]).toEqual([
          mode,
          401,
          'Bearer error="invalid_token"',
        ]);
        expect(onError).not.toHaveBeenCalled();
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    }
  });

  it('answers inactive once the session is revoked', async () => {
    const s = await service.session(t);
    await expect(client().introspect(s.accessToken)).resolves.toMatchObject({ active: true });
    await service.revoke(t, s.sessionId);
    await expect(client().introspect(s.accessToken)).resolves.toEqual({ active: false });
  });

  it("answers inactive for another tenant's token, an expired one, and garbage", async () => {
    const other = await service.tenant();
    const theirs = await service.session(other);
    const now = Math.floor(Date.now() / 1000);
    const expired = await service.forge(t, {
      claims: { sub: ada.user.id, sid: ada.sessionId, iat: now - 1200, exp: now - 600 },
    });
    for (const token of [theirs.accessToken, expired, 'garbage']) {
      await expect(client().introspect(token)).resolves.toEqual({ active: false });
    }
  });

  it('answers inactive for a huge string without asking the API', async () => {
    const before = await service.requests('POST', INTROSPECT_ROUTE);
    await expect(client().introspect('a'.repeat(1024 * 1024))).resolves.toEqual({ active: false });
    expect(await service.requests('POST', INTROSPECT_ROUTE)).toBe(before);
  });

  it('throws LatchkeyApiError unauthorized when the service does not know the secret key', async () => {
    const error = await failure(
      client({ secretKey: UNKNOWN_SECRET_KEY }).introspect(ada.accessToken),
    );
    expect(error).toBeInstanceOf(LatchkeyApiError);
    expect(error).toMatchObject({
      code: 'unauthorized',
      status: 401,
      detail: expect.stringMatching(/^The key is not valid or has been revoked\. A secret key is/),
    });
    expect(error.action).toContain('LATCHKEY_SECRET_KEY');
    expect(error.message).not.toContain(UNKNOWN_SECRET_KEY);
  });

  it('throws LatchkeyApiError forbidden for a secret key without the tokens:introspect scope', async () => {
    const narrow = await service.tenant({ scopes: ['users:read'] });
    const error = await failure(client({ secretKey: narrow.secretKey }).introspect('token'));
    expect(error).toBeInstanceOf(LatchkeyApiError);
    expect(error).toMatchObject({ code: 'forbidden', status: 403 });
    expect(error.action).toContain('tokens:introspect');
  });

  it("carries Retry-After of the service's rate limit", async () => {
    const slow = await service.tenant({ rps: 1, rpm: 60 });
    const latchkey = client({ secretKey: slow.secretKey });
    let error: LatchkeyError | undefined;
    for (let i = 0; i < 5 && !error; i += 1) {
      error = await latchkey.introspect('token').then(
        () => undefined,
        (e: LatchkeyError) => e,
      );
    }
    expect(error).toBeInstanceOf(LatchkeyApiError);
    expect(error).toMatchObject({ code: 'rate_limited', status: 429 });
    const retryAfter = (error as LatchkeyApiError).retryAfter;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(error?.action).toContain(`${retryAfter} seconds`);
  });

  it('reports an answer that is not a problem document as unexpected_response', async () => {
    // The real service never answers this; a proxy or another app in its place does.
    const fetchHtml = async () =>
      new Response('<html>Bad gateway</html>', {
        status: 502,
        headers: { 'content-type': 'text/html' },
      });
    const error = await failure(client({ fetch: fetchHtml }).introspect('token'));
    expect(error).toMatchObject({ code: 'unexpected_response', status: 502 });
  });

  it('reports a 200 that is not an introspection response as unexpected_response', async () => {
    // The real service never answers this; another app at LATCHKEY_API_URL might.
    const fetchOdd = async () => Response.json({ active: true, sub: 42 });
    const error = await failure(client({ fetch: fetchOdd }).introspect('token'));
    expect(error).toMatchObject({ code: 'unexpected_response', status: 200 });
  });

  it('reports a service that is down as api_unreachable', async () => {
    const stopped = await stoppedLatchkey();
    const error = await failure(
      client({ apiUrl: stopped.url, secretKey: stopped.tenant.secretKey }).introspect(
        stopped.token,
      ),
    );
    expect(error.code).toBe('api_unreachable');
    expect(error.action).toContain('LATCHKEY_API_URL');
  });

  it('sends the secret key as Bearer and the token as JSON to /api/auth/introspect', async () => {
    const fetchSpy = vi.fn(globalThis.fetch);
    await expect(client({ fetch: fetchSpy }).introspect(ada.accessToken)).resolves.toMatchObject({
      active: true,
    });
    const [url, init] = fetchSpy.mock.calls[0] ?? [];
    expect(url).toBe(`${service.url}/api/auth/introspect`);
    expect(init).toMatchObject({
      method: 'POST',
      headers: { authorization: `Bearer ${t.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ token: ada.accessToken }),
    });
  });

  it('reads the secret key and the API URL from the environment', async () => {
    vi.stubEnv('LATCHKEY_SECRET_KEY', t.secretKey);
    vi.stubEnv('LATCHKEY_API_URL', service.url);
    await expect(createLatchkey().introspect(ada.accessToken)).resolves.toMatchObject({
      active: true,
    });
  });

  it('says what to do when no secret key is configured', async () => {
    vi.stubEnv('LATCHKEY_SECRET_KEY', '');
    const error = await failure(createLatchkey({ apiUrl: service.url }).introspect('token'));
    expect(error.code).toBe('secret_key_missing');
    expect(error.action).toContain('Set LATCHKEY_SECRET_KEY to a key beginning with sk_');
  });

  it.each([
    ["the tenant's publishable key", () => t.publishableKey],
    ['a truncated key', () => t.secretKey.slice(0, -1)],
    ['a key with a trailing newline', () => `${t.secretKey}\n`],
    ['something else', () => 'hunter2'],
  ])('refuses %s without sending it anywhere', async (_, key) => {
    const secretKey = key();
    const fetchSpy = vi.fn(globalThis.fetch);
    const error = await failure(client({ secretKey, fetch: fetchSpy }).introspect('token'));
    expect(error.code).toBe('secret_key_invalid');
    expect(error.action).toContain('LATCHKEY_SECRET_KEY');
    expect(error.message).not.toContain(secretKey.trim());
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('throws token_missing for an empty token', async () => {
    await expect(client().introspect('')).rejects.toMatchObject({ code: 'token_missing' });
  });
});
