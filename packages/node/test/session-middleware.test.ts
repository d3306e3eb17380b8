/**
 * docs/design.md §15: `latchkeySession()` in Express, Fastify and Hono apps, driven over
 * HTTP by a browser that keeps the app's cookies and signs in on the real server's hosted
 * form: the protected page sends it to sign in and back, the token is refreshed while it
 * browses, a session revoked in Latchkey costs one trip to sign-in (no loop), sign-out ends it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import fastify from 'fastify';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../server/test/support.js';
import {
  type LatchkeySessionMiddleware,
  type LatchkeySessionVariables,
  latchkeySession,
  type Session,
  type SessionFastifyRequest,
} from '../src/index.js';
import { Jar, OAuthBrowser, type Provider, startProvider, type User } from './session-support.js';

interface RunningApp {
  /** The app's answer to a request for `url` (on its origin). */
  fetch(url: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

type Make = (sessions: (appBase: string) => Promise<LatchkeySessionMiddleware>) => Promise<{
  base: string;
  app: RunningApp;
}>;

/** Each app: `/` public, `/dashboard` (HTML) and `/api/me` (JSON) behind requireSession. */
const FRAMEWORKS: Record<string, Make> = {
  async express(sessions) {
    const server: Server = createServer();
    const base = await listen(server);
    const s = await sessions(base);
    const app = express();
    app.use(s.express());
    const auth = (req: unknown) => (req as { auth?: Session | null }).auth;
    app.get('/', (req, res) => {
      res.json({ email: auth(req)?.email ?? null });
    });
    app.get('/dashboard', s.requireSession.express(), (req, res) => {
      res.append('set-cookie', 'theme=dark; Path=/');
      res.type('html').send(`<p>Signed in as ${auth(req)?.email}</p>`);
    });
    app.get('/api/me', s.requireSession.express(), (req, res) => {
      const session = auth(req);
      res.json({ userId: session?.userId, sessionId: session?.sessionId, email: session?.email });
    });
    server.on('request', app);
    return { base, app: overHttp(server) };
  },

  async fastify(sessions) {
    const probe = createServer();
    const base = await listen(probe);
    await new Promise((resolve) => probe.close(resolve));
    const s = await sessions(base);
    const app = fastify();
    app.decorateRequest('auth', null);
    app.addHook('onRequest', (request, reply) =>
      s.fastify()(request as SessionFastifyRequest, reply),
    );
    const guard = s.requireSession.fastify();
    const auth = (request: unknown) => (request as { auth?: Session | null }).auth;
    app.get('/', async (request) => ({ email: auth(request)?.email ?? null }));
    app.get(
      '/dashboard',
      { preHandler: (request, reply) => guard(request as SessionFastifyRequest, reply) },
      async (request, reply) => {
        reply.header('set-cookie', 'theme=dark; Path=/');
        reply.type('text/html');
        return `<p>Signed in as ${auth(request)?.email}</p>`;
      },
    );
    app.get(
      '/api/me',
      { preHandler: (request, reply) => guard(request as SessionFastifyRequest, reply) },
      async (request) => {
        const session = auth(request);
        return { userId: session?.userId, sessionId: session?.sessionId, email: session?.email };
      },
    );
    await app.listen({ port: Number(new URL(base).port), host: '127.0.0.1' });
    return {
      base,
      app: {
        fetch: (url, init) => fetch(url, { ...init, redirect: 'manual' }),
        close: () => app.close(),
      },
    };
  },

  async hono(sessions) {
    const base = 'http://127.0.0.1:3998'; // app.request() runs it in process: nothing listens
    const s = await sessions(base);
    const app = new Hono<{ Variables: LatchkeySessionVariables }>();
    app.use(s.hono());
    app.get('/', (c) => c.json({ email: c.get('auth')?.email ?? null }));
    app.get('/dashboard', s.requireSession.hono(), (c) => {
      c.header('set-cookie', 'theme=dark; Path=/', { append: true });
      return c.html(`<p>Signed in as ${c.get('auth')?.email}</p>`);
    });
    app.get('/api/me', s.requireSession.hono(), (c) => {
      const session = c.get('auth');
      return c.json({
        userId: session?.userId,
        sessionId: session?.sessionId,
        email: session?.email,
      });
    });
    return {
      base,
      app: { fetch: async (url, init) => app.request(url, init), close: async () => {} },
    };
  },
};

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function overHttp(server: Server): RunningApp {
  return {
    fetch: (url, init) => fetch(url, { ...init, redirect: 'manual' }),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each(DIALECTS)('cookie sessions in Node frameworks, Latchkey on %s', (dialect) => {
  let provider: Provider;

  beforeAll(async () => {
    provider = await startProvider(dialect);
  });
  afterAll(() => provider?.dispose());

  describe.each(Object.keys(FRAMEWORKS))('%s', (framework) => {
    let base: string;
    let app: RunningApp;

    let client: { id: string; secret: string };

    beforeAll(async () => {
      // The app is registered once its origin (its port) is known.
      ({ base, app } = await (FRAMEWORKS[framework] as Make)(async (appBase) => {
        client = await provider.register(appBase);
        return latchkeySession(provider.config(client, appBase));
      }));
    });
    afterAll(() => app?.close());

    /** A browser: the app's cookies in `jar`, Latchkey's in `latchkey`. */
    function browser() {
      const jar = new Jar();
      const latchkey = new OAuthBrowser(provider.app.url);
      const visited: string[] = [];
      const get = async (path: string, init: RequestInit = {}) => {
        const url = new URL(path, base);
        visited.push(`${init.method ?? 'GET'} ${url.pathname}`);
        const res = await app.fetch(url.href, {
          ...init,
          headers: {
            accept: 'text/html',
            ...(init.headers as Record<string, string>),
            cookie: jar.header(),
          },
        });
        jar.apply(res.headers.getSetCookie());
        return res;
      };
      /** Follows redirects through the app and the provider until a page answers. */
      const follow = async (path: string, user?: User) => {
        let res = await get(path);
        for (let hop = 0; hop < 10 && res.status === 302; hop++) {
          const location = new URL(res.headers.get('location') ?? '', base);
          if (location.origin === new URL(base).origin) {
            res = await get(location.href);
            continue;
          }
          const visit = await latchkey.browse(location, user ?? {});
          res = await get(visit.url.href);
        }
        return res;
      };
      return { jar, get, follow, visited };
    }

    it('sends a signed-out browser to sign in and back; an API call gets 401', async () => {
      const user = await provider.newUser();
      const b = browser();
      const first = await b.get('/dashboard');
      expect(first.status).toBe(302);
      expect(first.headers.get('location')).toBe(
        `${base}/api/latchkey/sign-in?returnTo=%2Fdashboard`,
      );
      const api = await b.get('/api/me', { headers: { accept: 'application/json' } });
      expect(api.status).toBe(401);
      expect(api.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await api.json()).toMatchObject({ status: 401, code: 'unauthorized' });
      expect(await (await b.get('/')).json()).toEqual({ email: null });

      const page = await b.follow('/dashboard', user);
      expect(page.status).toBe(200);
      expect(await page.text()).toBe(`<p>Signed in as ${user.email}</p>`);
      expect(b.jar.names()).toEqual(['latchkey_session', 'theme']);
      const me = await b.get('/api/me', { headers: { accept: 'application/json' } });
      expect(await me.json()).toEqual({
        userId: user.id,
        sessionId: expect.any(String),
        email: user.email,
      });
    });

    it("refreshes the access token while the user browses, without a redirect, beside the app's own cookies", async () => {
      const user = await provider.newUser();
      const b = browser();
      await b.follow('/dashboard', user);
      const before = b.jar.cookies.get('latchkey_session');
      const refreshes = provider.tokenCalls('refresh_token');
      provider.shift(560);
      try {
        const page = await b.get('/dashboard');
        expect(page.status).toBe(200);
        expect(await page.text()).toContain(user.email);
        const set = page.headers.getSetCookie();
        expect(set).toEqual(
          expect.arrayContaining([
            expect.stringMatching(/^latchkey_session=/),
            'theme=dark; Path=/',
          ]),
        );
        expect(b.jar.cookies.get('latchkey_session')).not.toBe(before);
        expect(provider.tokenCalls('refresh_token')).toBe(refreshes + 1);
        // 20 requests at once with the cookie the page left: all fine, no second refresh.
        provider.shift(590);
        const cookie = b.jar.header();
        const all = await Promise.all(
          Array.from({ length: 20 }, () =>
            app.fetch(`${base}/api/me`, { headers: { cookie, accept: 'application/json' } }),
          ),
        );
        expect(all.map((r) => r.status)).toEqual(Array(20).fill(200));
        expect(provider.tokenCalls('refresh_token')).toBe(refreshes + 2);
      } finally {
        provider.shift(0);
      }
    });

    it('a session revoked in Latchkey: one trip to sign-in, then signed in again, no loop', async () => {
      const user = await provider.newUser();
      const b = browser();
      await b.follow('/dashboard', user);
      const me = (await (
        await b.get('/api/me', { headers: { accept: 'application/json' } })
      ).json()) as {
        sessionId: string;
      };
      await provider.revokeSession(me.sessionId);
      provider.shift(570);
      let res: Response;
      try {
        res = await b.get('/dashboard');
      } finally {
        provider.shift(0);
      }
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe(
        `${base}/api/latchkey/sign-in?returnTo=%2Fdashboard`,
      );
      expect(b.jar.names()).toEqual(['theme']);
      b.visited.length = 0;
      const page = await b.follow(res.headers.get('location') ?? '', user);
      expect(page.status).toBe(200);
      expect(b.visited.filter((v) => v.endsWith('/api/latchkey/sign-in'))).toHaveLength(1);
      expect(b.visited.at(-1)).toBe('GET /dashboard');
    });

    it('sign-out clears the cookie and ends the session', async () => {
      const user = await provider.newUser();
      const b = browser();
      await b.follow('/dashboard', user);
      const token = (await latchkeySessionOf(b.jar.header())).accessToken;
      const out = await b.get('/api/latchkey/sign-out', {
        method: 'POST',
        headers: { origin: base },
      });
      expect(out.status).toBe(302);
      expect(out.headers.get('location')).toMatch(
        new RegExp(`^${provider.issuer}/oauth/end-session\\?`),
      );
      expect(b.jar.names()).toEqual(['theme']);
      expect(await provider.introspect(token)).toEqual({ active: false });
      expect((await b.get('/dashboard')).status).toBe(302);
    });

    it('a session in several cookie chunks works through the framework', async () => {
      const roles = Array.from({ length: 50 }, (_, i) => `role-${i}-${'y'.repeat(50)}`);
      const user = await provider.newUser(roles);
      const b = browser();
      const page = await b.follow('/dashboard', user);
      expect(page.status).toBe(200);
      expect(b.jar.names().filter((n) => n.startsWith('latchkey_session.')).length).toBeGreaterThan(
        1,
      );
      expect((await b.get('/api/me', { headers: { accept: 'application/json' } })).status).toBe(
        200,
      );
    });

    /** The session behind a cookie header, read with the core the app uses. */
    async function latchkeySessionOf(cookie: string) {
      const core = latchkeySession(provider.config(client, base)).core;
      const { session } = await core.getSession({ cookie });
      if (!session) throw new Error('no session');
      return session;
    }
  });
});
