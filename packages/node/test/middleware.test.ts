import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createLatchkey,
  type Latchkey,
  type LatchkeyClaims,
  type MiddlewareOptions,
} from '../src/index.js';
import { closedPortUrl, FakeLatchkey } from './fake-latchkey.js';

// What the README tells users to write, so the hook and middleware type-check against both.
declare module 'fastify' {
  interface FastifyRequest {
    auth?: LatchkeyClaims | undefined;
  }
}
declare global {
  namespace Express {
    interface Request {
      auth?: LatchkeyClaims | undefined;
    }
  }
}

interface RunningApp {
  url: string;
  close(): Promise<void>;
}

/** Each app answers GET /me with `{ sub }` of `auth`, or `{ sub: null }` without it. */
const FRAMEWORKS: Record<
  string,
  (latchkey: Latchkey, options: MiddlewareOptions) => Promise<RunningApp>
> = {
  async express(latchkey, options) {
    const app = express();
    app.use(latchkey.expressMiddleware(options));
    app.get('/me', (req, res) => {
      res.json({ sub: req.auth?.sub ?? null });
    });
    return listen(createServer(app));
  },

  async fastify(latchkey, options) {
    const app = fastify();
    app.decorateRequest('auth', undefined);
    app.addHook('onRequest', latchkey.fastifyHook(options));
    app.get('/me', async (request) => ({ sub: request.auth?.sub ?? null }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
  },

  async 'node:http'(latchkey, options) {
    const handler = latchkey.nodeHandler((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ sub: req.auth?.sub ?? null }));
    }, options);
    return listen(createServer(handler));
  },
};

async function listen(server: Server): Promise<RunningApp> {
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

let service: FakeLatchkey;

beforeAll(async () => {
  service = await FakeLatchkey.start();
});
afterAll(() => service.close());

async function get(url: string, authorization?: string) {
  const response = await fetch(`${url}/me`, {
    headers: authorization === undefined ? {} : { authorization },
  });
  const text = await response.text();
  return { response, body: text ? JSON.parse(text) : undefined };
}

async function withApp<T>(
  framework: string,
  options: MiddlewareOptions,
  run: (url: string) => Promise<T>,
  latchkey: Latchkey = createLatchkey({
    apiUrl: service.url,
    tenantId: service.tenantId,
    secretKey: service.secretKey,
  }),
): Promise<T> {
  const start = FRAMEWORKS[framework];
  if (!start) throw new Error(framework);
  const app = await start(latchkey, options);
  try {
    return await run(app.url);
  } finally {
    await app.close();
  }
}

function expectUnauthorized(
  { response, body }: Awaited<ReturnType<typeof get>>,
  challenge: string,
): void {
  expect(response.status).toBe(401);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.headers.get('www-authenticate')).toBe(challenge);
  expect(body).toEqual({
    type: 'tag:latchkey.dev,2026:problem:unauthorized',
    title: 'Unauthorized',
    status: 401,
    detail: expect.any(String),
    code: 'unauthorized',
  });
}

for (const framework of Object.keys(FRAMEWORKS)) {
  describe(`${framework} middleware`, () => {
    for (const mode of ['local', 'introspect'] as const) {
      it(`${mode}: answers 401 problem+json without a token`, () =>
        withApp(framework, { mode }, async (url) => {
          expectUnauthorized(await get(url), 'Bearer');
          expectUnauthorized(await get(url, 'Basic YWRhOnB3'), 'Bearer');
        }));

      it(`${mode}: answers 401 for a bad token`, () =>
        withApp(framework, { mode }, async (url) => {
          const expired = await service.sign({ claims: { exp: 1 } });
          for (const authorization of [
            'Bearer garbage',
            `Bearer ${expired}`,
            'Bearer ',
            'Bearer a b',
          ]) {
            const result = await get(url, authorization);
            expectUnauthorized(result, 'Bearer error="invalid_token"');
            expect(JSON.stringify(result.body)).not.toContain(expired);
          }
        }));

      it(`${mode}: passes a good token's claims to the handler`, () =>
        withApp(framework, { mode }, async (url) => {
          const claims = service.claims();
          const token = await service.sign({ claims });
          const { response, body } = await get(url, `Bearer ${token}`);
          expect(response.status).toBe(200);
          expect(body).toEqual({ sub: claims.sub });
          // The scheme is case-insensitive (RFC 9110 section 11.1).
          expect((await get(url, `bearer ${token}`)).body).toEqual({ sub: claims.sub });
        }));
    }

    it('introspect: refuses a token of a revoked session at once', () =>
      withApp(framework, { mode: 'introspect' }, async (url) => {
        const claims = service.claims();
        const token = await service.sign({ claims });
        expect((await get(url, `Bearer ${token}`)).response.status).toBe(200);
        service.revokedSessions.add(String(claims.sid));
        expectUnauthorized(await get(url, `Bearer ${token}`), 'Bearer error="invalid_token"');
      }));

    it('optional: lets a request without a token through, but not a bad token', () =>
      withApp(framework, { optional: true }, async (url) => {
        const { response, body } = await get(url);
        expect(response.status).toBe(200);
        expect(body).toEqual({ sub: null });
        expectUnauthorized(await get(url, 'Bearer garbage'), 'Bearer error="invalid_token"');
        const claims = service.claims();
        expect((await get(url, `Bearer ${await service.sign({ claims })}`)).body).toEqual({
          sub: claims.sub,
        });
      }));

    it('answers 503 when the keys cannot be fetched, and reports the error', async () => {
      const onError = vi.fn();
      const down = createLatchkey({ apiUrl: await closedPortUrl(), tenantId: service.tenantId });
      await withApp(
        framework,
        { onError },
        async (url) => {
          const { response, body } = await get(url, `Bearer ${await service.sign()}`);
          expect(response.status).toBe(503);
          expect(body).toMatchObject({ status: 503, code: 'service_unavailable' });
          expect(onError).toHaveBeenCalledWith(
            expect.objectContaining({ code: 'jwks_unavailable' }),
          );
        },
        down,
      );
    });
  });
}

describe('middleware set-up', () => {
  it('fails at set-up, with what to do, when the mode is not configured', () => {
    const latchkey = createLatchkey({ apiUrl: service.url, tenantId: '', secretKey: '' });
    expect(() => latchkey.expressMiddleware()).toThrow(/LATCHKEY_TENANT_ID/);
    expect(() => latchkey.fastifyHook({ mode: 'introspect' })).toThrow(/LATCHKEY_SECRET_KEY/);
    expect(() => latchkey.nodeHandler(() => {}, { mode: 'magic' as 'local' })).toThrow(
      expect.objectContaining({ code: 'option_invalid' }),
    );
  });

  it('types auth as present in a protected node:http handler', () => {
    const latchkey = createLatchkey({ apiUrl: service.url, tenantId: service.tenantId });
    latchkey.nodeHandler((req, res) => res.end(req.auth.sub));
    latchkey.nodeHandler((req, res) => res.end(req.auth?.sub), { optional: true });
    // @ts-expect-error: under optional: true, auth may be undefined
    latchkey.nodeHandler((req, res) => res.end(req.auth.sub), { optional: true });
  });
});
