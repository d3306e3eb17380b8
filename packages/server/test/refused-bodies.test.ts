/**
 * A refused answer must reach the client. A client that sends a body over the limit
 * without `Expect: 100-continue` keeps writing while the server answers 413; closing the
 * socket then would make the kernel reset the connection (unread data), and the client
 * would see EPIPE or ECONNRESET instead of the answer. The server reads on and discards,
 * within a bound, as nginx's lingering close does.
 */
import { once } from 'node:events';
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaults } from '../src/config/defaults.js';
import { email, postJson, startApp, type TestApp, type TestTenant } from './support.js';

const ELEVEN_MB = 11 * 1024 * 1024;

describe('a body over the limit, sent without Expect: 100-continue', () => {
  let app: TestApp;
  let t: TestTenant;

  beforeAll(async () => {
    app = await startApp('sqlite');
    t = await app.tenant();
  });
  afterAll(() => app.dispose());

  it("gets the 413 problem through Node's http.request, with no EPIPE", async () => {
    for (let i = 0; i < 5; i++) {
      const outcome = await new Promise<{ status?: number; body?: string; error?: string }>(
        (resolve) => {
          const result: { status?: number; body?: string; error?: string } = {};
          const req = request(`${app.url}/v1/auth/sign-up`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${t.secretKey}`,
              'content-type': 'application/json',
              'content-length': ELEVEN_MB,
            },
          });
          req.on('response', (res) => {
            result.status = res.statusCode;
            let body = '';
            res.on('data', (chunk) => {
              body += chunk;
            });
            res.on('end', () => {
              result.body = body;
            });
          });
          req.on('error', (error: NodeJS.ErrnoException) => {
            result.error = error.code;
          });
          req.on('close', () => setTimeout(() => resolve(result), 50));
          req.end(Buffer.alloc(ELEVEN_MB, 'x'));
        },
      );
      expect(outcome.error).toBeUndefined();
      expect(outcome.status).toBe(413);
      expect(JSON.parse(outcome.body as string)).toMatchObject({ code: 'payload_too_large' });
    }
  });

  it('gets the 413 problem when it writes the whole body before it reads (curl -H "Expect:")', async () => {
    const socket = connect(Number(new URL(app.url).port), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    const closed = new Promise<string | undefined>((resolve) => {
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code));
      socket.on('close', () => resolve(undefined));
    });
    const head =
      `POST /v1/auth/sign-up HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Authorization: Bearer ${t.secretKey}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${ELEVEN_MB}\r\n\r\n`;
    socket.write(head);
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let gone = false;
    void closed.then(() => {
      gone = true;
    });
    for (let sent = 0; sent < ELEVEN_MB && !gone; sent += chunk.length) {
      if (!socket.write(chunk)) await Promise.race([once(socket, 'drain'), closed]);
    }
    socket.end();
    expect(await closed).toBeUndefined();
    const answer = Buffer.concat(received).toString();
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(answer).toContain('payload_too_large');
  });

  it('does not run a request pipelined after the refused body', async () => {
    const address = email();
    const body = JSON.stringify({ email: address, password: 'correct horse battery staple' });
    const socket = connect(Number(new URL(app.url).port), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    const closed = new Promise<string | undefined>((resolve) => {
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code));
      socket.on('close', () => resolve(undefined));
    });
    const head = (length: number) =>
      `POST /v1/auth/sign-up HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Authorization: Bearer ${t.secretKey}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${length}\r\n\r\n`;
    const big = 2 * defaults.bodyLimit;
    socket.write(head(big));
    socket.write(Buffer.alloc(big, 'x'));
    socket.end(head(Buffer.byteLength(body)) + body);
    expect(await closed).toBeUndefined();
    const answers = Buffer.concat(received)
      .toString()
      .split(/(?=HTTP\/1\.1 )/);
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatch(/^HTTP\/1\.1 413 /);
    // Had it run, this address would be taken (its sign-up began before this one).
    const after = await postJson(app, '/v1/auth/sign-up', t.secretKey, JSON.parse(body));
    expect(after.status).toBe(201);
  });

  it('stops reading a body that never ends, after its bound', async () => {
    const socket = connect(Number(new URL(app.url).port), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    let cut = false;
    const closed = new Promise<void>((resolve) => {
      socket.on('error', () => {});
      socket.on('close', () => {
        cut = true;
        resolve();
      });
    });
    socket.write(
      `POST /v1/auth/sign-up HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.secretKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 100000000000\r\n\r\n`,
    );
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let sent = 0;
    while (!cut && sent < 4 * defaults.lingeringClose.maxBytes) {
      const ok = socket.write(chunk);
      sent += chunk.length;
      if (!ok) await Promise.race([new Promise((r) => socket.once('drain', r)), closed]);
    }
    await closed;
    expect(sent).toBeLessThan(4 * defaults.lingeringClose.maxBytes);
    expect(Buffer.concat(received).toString()).toMatch(/^HTTP\/1\.1 413 /);
    // The server goes on serving.
    const res = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
      email: email(),
      password: 'correct horse battery staple',
    });
    expect(res.status).toBe(201);
  });
});
