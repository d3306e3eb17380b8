/**
 * The introspection fast path (node:http in front of Fastify) answers exactly as the
 * Fastify route does, takes only what it can answer from memory, hands everything else
 * over without losing the body or counting the plan twice, and keeps a connection's
 * answers in order.
 */
import { connect, type Socket } from 'node:net';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { introspectionFastPath } from '../src/http/introspection-fast-path.js';
import { createKey, revokeKey } from '../src/modules/keys/index.js';
import type { DialectName } from '../src/storage/index.js';
import {
  type Body,
  DIALECTS,
  type FastPathServer,
  fastPathServer,
  HAVE_REDIS,
  json,
  METRICS_AUTH,
  postJson,
  REDIS_URL,
  signedIn,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const PATH = '/api/auth/introspect';
// PostgreSQL instances cache (and so take the fast path) only while Redis carries invalidations.
const MODES: { name: string; dialect: DialectName; env: Record<string, string> }[] = [];
for (const dialect of DIALECTS) {
  if (dialect === 'sqlite') MODES.push({ name: 'sqlite', dialect, env: {} });
  else if (HAVE_REDIS) MODES.push({ name: 'postgres + redis', dialect, env: { REDIS_URL } });
}

interface Variant {
  name: string;
  headers?: (t: TestTenant) => Record<string, string>;
  body: (token: string, t: TestTenant) => string;
}

describe.each(MODES)('introspection fast path on $name', ({ dialect, env }) => {
  let app: TestApp;
  let t: TestTenant;
  let other: TestTenant;
  let token: string;
  let foreignToken: string;

  const session = (tenant: TestTenant): Promise<Body> => signedIn(app, tenant);

  beforeAll(async () => {
    app = await startApp(dialect, { env });
    t = await app.tenant();
    other = await app.tenant();
    token = (await session(t)).accessToken;
    foreignToken = (await session(other)).accessToken;
  });
  afterAll(async () => {
    await app.dispose();
  });

  const bearerJson = (t: TestTenant) => ({
    authorization: `Bearer ${t.secretKey}`,
    'content-type': 'application/json',
  });
  const VARIANTS: Variant[] = [
    { name: 'an active token', body: (token) => JSON.stringify({ token }) },
    {
      name: 'an active token with a hint, charset and unicode around it',
      headers: (t) => ({ ...bearerJson(t), 'content-type': 'application/json; charset=utf-8' }),
      body: (token) => `{ "token_type_hint": "access_token", "token": "${token}" }`,
    },
    { name: "another tenant's token", body: (_token) => JSON.stringify({ token: foreignToken }) },
    { name: 'a garbage token', body: () => JSON.stringify({ token: 'not.a.jwt' }) },
    { name: 'a unicode token', body: () => JSON.stringify({ token: 'ŧøĸęñ.🔑.✓' }) },
    { name: 'an empty token', body: () => JSON.stringify({ token: '' }) },
    { name: 'no token', body: () => '{}' },
    { name: 'a number as token', body: () => '{"token":42}' },
    { name: 'an array body', body: (token) => JSON.stringify([token]) },
    { name: 'invalid JSON', body: (token) => `{"token":"${token}"` },
    { name: 'an unknown field', body: (token) => JSON.stringify({ token, extra: 1 }) },
    {
      name: 'a too long hint',
      body: (token) => JSON.stringify({ token, token_type_hint: 'x'.repeat(65) }),
    },
    { name: 'a NUL character', body: (token) => JSON.stringify({ token: `${token}\u0000` }) },
    { name: 'a __proto__ key', body: (token) => `{"token":"${token}","__proto__":{"x":1}}` },
    {
      name: 'a secret key in the body as well',
      body: (token, t) => JSON.stringify({ token, client_secret: t.secretKey }),
    },
    {
      name: 'a token longer than the fast path reads',
      body: () => JSON.stringify({ token: 'a'.repeat(20_000) }),
    },
    {
      name: 'a wrong key',
      headers: (t) => ({ ...bearerJson(t), authorization: `Bearer ${t.secretKey.slice(0, -2)}xx` }),
      body: (token) => JSON.stringify({ token }),
    },
    {
      name: 'a publishable key',
      headers: (t) => ({ ...bearerJson(t), authorization: `Bearer ${t.publishableKey}` }),
      body: (token) => JSON.stringify({ token }),
    },
    {
      name: 'a form body',
      headers: (t) => ({
        authorization: `Bearer ${t.secretKey}`,
        'content-type': 'application/x-www-form-urlencoded',
      }),
      body: (token) => new URLSearchParams({ token }).toString(),
    },
    {
      name: 'HTTP Basic client authentication',
      headers: (t) => ({
        authorization: `Basic ${Buffer.from(`${t.tenant.id}:${t.secretKey}`).toString('base64')}`,
        'content-type': 'application/json',
      }),
      body: (token) => JSON.stringify({ token }),
    },
    {
      name: 'text/plain',
      headers: (t) => ({ ...bearerJson(t), 'content-type': 'text/plain' }),
      body: (token) => JSON.stringify({ token }),
    },
  ];

  /** What a client can see of an answer, less what changes from one request to the next. */
  async function seen(response: {
    status: number;
    headers: (name: string) => string | undefined | null;
    body: string;
  }) {
    const body = response.headers('content-type')?.includes('json')
      ? JSON.parse(response.body)
      : response.body;
    // A problem names the request it answers only in `instance`, which is the same path.
    return {
      status: response.status,
      body,
      contentType: response.headers('content-type') ?? null,
      cacheControl: response.headers('cache-control') ?? null,
      policy: response.headers('ratelimit-policy') ?? null,
      hasRateLimit: response.headers('ratelimit') != null,
      challenge: response.headers('www-authenticate') ?? null,
    };
  }

  it.each(VARIANTS.map((v) => [v.name, v] as const))(
    'answers %s exactly as the Fastify route does',
    async (_name, variant) => {
      const headers = (variant.headers ?? bearerJson)(t);
      const body = variant.body(token, t);
      // Twice over HTTP: the first request warms the key and token caches.
      await app.request(PATH, { method: 'POST', headers, body });
      const http = await app.request(PATH, { method: 'POST', headers, body });
      const viaHttp = await seen({
        status: http.status,
        headers: (name) => http.headers.get(name),
        body: await http.text(),
      });
      const injected = await app.app.inject({ method: 'POST', url: PATH, headers, payload: body });
      const viaFastify = await seen({
        status: injected.statusCode,
        headers: (name) => injected.headers[name]?.toString(),
        body: injected.body,
      });
      expect(viaHttp).toEqual(viaFastify);
    },
  );

  describe('what it takes and what it hands over', () => {
    let server: FastPathServer;

    beforeAll(async () => {
      // The real fast path over the real Fastify router, counting who answered.
      server = await fastPathServer(app, PATH, (hooks) => introspectionFastPath(app.ctx, hooks));
    });
    afterAll(async () => {
      await server.close();
    });

    const count = (headers: Record<string, string>, body: string) => server.send(body, headers);

    it('answers a cached key and token itself, and a cold token (RSA) too', async () => {
      const fresh = (await session(t)).accessToken;
      await count(bearerJson(t), JSON.stringify({ token })); // the key is cached now
      const cold = await count(bearerJson(t), JSON.stringify({ token: fresh }));
      expect(cold).toMatchObject({ status: 200, fast: 1, before: 0, after: 0 });
      // How and when the person signed in, from the token's own claims (no look-up).
      const signedIn = { active: true, amr: ['pwd'], auth_time: decodeJwt(fresh).auth_time };
      expect(signedIn.auth_time).toEqual(expect.any(Number));
      expect(JSON.parse(cold.text)).toMatchObject(signedIn);
      const warm = await count(bearerJson(t), JSON.stringify({ token: fresh }));
      expect(warm).toMatchObject({ status: 200, fast: 1, before: 0, after: 0 });
      expect(JSON.parse(warm.text)).toMatchObject(signedIn);
    });

    it('hands over a key it has not seen, before reading the body', async () => {
      const fresh = await app.tenant();
      const first = await count(bearerJson(fresh), JSON.stringify({ token }));
      expect(first).toMatchObject({ status: 200, fast: 0, before: 1, after: 0 });
      expect(first.text).toBe('{"active":false}');
      const second = await count(bearerJson(fresh), JSON.stringify({ token }));
      expect(second).toMatchObject({ status: 200, fast: 1, before: 0, after: 0 });
    });

    it('hands over a cached secret key without the introspection scope, which Fastify refuses', async () => {
      // The fast path reads a cached key's scopes as bits (CachedKey.secretScopes).
      const { plaintext } = await createKey(app.ctx.database.db, t.tenant.id, {
        kind: 'secret',
        scopes: ['users:read', 'users:write', 'sessions:write'],
      });
      const headers = { ...bearerJson(t), authorization: `Bearer ${plaintext}` };
      const asked = [];
      for (let i = 0; i < 2; i++) asked.push(await count(headers, JSON.stringify({ token })));
      // The second time the key is cached: handed over all the same, before the body.
      for (const answer of asked)
        expect(answer).toMatchObject({ status: 403, fast: 0, before: 1, after: 0 });
      expect(app.ctx.keys.cachedKey(plaintext)?.secretScopes).toBe(0b0111);
    });

    it('hands over a body it cannot answer, which Fastify then reads from memory', async () => {
      await count(bearerJson(t), JSON.stringify({ token }));
      const bad = await count(bearerJson(t), '{"token":');
      expect(bad).toMatchObject({ status: 400, fast: 0, before: 0, after: 1 });
      expect(JSON.parse(bad.text)).toMatchObject({ code: 'invalid_request' });
      const both = await count(bearerJson(t), JSON.stringify({ token, client_secret: 'x' }));
      expect(both).toMatchObject({ status: 400, after: 1 });
      expect(JSON.parse(both.text).detail).toMatch(/once/);
    });

    it('counts the plan once for a request it hands over, and answers 429 past the limit', async () => {
      // Four a minute: the first request (which caches the key) and three handed over.
      const limited = await app.tenant({ rps: 1000, rpm: 4 });
      const headers = bearerJson(limited);
      expect((await count(headers, JSON.stringify({ token }))).status).toBe(200);
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await count(headers, '{"token":'));
      expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 429]);
      expect(answers[3]).toMatchObject({ fast: 0, before: 1, after: 0 });
      expect(JSON.parse(answers[3]?.text ?? '{}')).toMatchObject({ code: 'rate_limited' });
    });
  });

  /** One raw HTTP/1.1 introspection request with the tenant's secret key. */
  const requestOf = (body: string, type = 'application/json', secret = t.secretKey) =>
    `POST ${PATH} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${secret}\r\ncontent-type: ${type}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

  it('keeps the answers of pipelined requests in order, whichever path answers them', async () => {
    await postJson(app, PATH, t.secretKey, { token });
    const socket = connect(Number(new URL(app.url).port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('utf8');
    });
    // Fast, Fastify (a form body), fast (inactive), fast, handed over after the body (400,
    // after which the server closes the connection).
    socket.write(
      requestOf(JSON.stringify({ token })) +
        requestOf(new URLSearchParams({ token }).toString(), 'application/x-www-form-urlencoded') +
        requestOf(JSON.stringify({ token: 'x' })) +
        requestOf(JSON.stringify({ token })) +
        requestOf('{"token":'),
    );
    await new Promise<void>((resolve, reject) => {
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    const statuses = [...received.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => m[1]);
    expect(statuses).toEqual(['200', '200', '200', '200', '400']);
    const bodies = received
      .split(/HTTP\/1\.1 /)
      .slice(1)
      .map((answer) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)));
    expect(bodies.map((b) => b.active ?? b.code)).toEqual([
      true,
      true,
      false,
      true,
      'invalid_request',
    ]);
  });

  /** Writes one request and resolves with its whole answer ('' if the connection ends first). */
  function exchange(socket: Socket, body: string, secret = t.secretKey): Promise<string> {
    return new Promise((resolve) => {
      let received = '';
      const done = (answer: string) => {
        socket.off('data', onData);
        socket.off('close', onClose);
        resolve(answer);
      };
      const onData = (chunk: Buffer) => {
        received += chunk.toString('utf8');
        const head = received.indexOf('\r\n\r\n');
        const length = Number(/content-length: (\d+)/i.exec(received)?.[1] ?? Number.NaN);
        if (head >= 0 && Buffer.byteLength(received) - head - 4 >= length) done(received);
      };
      const onClose = () => done('');
      socket.on('data', onData);
      socket.on('close', onClose);
      socket.write(requestOf(body, 'application/json', secret));
    });
  }

  it('takes each request on a keep-alive connection by its own key, and a key revoked meanwhile no more', async () => {
    // The hashes of live keys are kept by the key as presented (keys.service.ts): a client
    // that changes keys, or whose key is revoked, must never be answered as before.
    const { key, plaintext } = await createKey(app.ctx.database.db, t.tenant.id, {
      kind: 'secret',
    });
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect(Number(new URL(app.url).port), '127.0.0.1', () => resolve(s));
      s.once('error', reject);
    });
    const ask = async (secret: string) => {
      const answer = await exchange(socket, JSON.stringify({ token }), secret);
      const status = Number(answer.slice(9, 12));
      return status === 200 ? bodyOf(answer).active : status;
    };
    try {
      const answers = [];
      for (const secret of [plaintext, plaintext, other.secretKey, `sk_test_${'A'.repeat(43)}`])
        answers.push(await ask(secret));
      answers.push(await ask('sk_test_short'), await ask(plaintext), await ask(t.secretKey));
      // Its own tenant's token is active; for another tenant's key it is foreign (inactive);
      // a well-formed key nobody holds and a malformed one are refused.
      expect(answers).toEqual([true, true, false, 401, 401, true, true]);
      await ask(plaintext);
      await revokeKey({ db: app.ctx.database.db, bus: app.ctx.bus }, t.tenant.id, key.id);
      expect(await ask(plaintext)).toBe(401);
      expect(await ask(t.secretKey)).toBe(true);
    } finally {
      socket.destroy();
    }
  });

  /**
   * One request on each of `bodies.length` connections, all written in the same tick, so
   * that the server (which shares this event loop) reads them in one turn. Each connection
   * has answered once before: the server has accepted it and reads it as soon as data comes.
   */
  async function burst(bodies: string[], leaving = new Set<number>()) {
    const port = Number(new URL(app.url).port);
    const sockets = await Promise.all(
      bodies.map(
        () =>
          new Promise<Socket>((resolve, reject) => {
            const socket = connect(port, '127.0.0.1', () => resolve(socket));
            socket.once('error', reject);
          }),
      ),
    );
    for (const socket of sockets) socket.on('error', () => {});
    await Promise.all(sockets.map((socket) => exchange(socket, JSON.stringify({ token }))));
    const answers = sockets.map((socket, i) => {
      const answer = exchange(socket, bodies[i] ?? '');
      if (leaving.has(i)) socket.destroy();
      return answer;
    });
    const all = await Promise.all(answers);
    for (const socket of sockets) socket.destroy();
    return all;
  }
  const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));

  it('answers a burst wider than one batch of held answers, each with its own claims', async () => {
    const users = await Promise.all([session(t), session(t), session(t)]);
    await Promise.all(users.map((u) => postJson(app, PATH, t.secretKey, { token: u.accessToken })));
    // 40 requests: more than twice the answers held at once (16), some of them inactive.
    const tokens = Array.from({ length: 40 }, (_, i) =>
      i % 5 === 4 ? 'not.a.token' : (users[i % 3]?.accessToken as string),
    );
    const answers = await burst(tokens.map((token) => JSON.stringify({ token })));
    expect(answers.map((a) => a.slice(0, 15))).toEqual(tokens.map(() => 'HTTP/1.1 200 OK'));
    expect(answers.map((a) => bodyOf(a).sub ?? 'inactive')).toEqual(
      tokens.map((token, i) => (token === 'not.a.token' ? 'inactive' : users[i % 3]?.user.id)),
    );
  });

  it('still answers the rest of a burst when some of its clients have gone', async () => {
    await postJson(app, PATH, t.secretKey, { token });
    const leaving = new Set([0, 3, 7, 16, 17, 25]);
    const answers = await burst(
      Array.from({ length: 30 }, () => JSON.stringify({ token })),
      leaving,
    );
    answers.forEach((answer, i) => {
      if (leaving.has(i)) expect(answer).toBe('');
      else expect(bodyOf(answer)).toMatchObject({ active: true, tid: t.tenant.id });
    });
    const after = await postJson(app, PATH, t.secretKey, { token });
    expect((await json(after)).active).toBe(true);
  });

  it('survives a client that sends half a body and goes away', async () => {
    await postJson(app, PATH, t.secretKey, { token });
    const socket = connect(Number(new URL(app.url).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST ${PATH} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${t.secretKey}\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{"token":"abc`,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    const res = await postJson(app, PATH, t.secretKey, { token });
    expect(res.status).toBe(200);
    expect((await json(res)).active).toBe(true);
  });

  it('counts its answers in /metrics like every other request', async () => {
    const countOf = async () => {
      const text = await (await app.request('/metrics', { headers: METRICS_AUTH })).text();
      const line = text
        .split('\n')
        .find(
          (l) =>
            l.startsWith('latchkey_http_requests_total{') &&
            l.includes(`route="${PATH}"`) &&
            l.includes('status="200"'),
        );
      return Number(line?.split(' ').pop() ?? 0);
    };
    await postJson(app, PATH, t.secretKey, { token });
    const before = await countOf();
    for (let i = 0; i < 5; i++) await postJson(app, PATH, t.secretKey, { token });
    expect(await countOf()).toBe(before + 5);
  });
});
