/**
 * The README's webhook receiver (docs/design.md §17), run as written: the README quotes
 * snippets/webhooks-express.ts verbatim (checked here), and the real server delivers a
 * sign-up's user.created to it on loopback, where `standardwebhooks` verifies it; a
 * tampered or wrongly signed request is refused with 400.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEndpoint, listDeliveries } from '../../server/src/modules/webhooks/index.js';
import {
  eventually,
  json,
  postJson,
  type TestApp,
  type TestTenant,
} from '../../server/test/support.js';
import { PASSWORD, startLatchkey } from './latchkey.js';

let latchkey: TestApp;
let t: TestTenant;
let receiver: Server;
let url: string;
let secret: string;
let endpointId: string;
let snippet: typeof import('../snippets/webhooks-express.js');

beforeAll(async () => {
  latchkey = await startLatchkey();
  t = await latchkey.tenant();
  // The receiver's address comes first: the snippet reads its secret when it is loaded.
  let handler: RequestListener = (_req, res) => res.writeHead(503).end();
  receiver = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/latchkey`;
  const made = await createEndpoint(
    { db: latchkey.ctx.database.db, box: latchkey.ctx.box },
    t.tenant,
    { url, events: ['user.created'] },
  );
  secret = made.secret;
  endpointId = made.endpoint.id;
  // What the README tells the reader to set.
  process.env.LATCHKEY_WEBHOOK_SECRET = secret;
  snippet = await import('../snippets/webhooks-express.js');
  handler = snippet.app;
});
afterAll(async () => {
  await new Promise((resolve) => receiver?.close(resolve));
  await latchkey?.dispose();
});

it('the README quotes snippets/webhooks-express.ts verbatim', async () => {
  const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Webhooks'));
  const code = await readFile(new URL('../snippets/webhooks-express.ts', import.meta.url), 'utf8');
  expect(section).toContain(`\`\`\`ts\n${code}\`\`\``);
});

it("verifies and takes a sign-up's user.created from the real server, once", async () => {
  const signedUp = await postJson(latchkey, '/v1/auth/sign-up', t.secretKey, {
    email: 'ada@example.com',
    password: PASSWORD,
    name: 'Ada',
  });
  expect(signedUp.status).toBe(201);
  const { userId } = await json(signedUp);
  const event = await eventually(async () =>
    snippet.events.find((e) => e.type === 'user.created' && e.data.id === userId),
  );
  expect(event).toMatchObject({
    type: 'user.created',
    timestamp: expect.any(String),
    data: { id: userId, email: 'ada@example.com', name: 'Ada', emailVerified: false },
  });
  // Latchkey saw the 204 as success.
  const [delivery] = await eventually(async () => {
    const list = await listDeliveries(latchkey.ctx.database.db, t.tenant.id, endpointId, {
      limit: 5,
    });
    return list[0]?.status === 'succeeded' ? list : undefined;
  });
  expect(delivery).toMatchObject({ type: 'user.created', attempts: 1 });
});

it('refuses a tampered or wrongly signed request with 400, and takes a repeat once', async () => {
  const body = JSON.stringify({
    type: 'user.created',
    timestamp: new Date().toISOString(),
    data: { id: 'u1', email: 'eve@example.com' },
  });
  const send = (payload: string, headers: Record<string, string>) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: payload,
    });
  const signed = (key: string, id: string, at = new Date()) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(key).sign(id, at, body),
  });
  const before = snippet.events.length;

  const tampered = signed(secret, 'msg_tampered');
  expect((await send(body.replace('eve@', 'mallory@'), tampered)).status).toBe(400);
  const other = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  expect((await send(body, signed(other, 'msg_other'))).status).toBe(400);
  expect((await send(body, {})).status).toBe(400);
  // Signed right an hour ago: a replay, refused.
  expect(
    (await send(body, signed(secret, 'msg_stale', new Date(Date.now() - 3_600_000)))).status,
  ).toBe(400);
  expect(snippet.events.length).toBe(before);

  // Signed right, it is taken; sent again with the same webhook-id, answered 2xx, taken once.
  const good = signed(secret, 'msg_good');
  expect((await send(body, good)).status).toBe(204);
  expect((await send(body, good)).status).toBe(204);
  expect(snippet.events.length).toBe(before + 1);
});
