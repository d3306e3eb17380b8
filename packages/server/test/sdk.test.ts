/** The script tag's library served from memory: encodings, validators, CORS, the versioned path. */
import { readFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseEncoding } from '../src/http/routes/sdk.js';
import { startApp, type TestApp } from './support.js';

const SCRIPT = readFileSync(new URL('../../js/dist/latchkey.js', import.meta.url));
const { version } = JSON.parse(
  readFileSync(new URL('../../js/package.json', import.meta.url), 'utf8'),
) as { version: string };

describe('GET /sdk/latchkey.js', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp('sqlite');
  });
  afterAll(() => app.dispose());

  /** fetch() would decode the body itself; node:http-level bytes are what we check. */
  const get = (path: string, headers: Record<string, string> = {}) =>
    app.app.inject({ method: 'GET', url: path, headers });

  it('sends the built script in the encoding asked for, the same bytes each way', async () => {
    const br = await get('/sdk/latchkey.js', { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.statusCode).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.rawPayload).equals(SCRIPT)).toBe(true);
    const gz = await get('/sdk/latchkey.js', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).equals(SCRIPT)).toBe(true);
    const plain = await get('/sdk/latchkey.js');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.equals(SCRIPT)).toBe(true);
    const refused = await get('/sdk/latchkey.js', { 'accept-encoding': 'br;q=0, gzip' });
    expect(refused.headers['content-encoding']).toBe('gzip');
    for (const res of [br, gz, plain]) {
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(res.headers.vary).toBe('accept-encoding');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers.etag).toBe(br.headers.etag);
      expect(res.headers['cache-control']).toBe('public, max-age=300');
    }
  });

  it('answers 304 to its ETag, and HEAD without a body', async () => {
    const first = await get('/sdk/latchkey.js');
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\/"[\w-]{27}"$/);
    const again = await get('/sdk/latchkey.js', { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    expect((await get('/sdk/latchkey.js', { 'if-none-match': '"other"' })).statusCode).toBe(200);
    const head = await app.app.inject({ method: 'HEAD', url: '/sdk/latchkey.js' });
    expect(head.statusCode).toBe(200);
    expect(head.rawPayload.length).toBe(0);
  });

  it(`serves /sdk/latchkey@${version}.js as immutable, and no other version`, async () => {
    const res = await get(`/sdk/latchkey@${version}.js`, { 'accept-encoding': 'br' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(brotliDecompressSync(res.rawPayload).equals(SCRIPT)).toBe(true);
    expect((await get('/sdk/latchkey@0.0.0-nope.js')).statusCode).toBe(404);
  });

  it('is reachable over real HTTP from another origin (CORS)', async () => {
    const res = await app.request('/sdk/latchkey.js', {
      headers: { origin: 'https://app.example' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(Buffer.from(await res.arrayBuffer()).equals(SCRIPT)).toBe(true);
  });
});

describe('chooseEncoding (RFC 9110 section 12.5.3)', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['identity', undefined],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, br', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', undefined],
    ['*', 'br'],
    ['*;q=0, gzip', 'gzip'],
    ['GZIP', 'gzip'],
  ])('%s -> %s', (header, expected) => {
    expect(chooseEncoding(header)).toBe(expected);
  });
});
