/** Shutdown: what is in flight is answered; what arrives meanwhile gets a 503 problem document. */
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { DIALECTS, email, startApp } from './support.js';

/** Everything the server sent on a socket until it closed it. */
function readAll(socket: Socket): Promise<string> {
  let text = '';
  socket.on('data', (chunk) => {
    text += chunk.toString('utf8');
  });
  return new Promise((resolve) => socket.on('close', () => resolve(text)));
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

describe.each(DIALECTS)('shutdown on %s', (dialect) => {
  it('answers the request in flight, then answers a newcomer with 503 problem+json', async () => {
    const app = await startApp(dialect);
    const t = await app.tenant();
    const body = JSON.stringify({ email: email(), password: 'correct horse battery staple' });
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
    await until(() => !app.app.server.listening);
    // The rest of the body, and a second request on the same connection.
    socket.write(`${body}GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    const text = await received;
    await closed;
    await app.dispose();

    const responses = text.split(/(?=HTTP\/1\.1 )/).filter((r) => !r.startsWith('HTTP/1.1 100'));
    expect(responses[0]).toMatch(/^HTTP\/1\.1 201 /);
    expect(responses[1]).toMatch(/^HTTP\/1\.1 503 /);
    expect(responses[1]).toMatch(/content-type: application\/problem\+json/i);
    const problem = JSON.parse(responses[1]?.split('\r\n\r\n')[1] ?? '{}') as { code?: string };
    expect(problem.code).toBe('service_unavailable');
  });
});
