import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { constants, gunzipSync, gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { extract, type Header, pack } from 'tar-stream';
import { sha256Base64url } from '../../crypto/hash.js';
import { LatchkeyError } from '../../errors/index.js';

/**
 * The client packages as npm tarballs (docs/design.md §10.1): `npm install
 * {auth_url}/sdk/npm/latchkey-react.tgz`. build.mjs packs them into dist/npm/ with `npm pack`;
 * here a package that depends on another one served here gets that dependency as this
 * server's URL, so that installing it needs no registry for our packages.
 */
export interface Tarball {
  /** The `name` of its package.json, e.g. `@latchkey/react`. */
  packageName: string;
  version: string;
  etag: string;
  bytes: Buffer;
}

/** Where build.mjs puts the tarballs: `dist/npm/` of @latchkey/server, from src/ or the bundle. */
function tarballFolder(): string | undefined {
  try {
    const manifest = createRequire(import.meta.url).resolve('@latchkey/server/package.json');
    return join(dirname(manifest), 'dist', 'npm');
  } catch {
    return undefined;
  }
}

/** The tarballs' file names, e.g. `latchkey-js.tgz`; none when the server was not built. */
export function builtTarballs(folder = tarballFolder()): string[] {
  if (!folder) return [];
  try {
    return readdirSync(folder)
      .filter((file) => file.endsWith('.tgz'))
      .sort();
  } catch {
    return [];
  }
}

/** Where `@scope/name` is served: npm pack's file name without the version (as build.mjs). */
export const tarballName = (packageName: string) =>
  `${packageName.replace(/^@/, '').replace('/', '-')}.tgz`;

interface Entry {
  header: Header;
  data: Buffer;
}

async function readEntries(tar: Buffer): Promise<Entry[]> {
  const entries: Entry[] = [];
  const reader = extract();
  const done = new Promise<void>((resolve, reject) => {
    reader.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk) => chunks.push(chunk as Buffer));
      stream.on('end', () => {
        entries.push({ header, data: Buffer.concat(chunks) });
        next();
      });
      stream.on('error', reject);
    });
    reader.on('finish', resolve);
    reader.on('error', reject);
  });
  reader.end(tar);
  await done;
  return entries;
}

async function writeEntries(entries: Entry[]): Promise<Buffer> {
  const writer = pack();
  const chunks: Buffer[] = [];
  const collected = new Promise<void>((resolve, reject) => {
    writer.on('data', (chunk) => chunks.push(chunk as Buffer));
    writer.on('end', resolve);
    writer.on('error', reject);
  });
  for (const { header, data } of entries) {
    // The header as npm wrote it (its fixed mtime, modes, owner 0), with the new size.
    const { pax: _pax, ...rest } = header;
    await new Promise<void>((resolve, reject) =>
      writer.entry({ ...rest, size: data.length }, data, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
  }
  writer.finalize();
  await collected;
  return Buffer.concat(chunks);
}

/**
 * The tarball `file` of `folder` as this server hands it out: as built, or, when its package
 * depends on another package served here, with that dependency pointing at
 * `{publicUrl}/sdk/npm/{file}`. Deterministic: the same build and URL give the same bytes
 * (npm's fixed mtimes are kept; gzip writes no time), so a lockfile's integrity holds.
 */
export async function servedTarball(
  folder: string,
  file: string,
  publicUrl: string,
  served: readonly string[],
): Promise<Tarball> {
  const built = readFileSync(join(folder, file));
  const entries = await readEntries(gunzipSync(built));
  const manifestEntry = entries.find((e) => e.header.name === 'package/package.json');
  if (!manifestEntry) throw new Error(`${file} has no package/package.json`);
  const manifest = JSON.parse(manifestEntry.data.toString('utf8')) as {
    name: string;
    version: string;
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };
  let changed = false;
  for (const field of ['dependencies', 'optionalDependencies'] as const) {
    for (const name of Object.keys(manifest[field] ?? {})) {
      const dependency = tarballName(name);
      if (!served.includes(dependency)) continue;
      (manifest[field] as Record<string, string>)[name] = `${publicUrl}/sdk/npm/${dependency}`;
      changed = true;
    }
  }
  let bytes = built;
  if (changed) {
    manifestEntry.data = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
    bytes = gzipSync(await writeEntries(entries), { level: constants.Z_BEST_COMPRESSION });
  }
  return {
    packageName: manifest.name,
    version: manifest.version,
    // Strong: one representation, sent as is.
    etag: `"${sha256Base64url(bytes).slice(0, 27)}"`,
    bytes,
  };
}

/**
 * `GET /sdk/npm/{name}.tgz` for every tarball the build made. Each is read and, if needed,
 * rewritten on its first request, then kept in memory.
 */
export function sdkPackageRoutes(
  app: FastifyInstance,
  publicUrl: string,
  folder = tarballFolder(),
): void {
  const files = builtTarballs(folder);
  if (!folder || files.length === 0) {
    app.log.warn('the client packages are not built: /sdk/npm/ answers 404 (run npm run build)');
    return;
  }
  const cache = new Map<string, Promise<Tarball>>();
  const load = (file: string) => {
    let tarball = cache.get(file);
    if (!tarball) {
      tarball = servedTarball(folder, file, publicUrl, files);
      // A failure (a file removed under a running server) is retried on the next request.
      tarball.catch(() => cache.delete(file));
      cache.set(file, tarball);
    }
    return tarball;
  };
  const send = (file: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    let tarball: Tarball;
    try {
      tarball = await load(file);
    } catch (error) {
      request.log.error({ err: error, file }, 'a client package tarball could not be read');
      throw new LatchkeyError(
        'service_unavailable',
        'The client packages are not built; run npm run build and restart',
      );
    }
    reply
      .header('content-type', 'application/gzip')
      // Unversioned: caches check back after five minutes (the ETag makes that cheap).
      .header('cache-control', 'public, max-age=300')
      .header('etag', tarball.etag)
      .header('access-control-allow-origin', '*')
      .header('cross-origin-resource-policy', 'cross-origin')
      .header('x-content-type-options', 'nosniff');
    const match = request.headers['if-none-match'];
    if (match?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === tarball.etag)) {
      return reply.code(304).send();
    }
    return reply.send(tarball.bytes);
  };
  for (const file of files) {
    // Hidden from the API document: a static asset, like /sdk/latchkey.js.
    app.get(`/sdk/npm/${file}`, { schema: { hide: true } }, send(file));
  }
}
