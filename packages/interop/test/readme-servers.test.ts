/**
 * The README's "Check tokens on your server" set-ups, run as written: the README quotes
 * snippets/express.ts and snippets/fastify.ts verbatim (checked here), and these tests start
 * each one against the real server with its configuration in the environment.
 */
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../../server/src/modules/tenants/index.js';
import type { TestApp, TestTenant } from '../../server/test/support.js';
import { audienceOf, issuerOf, signIn, startLatchkey, type Tokens } from './latchkey.js';

const SNIPPETS = ['express', 'fastify'] as const;

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

/** Starts the snippet's app on a loopback port. */
async function serve(
  name: (typeof SNIPPETS)[number],
): Promise<{ url: string; close(): Promise<void> }> {
  if (name === 'express') {
    const { app } = await import('../snippets/express.js');
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      close: () => new Promise((resolve) => server.close(() => resolve())),
    };
  }
  const { app } = await import('../snippets/fastify.js');
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}

describe.each(SNIPPETS)('the README %s set-up against the real server', (name) => {
  let url: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ url, close } = await serve(name));
  });
  afterAll(() => close());

  const me = (token?: string) =>
    fetch(`${url}/api/me`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

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
