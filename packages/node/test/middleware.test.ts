import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import fastify from 'fastify';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestTenant } from '../../server/test/support.js';
import {
  createLatchkey,
  type FastifyLikeRequest,
  type Latchkey,
  type LatchkeyClaims,
  type MiddlewareOptions,
} from '../src/index.js';
import {
  PUBLIC_URL,
  type RealLatchkey,
  type Session,
  startLatchkey,
  stoppedLatchkey,
  viaLoopback,
} from './latchkey-server.js';

// What the README tells Express users to write, so the middleware type-checks against it.
// (The README's Fastify augmentation is type-checked in test/readme/: this program also holds
// the server's own `FastifyRequest.auth`, its API key context, because it imports the server.)
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
    const hook = latchkey.fastifyHook(options);
    app.decorateRequest('auth', undefined);
    app.addHook('onRequest', (request, reply) => hook(request as FastifyLikeRequest, reply));
    app.get('/me', async (request) => ({
      sub: (request as FastifyLikeRequest).auth?.sub ?? null,
    }));
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

let service: RealLatchkey;
let t: TestTenant;
let ada: Session;
let expired: string;
let stopped: Awaited<ReturnType<typeof stoppedLatchkey>>;

beforeAll(async () => {
  [service, stopped] = await Promise.all([startLatchkey(), stoppedLatchkey()]);
  t = await service.tenant();
  ada = await service.session(t);
  const now = Math.floor(Date.now() / 1000);
  expired = await service.forge(t, {
    claims: { ...decodeJwt(ada.accessToken), iat: now - 1200, exp: now - 600 },
  });
});
afterAll(() => service.dispose());

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
  latchkey: Latchkey = service.client(t),
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
  describe(`${framework} middleware against the real service`, () => {
    for (const mode of ['local', 'introspect'] as const) {
      it(`${mode}: answers 401 problem+json without a token`, () =>
        withApp(framework, { mode }, async (url) => {
          expectUnauthorized(await get(url), 'Bearer');
          expectUnauthorized(await get(url, 'Basic YWRhOnB3'), 'Bearer');
        }));

      it(`${mode}: answers 401 for a bad token`, () =>
        withApp(framework, { mode }, async (url) => {
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

      it(`${mode}: passes a real token's claims to the handler`, () =>
        withApp(framework, { mode }, async (url) => {
          const { response, body } = await get(url, `Bearer ${ada.accessToken}`);
          expect(response.status).toBe(200);
          expect(body).toEqual({ sub: ada.user.id });
          // The scheme is case-insensitive (RFC 9110 section 11.1).
          expect((await get(url, `bearer ${ada.accessToken}`)).body).toEqual({ sub: ada.user.id });
        }));

      it(`${mode}: with an audience, refuses a token meant for another API`, async () => {
        const ours = `${PUBLIC_URL}/t/${t.tenant.id}/api`;
        const accepted = service.client(t, { audience: ours });
        await withApp(
          framework,
          { mode },
          async (url) => {
            expect((await get(url, `Bearer ${ada.accessToken}`)).body).toEqual({
              sub: ada.user.id,
            });
          },
          accepted,
        );
        const billing = service.client(t, { audience: 'https://billing.example/api' });
        await withApp(
          framework,
          { mode },
          async (url) => {
            expectUnauthorized(
              await get(url, `Bearer ${ada.accessToken}`),
              'Bearer error="invalid_token"',
            );
          },
          billing,
        );
      });
    }

    for (const mode of ['local', 'introspect'] as const) {
      it(`${mode}: requireAmr refuses a token whose sign-in falls short (RFC 9470), and passes one that meets it`, async () => {
        // Ada signed in with a password: her token says amr ["pwd"].
        expect(decodeJwt(ada.accessToken).amr).toEqual(['pwd']);
        const mfa = await service.forge(t, {
          claims: { ...decodeJwt(ada.accessToken), amr: ['pwd', 'otp', 'mfa'] },
        });
        const legacy = await service.forge(t, {
          claims: { ...decodeJwt(ada.accessToken), amr: undefined },
        });
        await withApp(framework, { mode, requireAmr: ['mfa'] }, async (url) => {
          for (const token of [ada.accessToken, legacy]) {
            const { response, body } = await get(url, `Bearer ${token}`);
            expect(response.status).toBe(401);
            expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
            expect(response.headers.get('www-authenticate')).toMatch(
              /^Bearer error="insufficient_user_authentication", error_description="[^"]+"$/,
            );
            expect(body).toEqual({
              type: 'tag:latchkey.dev,2026:problem:insufficient_user_authentication',
              title: 'Insufficient user authentication',
              status: 401,
              detail: expect.stringContaining('sign in again'),
              code: 'insufficient_user_authentication',
            });
          }
          expect((await get(url, `Bearer ${mfa}`)).body).toEqual({ sub: ada.user.id });
          // An invalid token is still invalid_token, not a step-up.
          expectUnauthorized(await get(url, 'Bearer garbage'), 'Bearer error="invalid_token"');
        });
        await withApp(
          framework,
          { mode, requireAmr: (amr) => amr.includes('pwd') || amr.includes('fed') },
          async (url) => {
            expect((await get(url, `Bearer ${ada.accessToken}`)).body).toEqual({
              sub: ada.user.id,
            });
            expect((await get(url, `Bearer ${legacy}`)).response.status).toBe(401);
          },
        );
      });
    }

    it('a revoked session: introspect answers 401 at once, local accepts the token until its exp', async () => {
      const s = await service.session(t);
      await withApp(framework, { mode: 'introspect' }, (introspected) =>
        withApp(framework, { mode: 'local' }, async (local) => {
          expect((await get(introspected, `Bearer ${s.accessToken}`)).body).toEqual({
            sub: s.user.id,
          });
          expect((await get(local, `Bearer ${s.accessToken}`)).body).toEqual({ sub: s.user.id });

          await service.revoke(t, s.sessionId);

          expectUnauthorized(
            await get(introspected, `Bearer ${s.accessToken}`),
            'Bearer error="invalid_token"',
          );
          // The documented trade-off of local verification (README, "verifyToken or
          // introspect?"): the signature and exp are still good, so the token is accepted.
          const { response, body } = await get(local, `Bearer ${s.accessToken}`);
          expect(response.status).toBe(200);
          expect(body).toEqual({ sub: s.user.id });
        }),
      );
    });

    it('optional: lets a request without a token through, but not a bad token', () =>
      withApp(framework, { optional: true }, async (url) => {
        const { response, body } = await get(url);
        expect(response.status).toBe(200);
        expect(body).toEqual({ sub: null });
        expectUnauthorized(await get(url, 'Bearer garbage'), 'Bearer error="invalid_token"');
        expect((await get(url, `Bearer ${ada.accessToken}`)).body).toEqual({ sub: ada.user.id });
      }));

    it('local: answers 503 when the service is down, and reports jwks_unavailable', async () => {
      const onError = vi.fn();
      const down = createLatchkey({
        tenantId: stopped.tenant.tenant.id,
        authUrl: PUBLIC_URL,
        fetch: viaLoopback(stopped.url),
      });
      await withApp(
        framework,
        { onError },
        async (url) => {
          const { response, body } = await get(url, `Bearer ${stopped.token}`);
          expect(response.status).toBe(503);
          expect(body).toMatchObject({ status: 503, code: 'service_unavailable' });
          expect(onError).toHaveBeenCalledWith(
            expect.objectContaining({ code: 'jwks_unavailable' }),
          );
        },
        down,
      );
    });

    it('introspect: answers 503 when the service is down, and reports api_unreachable', async () => {
      const onError = vi.fn();
      const down = createLatchkey({ apiUrl: stopped.url, secretKey: stopped.tenant.secretKey });
      await withApp(
        framework,
        { mode: 'introspect', onError },
        async (url) => {
          const { response, body } = await get(url, `Bearer ${stopped.token}`);
          expect(response.status).toBe(503);
          expect(body).toMatchObject({ status: 503, code: 'service_unavailable' });
          expect(onError).toHaveBeenCalledWith(
            expect.objectContaining({ code: 'api_unreachable' }),
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

  it('refuses a requireAmr that is neither a list of values nor a function', () => {
    const latchkey = service.client(t);
    for (const requireAmr of ['mfa', [''], [1]]) {
      expect(() =>
        latchkey.expressMiddleware({ requireAmr } as unknown as MiddlewareOptions),
      ).toThrow(expect.objectContaining({ code: 'option_invalid' }));
    }
  });

  it('types auth as present in a protected node:http handler', () => {
    const latchkey = service.client(t);
    latchkey.nodeHandler((req, res) => res.end(req.auth.sub));
    latchkey.nodeHandler((req, res) => res.end(req.auth?.sub), { optional: true });
    // @ts-expect-error: under optional: true, auth may be undefined
    latchkey.nodeHandler((req, res) => res.end(req.auth.sub), { optional: true });
  });
});
