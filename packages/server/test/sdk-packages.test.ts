/**
 * The client packages as npm tarballs from the server (docs/design.md §10.1): real npm
 * tarballs, the same bytes for the same build and URL, validators, and @latchkey/react
 * depending on this server's own @latchkey/js.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtTarballs, servedTarball } from '../src/http/routes/sdk-packages.js';
import { startApp, type TestApp } from './support.js';

const DIST = new URL('../dist/npm/', import.meta.url);
const { version } = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
) as { version: string };

/** Every entry of a .tgz: its name, mtime and bytes. */
async function entries(tgz: Buffer) {
  const out: { name: string; mtime: Date; data: Buffer }[] = [];
  const reader = extract();
  reader.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk) => chunks.push(chunk as Buffer));
    stream.on('end', () => {
      out.push({ name: header.name, mtime: header.mtime, data: Buffer.concat(chunks) });
      next();
    });
  });
  const done = new Promise<void>((resolve, reject) => {
    reader.on('finish', () => resolve());
    reader.on('error', reject);
  });
  reader.end(gunzipSync(tgz));
  await done;
  return out;
}

const manifest = async (tgz: Buffer) => {
  const entry = (await entries(tgz)).find((e) => e.name === 'package/package.json');
  return JSON.parse(entry?.data.toString('utf8') ?? '{}') as {
    name: string;
    version: string;
    dependencies?: Record<string, string>;
  };
};

describe('GET /sdk/npm/{name}.tgz', () => {
  let app: TestApp;
  let other: TestApp;
  beforeAll(async () => {
    [app, other] = await Promise.all([startApp('sqlite'), startApp('sqlite')]);
  });
  afterAll(() => Promise.all([app?.dispose(), other?.dispose()]));

  const get = (path: string, headers: Record<string, string> = {}, on = app) =>
    on.app.inject({ method: 'GET', url: path, headers });

  it('serves js, react, node and nextjs, each an npm tarball of its package at the server version', async () => {
    expect(builtTarballs()).toEqual([
      'latchkey-js.tgz',
      'latchkey-nextjs.tgz',
      'latchkey-node.tgz',
      'latchkey-react.tgz',
    ]);
    for (const [file, name] of [
      ['latchkey-js.tgz', '@latchkey/js'],
      ['latchkey-react.tgz', '@latchkey/react'],
      ['latchkey-node.tgz', '@latchkey/node'],
      ['latchkey-nextjs.tgz', '@latchkey/nextjs'],
    ] as const) {
      const res = await get(`/sdk/npm/${file}`);
      expect(res.statusCode, file).toBe(200);
      expect(res.headers['content-type']).toBe('application/gzip');
      expect(res.headers['cache-control']).toBe('public, max-age=300');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers.etag).toMatch(/^"[\w-]{27}"$/);
      const all = await entries(res.rawPayload);
      // What npm reads: everything under package/, npm's fixed mtime on every entry.
      expect(
        all.every((e) => e.name.startsWith('package/')),
        file,
      ).toBe(true);
      expect(new Set(all.map((e) => e.mtime.toISOString()))).toEqual(
        new Set(['1985-10-26T08:15:00.000Z']),
      );
      expect(all.map((e) => e.name)).toEqual(
        expect.arrayContaining(['package/package.json', 'package/README.md', 'package/LICENSE']),
      );
      expect(await manifest(res.rawPayload)).toMatchObject({ name, version });
    }
  });

  it("gives @latchkey/react this server's own @latchkey/js, and leaves the others as built", async () => {
    const react = await get('/sdk/npm/latchkey-react.tgz');
    expect((await manifest(react.rawPayload)).dependencies).toEqual({
      '@latchkey/js': `${app.url}/sdk/npm/latchkey-js.tgz`,
    });
    // Nothing else of the tarball changed.
    const built = await entries(readFileSync(new URL('latchkey-react.tgz', DIST)));
    const served = await entries(react.rawPayload);
    expect(served.map((e) => e.name)).toEqual(built.map((e) => e.name));
    for (const [i, entry] of served.entries()) {
      if (entry.name !== 'package/package.json')
        expect(entry.data.equals(built[i]?.data as Buffer)).toBe(true);
    }
    for (const file of ['latchkey-js.tgz', 'latchkey-node.tgz']) {
      const res = await get(`/sdk/npm/${file}`);
      expect(res.rawPayload.equals(readFileSync(new URL(file, DIST))), file).toBe(true);
    }
    // @latchkey/node's own dependencies (jose; for cookie sessions, oauth4webapi and cookie)
    // come from the registry as usual.
    const node = await manifest((await get('/sdk/npm/latchkey-node.tgz')).rawPayload);
    expect(Object.keys(node.dependencies ?? {})).toEqual(['cookie', 'jose', 'oauth4webapi']);
    // @latchkey/nextjs gets this server's @latchkey/node, as @latchkey/react its @latchkey/js.
    const nextjs = await manifest((await get('/sdk/npm/latchkey-nextjs.tgz')).rawPayload);
    expect(nextjs.dependencies).toEqual({
      '@latchkey/node': `${app.url}/sdk/npm/latchkey-node.tgz`,
    });
  });

  it('sends the same bytes for the same build and URL, and other bytes for another URL', async () => {
    const first = await get('/sdk/npm/latchkey-react.tgz');
    const again = await get('/sdk/npm/latchkey-react.tgz');
    expect(again.rawPayload.equals(first.rawPayload)).toBe(true);
    const elsewhere = await get('/sdk/npm/latchkey-react.tgz', {}, other);
    expect(elsewhere.headers.etag).not.toBe(first.headers.etag);
    expect((await manifest(elsewhere.rawPayload)).dependencies?.['@latchkey/js']).toBe(
      `${other.url}/sdk/npm/latchkey-js.tgz`,
    );
    // The same URL on a second server: the same bytes (so a lockfile's integrity holds).
    const rebuilt = await servedTarball(
      fileURLToPath(DIST),
      'latchkey-react.tgz',
      app.url,
      builtTarballs(),
    );
    expect(rebuilt.bytes.equals(first.rawPayload)).toBe(true);
  });

  it('answers 304 to its ETag, HEAD without a body, 404 for a package it does not serve', async () => {
    const first = await get('/sdk/npm/latchkey-js.tgz');
    const etag = first.headers.etag as string;
    const again = await get('/sdk/npm/latchkey-js.tgz', { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    expect((await get('/sdk/npm/latchkey-js.tgz', { 'if-none-match': '"x"' })).statusCode).toBe(
      200,
    );
    const head = await app.app.inject({ method: 'HEAD', url: '/sdk/npm/latchkey-js.tgz' });
    expect(head.statusCode).toBe(200);
    expect(head.rawPayload.length).toBe(0);
    const missing = await get('/sdk/npm/latchkey-server.tgz');
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});
