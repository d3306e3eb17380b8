import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createKey } from '../src/modules/keys/index.js';
import { createTenant } from '../src/modules/tenants/index.js';
import { migrateToLatest, openDatabase } from '../src/storage/index.js';
import { startServe } from './cli-run.js';
import { DIALECTS, email, eventually, freshDatabaseUrl, SECRET, startApp } from './support.js';

const PASSWORD = 'correct horse battery staple';

/** Everything the server sent on a socket until it closed it, and whether it reset it. */
function readAll(socket: Socket): Promise<{ text: string; error?: string }> {
  let text = '';
  socket.on('data', (chunk) => {
    text += chunk.toString('utf8');
  });
  return new Promise((resolve) => {
    socket.on('error', (error: NodeJS.ErrnoException) => resolve({ text, error: error.code }));
    socket.on('close', () => resolve({ text }));
  });
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

describe.each(DIALECTS)('shutdown on %s', (dialect) => {
  it('answers the request in flight as its last, 503s a newcomer meanwhile, then stops listening', async () => {
    const app = await startApp(dialect);
    const t = await app.tenant();
    const body = JSON.stringify({ email: email(), password: PASSWORD });
    const socket = connect(Number(new URL(app.url).port), '127.0.0.1');
    const received = readAll(socket);
    let seen = '';
    socket.on('data', (chunk) => {
      seen += chunk.toString('utf8');
    });
    // Expect: 100-continue makes the server say when the request has reached it.
    socket.write(
      [
        'POST /v1/auth/sign-up HTTP/1.1',
        'Host: 127.0.0.1',
        `Authorization: Bearer ${t.secretKey}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Expect: 100-continue',
        '',
        '',
      ].join('\r\n'),
    );
    await until(() => seen.includes('100 Continue'));

    const closed = app.close();
    // A newcomer on a new connection is told to go elsewhere while the first is in flight.
    const newcomer = await eventually(async () => {
      const res = await fetch(`${app.url}/healthz`);
      return res.status === 503 ? res : undefined;
    });
    expect(newcomer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(newcomer.headers.get('connection')).toBe('close');
    expect(((await newcomer.json()) as { code: string }).code).toBe('service_unavailable');
    expect(app.app.server.listening).toBe(true);

    // The rest of the body, and a request pipelined after it on the same connection.
    socket.write(`${body}GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    const { text, error } = await received;
    await closed;
    expect(app.app.server.listening).toBe(false);
    await app.dispose();

    // The answer arrives whole, says it is the last, and the connection closes cleanly; the
    // request pipelined behind it is not answered on a closing connection, nor is it an error.
    expect(error).toBeUndefined();
    expect(app.logs.text()).not.toMatch(/"level":50/);
    const responses = text.split(/(?=HTTP\/1\.1 )/).filter((r) => !r.startsWith('HTTP/1.1 100'));
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatch(/^HTTP\/1\.1 201 /);
    expect(responses[0]).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(responses[0]?.split('\r\n\r\n')[1] ?? '{}')).toHaveProperty('userId');
  });
});

describe('shutdown and a connection made before it, whose request comes after', () => {
  it('answers that request 503, as the last of its connection, instead of resetting it', async () => {
    const app = await startApp('sqlite');
    const early = connect(Number(new URL(app.url).port), '127.0.0.1');
    const received = readAll(early);
    await new Promise((resolve) => early.once('connect', resolve));
    // node:http has taken the connection (it counts it) before the shutdown begins.
    await eventually(
      async () =>
        (await new Promise<number>((resolve) =>
          app.app.server.getConnections((_e, n) => resolve(n)),
        )) > 0 || undefined,
    );
    const closed = app.close();
    // The client is slow: its request comes a little after the shutdown began.
    await new Promise((resolve) => setTimeout(resolve, 50));
    early.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const { text, error } = await received;
    await closed;
    await app.dispose();
    expect(error).toBeUndefined();
    expect(text).toMatch(/^HTTP\/1\.1 503 /);
    expect(text).toMatch(/\r\nconnection: close\r\n/i);
    expect(text).toContain('service_unavailable');
  });
});

describe('SIGTERM with sign-ups in flight (the real process, run after run)', () => {
  it('answers every request sent before the signal, closes its connections, then exits 0', async () => {
    const fresh = await freshDatabaseUrl('sqlite');
    const database = openDatabase(fresh.url);
    await migrateToLatest(database.db as never);
    const tenant = await createTenant(database.db, {
      name: 'Shutdown',
      plan: 'enterprise',
      rps: 10_000,
      rpm: 100_000,
    });
    const { plaintext: key } = await createKey(database.db, tenant.id, { kind: 'secret' });
    await database.close();
    try {
      for (let run = 0; run < 5; run++) {
        const { child, url, exited } = await startServe(
          { DATABASE_URL: fresh.url, LATCHKEY_SECRET: SECRET },
          '/healthz',
        );
        // Keep-alive connections, as a server-side client keeps them.
        const agent = new Agent({ keepAlive: true });
        const sent: Promise<void>[] = [];
        const answers = Array.from(
          { length: 20 },
          (_, i) =>
            new Promise<{ status?: number; code?: string; connection?: string; error?: string }>(
              (resolve) => {
                const body = JSON.stringify({
                  email: email(`term${run}-${i}`),
                  password: PASSWORD,
                });
                const req = request(`${url}/v1/auth/sign-up`, {
                  method: 'POST',
                  agent,
                  headers: {
                    authorization: `Bearer ${key}`,
                    'content-type': 'application/json',
                    'content-length': Buffer.byteLength(body),
                  },
                });
                // Sent: connected, and the whole request handed to the kernel.
                sent.push(
                  new Promise((done) =>
                    req.once('socket', (socket) => {
                      const connected = socket.connecting
                        ? new Promise<void>((c) => socket.once('connect', () => c()))
                        : Promise.resolve();
                      req.once('finish', () => void connected.then(done));
                    }),
                  ),
                );
                req.on('response', (res) => {
                  let text = '';
                  res.on('data', (chunk) => {
                    text += chunk;
                  });
                  res.on('end', () =>
                    resolve({
                      status: res.statusCode,
                      code: res.statusCode === 201 ? undefined : JSON.parse(text).code,
                      connection: res.headers.connection,
                    }),
                  );
                });
                req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code }));
                req.end(body);
              },
            ),
        );
        await Promise.all(sent);
        child.kill('SIGTERM');
        const results = await Promise.all(answers);
        // 0, not the deadline's 1: the server closed every connection itself, kept-alive
        // ones included, before it exited.
        expect(await exited).toBe(0);
        agent.destroy();
        // Each one answered: created, or (not yet begun) told to go elsewhere; none reset.
        for (const r of results) {
          expect(r.error).toBeUndefined();
          if (r.status !== 201)
            expect(r).toMatchObject({
              status: 503,
              code: 'service_unavailable',
              connection: 'close',
            });
        }
      }
    } finally {
      await fresh.drop();
    }
  }, 60_000);
});
