import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLatchkey, LatchkeyApiError, LatchkeyError } from '../src/index.js';
import { closedPortUrl, FakeLatchkey, fakeSecretKey } from './fake-latchkey.js';

let service: FakeLatchkey;

beforeAll(async () => {
  service = await FakeLatchkey.start();
});
afterAll(() => service.close());
afterEach(() => {
  vi.unstubAllEnvs();
  service.introspectionProblem = undefined;
});

function client(options: Parameters<typeof createLatchkey>[0] = {}) {
  return createLatchkey({ apiUrl: service.url, secretKey: service.secretKey, ...options });
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

describe('introspect', () => {
  it('answers active with the claims of a valid token', async () => {
    const claims = service.claims();
    const result = await client().introspect(await service.sign({ claims }));
    expect(result).toEqual({ active: true, ...claims });
    if (result.active) expect(result.roles).toEqual(['admin']);
  });

  it('answers inactive for a revoked session', async () => {
    const claims = service.claims();
    const token = await service.sign({ claims });
    service.revokedSessions.add(String(claims.sid));
    await expect(client().introspect(token)).resolves.toEqual({ active: false });
  });

  it('answers inactive for garbage, and for a huge string without asking the API', async () => {
    await expect(client().introspect('garbage')).resolves.toEqual({ active: false });
    const before = service.introspectionRequests;
    await expect(client().introspect('a'.repeat(1024 * 1024))).resolves.toEqual({ active: false });
    expect(service.introspectionRequests).toBe(before);
  });

  it('throws LatchkeyApiError unauthorized when the API refuses the secret key', async () => {
    const error = await failure(
      client({ secretKey: fakeSecretKey() }).introspect(await service.sign()),
    );
    expect(error).toBeInstanceOf(LatchkeyApiError);
    expect(error).toMatchObject({ code: 'unauthorized', status: 401, detail: 'fake unauthorized' });
    expect(error.action).toContain('LATCHKEY_SECRET_KEY');
  });

  it('carries Retry-After of a rate-limited answer', async () => {
    service.introspectionProblem = { status: 429, code: 'rate_limited', retryAfter: 7 };
    const error = await failure(client().introspect(await service.sign()));
    expect(error).toMatchObject({ code: 'rate_limited', status: 429, retryAfter: 7 });
    expect(error.action).toContain('7 seconds');
  });

  it('reports an answer that is not a problem document as unexpected_response', async () => {
    const fetchHtml = async () =>
      new Response('<html>Bad gateway</html>', {
        status: 502,
        headers: { 'content-type': 'text/html' },
      });
    const error = await failure(client({ fetch: fetchHtml }).introspect('token'));
    expect(error).toMatchObject({ code: 'unexpected_response', status: 502 });
  });

  it('reports a 200 that is not an introspection response as unexpected_response', async () => {
    const fetchOdd = async () => Response.json({ active: true, sub: 42 });
    const error = await failure(client({ fetch: fetchOdd }).introspect('token'));
    expect(error).toMatchObject({ code: 'unexpected_response', status: 200 });
  });

  it('reports an unreachable API as api_unreachable', async () => {
    const error = await failure(client({ apiUrl: await closedPortUrl() }).introspect('token'));
    expect(error.code).toBe('api_unreachable');
    expect(error.action).toContain('LATCHKEY_API_URL');
  });

  it('sends the secret key as Bearer and the token as JSON', async () => {
    const fetchSpy = vi.fn(globalThis.fetch);
    await client({ fetch: fetchSpy }).introspect('some-token');
    const [url, init] = fetchSpy.mock.calls[0] ?? [];
    expect(url).toBe(`${service.url}/api/auth/introspect`);
    expect(init).toMatchObject({
      method: 'POST',
      headers: { authorization: `Bearer ${service.secretKey}`, 'content-type': 'application/json' },
      body: '{"token":"some-token"}',
    });
  });

  it('reads the secret key from LATCHKEY_SECRET_KEY', async () => {
    vi.stubEnv('LATCHKEY_SECRET_KEY', service.secretKey);
    const latchkey = createLatchkey({ apiUrl: service.url });
    await expect(latchkey.introspect(await service.sign())).resolves.toMatchObject({
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
    ['a publishable key', 'pk_test_'.padEnd(51, 'a')],
    ['a truncated key', 'sk_test_abc'],
    ['a key with a trailing newline', `${fakeSecretKey()}\n`],
    ['something else', 'hunter2'],
  ])('refuses %s without sending it anywhere', async (_, secretKey) => {
    const fetchSpy = vi.fn(globalThis.fetch);
    const error = await failure(client({ secretKey, fetch: fetchSpy }).introspect('token'));
    expect(error.code).toBe('secret_key_invalid');
    expect(error.action).toContain('LATCHKEY_SECRET_KEY');
    expect(error.message).not.toContain(secretKey);
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('throws token_missing for an empty token', async () => {
    await expect(client().introspect('')).rejects.toMatchObject({ code: 'token_missing' });
  });
});
