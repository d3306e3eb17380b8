import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sha256Base64url } from '../../crypto/hash.js';
import { LatchkeyError } from '../../errors/index.js';

/** The built script of @latchkey/js, compressed once at start (docs/design.md §10.1). */
export interface BrowserScript {
  version: string;
  etag: string;
  identity: Buffer;
  gzip: Buffer;
  br: Buffer;
}

/** Reads `@latchkey/js/latchkey.js` (packages/js/dist); undefined when it was not built. */
export function loadBrowserScript(): BrowserScript | undefined {
  const require = createRequire(import.meta.url);
  let identity: Buffer;
  let version: string;
  try {
    identity = readFileSync(require.resolve('@latchkey/js/latchkey.js'));
    version = (require('@latchkey/js/package.json') as { version: string }).version;
  } catch {
    return undefined;
  }
  return {
    version,
    // Weak: the three encodings are the same script (RFC 9110 section 8.8.3).
    etag: `W/"${sha256Base64url(identity).slice(0, 27)}"`,
    identity,
    gzip: gzipSync(identity, { level: 9 }),
    br: brotliCompressSync(identity, {
      params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY },
    }),
  };
}

/** The coding the client prefers among br and gzip (RFC 9110 section 12.5.3), else none. */
export function chooseEncoding(header: string | undefined): 'br' | 'gzip' | undefined {
  const q: Record<string, number> = {};
  for (const part of (header ?? '').toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const weight = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find(Boolean);
    if (name) q[name] = weight === undefined ? 1 : Number(weight);
  }
  const of = (coding: string) => q[coding] ?? q['*'] ?? 0;
  if (of('br') > 0 && of('br') >= of('gzip')) return 'br';
  return of('gzip') > 0 ? 'gzip' : undefined;
}

/** `GET /sdk/latchkey.js` and `/sdk/latchkey@{version}.js`: the script tag's library. */
export function sdkRoutes(app: FastifyInstance, script = loadBrowserScript()) {
  if (!script) {
    app.log.warn('packages/js is not built: /sdk/latchkey.js answers 503 (run npm run build)');
  }
  const send = (cacheControl: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    if (!script) {
      throw new LatchkeyError(
        'service_unavailable',
        'The browser library is not built; run npm run build and restart',
      );
    }
    reply
      .header('content-type', 'text/javascript; charset=utf-8')
      .header('cache-control', cacheControl)
      .header('etag', script.etag)
      .header('vary', 'accept-encoding')
      .header('access-control-allow-origin', '*')
      .header('cross-origin-resource-policy', 'cross-origin')
      .header('x-content-type-options', 'nosniff');
    const match = request.headers['if-none-match'];
    if (match?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === script.etag.slice(2))) {
      return reply.code(304).send();
    }
    const encoding = chooseEncoding(request.headers['accept-encoding']);
    if (encoding) reply.header('content-encoding', encoding);
    return reply.send(encoding ? script[encoding] : script.identity);
  };
  // Hidden from the API document: a static asset, not an API operation.
  app.get('/sdk/latchkey.js', { schema: { hide: true } }, send('public, max-age=300'));
  if (script) {
    app.get(
      `/sdk/latchkey@${script.version}.js`,
      { schema: { hide: true } },
      send('public, max-age=31536000, immutable'),
    );
  }
}
