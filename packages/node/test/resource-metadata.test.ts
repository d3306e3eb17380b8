/**
 * RFC 9728 protected-resource metadata (docs/design.md §14): the document and where it is
 * served (section 3.1), served by Express, Fastify, node:http and as a Web `Response` (Hono
 * and the like), and the middleware's 401s pointing at it (section 5.1). The last suite is
 * an MCP client's discovery against the real service: 401, the metadata, the issuer's
 * discovery document, then the call with a token.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import fastify from 'fastify';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestTenant } from '../../server/test/support.js';
import {
  type FastifyLikeRequest,
  type Latchkey,
  type MiddlewareOptions,
  type ProtectedResourceMetadata,
  protectedResourceMetadata,
} from '../src/index.js';
import {
  PUBLIC_URL,
  type RealLatchkey,
  type Session,
  startLatchkey,
  viaLoopback,
} from './latchkey-server.js';

const ISSUER = 'https://auth.example.com/t/7f9c2a4e-1b3d-4c5e-8f6a-9b0c1d2e3f40';

interface Running {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<Running> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * An API in each framework: the metadata at its path, and GET /mcp protected by the
 * middleware with `options`, answering `{ sub }`.
 */
const FRAMEWORKS: Record<
  string,
  (
    metadata: ProtectedResourceMetadata,
    latchkey?: Latchkey,
    options?: MiddlewareOptions,
  ) => Promise<Running>
> = {
  async express(metadata, latchkey, options) {
    const app = express();
    app.get(metadata.path, metadata.nodeHandler);
    app.options(metadata.path, metadata.nodeHandler);
    if (latchkey)
      app.get('/mcp', latchkey.expressMiddleware(options), (req, res) => {
        res.json({ sub: req.auth?.sub });
      });
    return listen(createServer(app));
  },

  async fastify(metadata, latchkey, options) {
    const app = fastify();
    app.route({ method: ['GET', 'OPTIONS'], url: metadata.path, handler: metadata.fastifyHandler });
    if (latchkey) {
      const hook = latchkey.fastifyHook(options);
      app.decorateRequest('auth', undefined);
      app.get('/mcp', {
        onRequest: (request, reply) => hook(request as FastifyLikeRequest, reply),
        handler: async (request) => ({ sub: (request as FastifyLikeRequest).auth?.sub }),
      });
    }
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
  },

  async 'node:http'(metadata, latchkey, options) {
    const api = latchkey?.nodeHandler((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ sub: req.auth?.sub }));
    }, options);
    return listen(
      createServer((req, res) => {
        if (req.url === metadata.path) return metadata.nodeHandler(req, res);
        if (req.url === '/mcp' && api) return void api(req, res);
        res.writeHead(404).end();
      }),
    );
  },

  /** The Web API handler (Hono's `c.req.raw` in, a `Response` out), bridged to node:http. */
  async fetch(metadata) {
    return listen(
      createServer(async (req, res) => {
        const response = metadata.fetchHandler(
          new Request(`http://127.0.0.1${req.url}`, { method: req.method }),
        );
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
      }),
    );
  },
};

