/**
 * The README's "Check tokens on your server" set-ups, run as written: the README quotes
 * snippets/express.ts, fastify.ts and hono.ts verbatim (checked here), and these tests run
 * each one against the real server with its configuration in the environment (Express and
 * Fastify listening on loopback, Hono through its own fetch entry point, `app.request`).
 */
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../../server/src/modules/tenants/index.js';
import type { TestApp, TestTenant } from '../../server/test/support.js';
import { audienceOf, issuerOf, signIn, startLatchkey, type Tokens } from './latchkey.js';

const SNIPPETS = ['express', 'fastify', 'hono'] as const;

let latchkey: TestApp;
let t: TestTenant;
let other: TestTenant;
let ada: Tokens;

beforeAll(async () => {
  latchkey = await startLatchkey();
  [t, other] = await Promise.all([latchkey.tenant(), latchkey.tenant()]);
  ada = await signIn(latchkey, t);
  // What the README tells the reader to set.
  process.env.LATCHKEY_ISSUER = issuerOf(latchkey, t);
  process.env.LATCHKEY_AUDIENCE = audienceOf(latchkey, t);
});
afterAll(() => latchkey.dispose());

it.each(SNIPPETS)('the README quotes snippets/%s.ts verbatim', async (name) => {
  const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Check tokens on your server'));
  const snippet = await readFile(new URL(`../snippets/${name}.ts`, import.meta.url), 'utf8');
  expect(section).toContain(`\`\`\`ts\n${snippet}\`\`\``);
});

/** A running snippet app: GET /api/me with these headers, and how to stop it. */
interface Served {
  me(headers: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

/** Starts the snippet's app (on a loopback port, where it listens itself). */
async function serve(name: (typeof SNIPPETS)[number]): Promise<Served> {
  const over = (url: string) => (headers: Record<string, string>) =>
    fetch(`${url}/api/me`, { headers });
  if (name === 'express') {
    const { app } = await import('../snippets/express.js');
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      me: over(`http://127.0.0.1:${port}`),
      close: () => new Promise((resolve) => server.close(() => resolve())),
    };
  }
  if (name === 'hono') {
    const { app } = await import('../snippets/hono.js');
    return { me: async (headers) => app.request('/api/me', { headers }), close: async () => {} };
  }
  const { app } = await import('../snippets/fastify.js');
  return { me: over(await app.listen({ port: 0, host: '127.0.0.1' })), close: () => app.close() };
}

describe.each(SNIPPETS)('the README %s set-up against the real server', (name) => {
  let served: Served;

  beforeAll(async () => {
    served = await serve(name);
  });
  afterAll(() => served.close());

  const me = (token?: string) => served.me(token ? { authorization: `Bearer ${token}` } : {});

  it("accepts the tenant's token", async () => {
    const res = await me(ada.accessToken);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ userId: ada.user.id, email: ada.user.email });
  });

  it("refuses another tenant's token, a token for another audience, and no token", async () => {
    const theirs = await signIn(latchkey, other);
    expect((await me(theirs.accessToken)).status).toBe(401);
    expect((await me()).status).toBe(401);
    // The same tenant, once its tokens name another API: this API must refuse them.
    const setAudience = async (audience: string | null) => {
      await updateTenant({ db: latchkey.ctx.database.db, bus: latchkey.ctx.bus }, t.tenant.id, {
        audience,
      });
      await latchkey.ctx.bus.publish('*'); // as `latchkey tenant update` tells running instances
    };
    await setAudience('https://billing.example');
    try {
      const billing = await signIn(latchkey, t);
      const res = await me(billing.accessToken);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*invalid_token/);
    } finally {
      await setAudience(null);
    }
  });
});

it("Hono's jwk middleware refuses Latchkey's tokens unless told typ 'at+jwt' (why the README says it)", async () => {
  const { Hono } = await import('hono');
  const { jwk } = await import('hono/jwk');
  const strict = new Hono();
  strict.use(
    '/api/*',
    jwk({ jwks_uri: `${issuerOf(latchkey, t)}/.well-known/jwks.json`, alg: ['RS256'] }),
  );
  strict.get('/api/me', (c) => c.text('ok'));
  const res = await strict.request('/api/me', {
    headers: { authorization: `Bearer ${ada.accessToken}` },
  });
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toContain('invalid_token');
});