describe('protectedResourceMetadata', () => {
  it('describes the resource and its authorization server (RFC 9728 section 2)', () => {
    const metadata = protectedResourceMetadata({
      resource: 'https://api.example.com/mcp',
      issuer: ISSUER,
      scopesSupported: ['files:read', 'files:write'],
      resourceName: 'Example files',
      resourceDocumentation: 'https://docs.example.com/api',
    });
    expect(metadata.document).toEqual({
      resource: 'https://api.example.com/mcp',
      authorization_servers: [ISSUER],
      bearer_methods_supported: ['header'],
      scopes_supported: ['files:read', 'files:write'],
      resource_name: 'Example files',
      resource_documentation: 'https://docs.example.com/api',
    });
    // Section 3.1: the well-known segment between the host and the resource's path.
    expect(metadata.path).toBe('/.well-known/oauth-protected-resource/mcp');
    expect(metadata.url).toBe('https://api.example.com/.well-known/oauth-protected-resource/mcp');
    expect(Object.isFrozen(metadata.document)).toBe(true);
  });

  it('serves a resource without a path at the bare well-known path, and keeps the resource as written', () => {
    for (const resource of ['https://api.example.com', 'https://api.example.com/']) {
      const metadata = protectedResourceMetadata({ resource, issuer: ISSUER });
      expect(metadata.path).toBe('/.well-known/oauth-protected-resource');
      expect(metadata.url).toBe('https://api.example.com/.well-known/oauth-protected-resource');
      // A client compares it with the URL it started from (section 3.3).
      expect(metadata.document).toEqual({
        resource,
        authorization_servers: [ISSUER],
        bearer_methods_supported: ['header'],
      });
    }
    // A terminating slash of a path is removed (section 3.1).
    expect(
      protectedResourceMetadata({ resource: 'https://api.example.com/v1/mcp/', issuer: ISSUER })
        .path,
    ).toBe('/.well-known/oauth-protected-resource/v1/mcp');
    expect(
      protectedResourceMetadata({ resource: 'http://localhost:3000/mcp', issuer: ISSUER }).url,
    ).toBe('http://localhost:3000/.well-known/oauth-protected-resource/mcp');
  });

  it('refuses options that would publish a wrong or unsafe document, with what to do', () => {
    const refused: Record<string, unknown>[] = [
      { resource: 'http://api.example.com/mcp', issuer: ISSUER },
      { resource: 'https://api.example.com/mcp#top', issuer: ISSUER },
      { resource: 'https://api.example.com/mcp?tenant=1', issuer: ISSUER },
      { resource: 'https://user:pw@api.example.com/mcp', issuer: ISSUER },
      { resource: 'api.example.com/mcp', issuer: ISSUER },
      { resource: 'https://api.example.com/mcp' },
      { resource: 'https://api.example.com/mcp', issuer: 'http://auth.example.com/t/x' },
      { resource: 'https://api.example.com/mcp', issuer: ISSUER, scopesSupported: 'files:read' },
      { resource: 'https://api.example.com/mcp', issuer: ISSUER, scopesSupported: ['a b'] },
      { resource: 'https://api.example.com/mcp', issuer: ISSUER, resourceName: '' },
    ];
    for (const options of refused) {
      expect(() => protectedResourceMetadata(options as never), JSON.stringify(options)).toThrow(
        expect.objectContaining({
          code: 'option_invalid',
          reason: expect.any(String),
          action: expect.any(String),
        }),
      );
    }
  });

  for (const framework of Object.keys(FRAMEWORKS)) {
    it(`${framework}: serves the document as public JSON, with a CORS preflight`, async () => {
      const metadata = protectedResourceMetadata({
        resource: 'https://api.example.com/mcp',
        issuer: ISSUER,
      });
      const app = await (
        FRAMEWORKS[framework] as (m: ProtectedResourceMetadata) => Promise<Running>
      )(metadata);
      try {
        const res = await fetch(app.url + metadata.path);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
        expect(await res.json()).toEqual(metadata.document);

        // A browser-based client's own headers (MCP-Protocol-Version) make it ask first.
        const preflight = await fetch(app.url + metadata.path, {
          method: 'OPTIONS',
          headers: {
            origin: 'https://inspector.example',
            'access-control-request-method': 'GET',
            'access-control-request-headers': 'mcp-protocol-version',
          },
        });
        expect(preflight.status).toBe(204);
        expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
        expect(preflight.headers.get('access-control-allow-headers')).toBe('*');
      } finally {
        await app.close();
      }
    });
  }

  it('answers a method other than GET, HEAD and OPTIONS with 405 and Allow', async () => {
    const metadata = protectedResourceMetadata({
      resource: 'http://localhost/mcp',
      issuer: ISSUER,
    });
    const app = await (
      FRAMEWORKS['node:http'] as (m: ProtectedResourceMetadata) => Promise<Running>
    )(metadata);
    try {
      const res = await fetch(app.url + metadata.path, { method: 'POST', body: '{}' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
      const head = await fetch(app.url + metadata.path, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(Number(head.headers.get('content-length'))).toBe(
        Buffer.byteLength(JSON.stringify(metadata.document)),
      );
    } finally {
      await app.close();
    }
    const response = metadata.fetchHandler(new Request('http://localhost/', { method: 'DELETE' }));
    expect([response.status, response.headers.get('allow')]).toEqual([405, 'GET, HEAD, OPTIONS']);
  });
});

describe('the middleware points its 401s at the metadata (RFC 9728 section 5.1)', () => {
  let service: RealLatchkey;
  let t: TestTenant;
  let ada: Session;

  beforeAll(async () => {
    service = await startLatchkey();
    t = await service.tenant();
    ada = await service.session(t);
  });
  afterAll(() => service?.dispose());

  const metadataOf = () =>
    protectedResourceMetadata({ resource: 'http://localhost:3000/mcp', issuer: service.issuer(t) });
  const call = (url: string, authorization?: string) =>
    fetch(`${url}/mcp`, { headers: authorization ? { authorization } : {} });

  for (const framework of ['express', 'fastify', 'node:http']) {
    it(`${framework}: no token, a refused token and a short sign-in each name resource_metadata`, async () => {
      const metadata = metadataOf();
      const where = `resource_metadata="${metadata.url}"`;
      const start = FRAMEWORKS[framework] as (typeof FRAMEWORKS)[string];
      const api = await start(metadata, service.client(t), { resourceMetadata: metadata.url });
      const stepUp = await start(metadata, service.client(t), {
        resourceMetadata: metadata.url,
        requireAmr: ['mfa'],
      });
      try {
        const none = await call(api.url);
        expect(none.status).toBe(401);
        // RFC 6750 section 3.1: no error code when no token came.
        expect(none.headers.get('www-authenticate')).toBe(`Bearer ${where}`);
        expect(((await none.json()) as { code: string }).code).toBe('unauthorized');

        const refused = await call(api.url, 'Bearer not-a-token');
        expect(refused.status).toBe(401);
        expect(refused.headers.get('www-authenticate')).toBe(
          `Bearer error="invalid_token", ${where}`,
        );

        const ok = await call(api.url, `Bearer ${ada.accessToken}`);
        expect(ok.status).toBe(200);
        expect(await ok.json()).toEqual({ sub: ada.user.id });

        const short = await call(stepUp.url, `Bearer ${ada.accessToken}`);
        expect(short.status).toBe(401);
        expect(short.headers.get('www-authenticate')).toBe(
          `Bearer error="insufficient_user_authentication", error_description="A stronger or different authentication is required", ${where}`,
        );
      } finally {
        await Promise.all([api.close(), stepUp.close()]);
      }
    });
  }

  it('without the option the challenges stay as they were', async () => {
    const api = await (FRAMEWORKS.express as (typeof FRAMEWORKS)[string])(
      metadataOf(),
      service.client(t),
    );
    try {
      expect((await call(api.url)).headers.get('www-authenticate')).toBe('Bearer');
      expect((await call(api.url, 'Bearer x')).headers.get('www-authenticate')).toBe(
        'Bearer error="invalid_token"',
      );
    } finally {
      await api.close();
    }
  });

  it('refuses a resourceMetadata that is not an https URL at set-up', () => {
    const latchkey = service.client(t);
    for (const resourceMetadata of [
      '/.well-known/oauth-protected-resource',
      'http://api.example.com/x',
      'https://api.example.com/#x',
    ]) {
      expect(() => latchkey.expressMiddleware({ resourceMetadata })).toThrow(
        expect.objectContaining({ code: 'option_invalid' }),
      );
    }
  });

  it('an MCP client discovers the authorization server from a 401 and calls the API with its token', async () => {
    const metadata = metadataOf();
    const api = await (FRAMEWORKS.express as (typeof FRAMEWORKS)[string])(
      metadata,
      service.client(t, { audience: `${service.issuer(t)}/api` }),
      { resourceMetadata: metadata.url },
    );
    try {
      // 1. The API refuses a call without a token and says where its metadata is.
      const challenge = (await call(api.url)).headers.get('www-authenticate') ?? '';
      const found = /resource_metadata="([^"]+)"/.exec(challenge)?.[1] ?? '';
      expect(found).toBe(metadata.url);
      // 2. The metadata (this API is on 127.0.0.1 here, not localhost:3000).
      const doc = (await (await fetch(api.url + new URL(found).pathname)).json()) as {
        resource: string;
        authorization_servers: string[];
      };
      expect(doc.resource).toBe('http://localhost:3000/mcp');
      // 3. The authorization server's own metadata, at the RFC 8414 path of its issuer.
      const [issuer = ''] = doc.authorization_servers;
      const { origin, pathname } = new URL(issuer);
      const discovery = await viaLoopback(service.url)(
        `${origin}/.well-known/oauth-authorization-server${pathname}`,
      );
      expect(discovery.status).toBe(200);
      const as = (await discovery.json()) as { issuer: string; jwks_uri: string };
      expect(as.issuer).toBe(issuer);
      expect(as.jwks_uri).toBe(`${issuer}/.well-known/jwks.json`);
      // 4. A token of that issuer opens the API.
      expect(decodeJwt(ada.accessToken).iss).toBe(issuer);
      expect(PUBLIC_URL).toBe(origin);
      const ok = await call(api.url, `Bearer ${ada.accessToken}`);
      expect(await ok.json()).toEqual({ sub: ada.user.id });
    } finally {
      await api.close();
    }
  });
});
