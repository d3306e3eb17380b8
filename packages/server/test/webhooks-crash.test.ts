/**
 * The outbox survives a crash (docs/design.md §17): the real built server is killed with
 * SIGKILL right after the last sign-up answers, while its endpoint still refuses; started
 * again, it delivers every user.created, verified with the `standardwebhooks` package, and
 * never one user's event under two different webhook-ids. On SQLite and PostgreSQL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { latchkey, listeningUrl, MAIN, type Result } from './cli-run.js';
import { type Body, DIALECTS, eventually, freshDatabaseUrl, SECRET } from './support.js';

const SIGN_UPS = 12;
const PASSWORD = 'correct horse battery staple';

interface Received {
  headers: Record<string, string>;
  body: string;
  answered: number;
}

/** A receiver on loopback that answers 503 at once until told to accept, then 200. */
async function receiver() {
  const received: Received[] = [];
  let answer = 503;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
        headers[name] = String(req.headers[name] ?? '');
      received.push({ headers, body: Buffer.concat(chunks).toString('utf8'), answered: answer });
      res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    accept: () => {
      answer = 200;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function parsed(result: Result): Body {
  expect(result, result.stderr).toMatchObject({ code: 0 });
  return JSON.parse(result.stdout) as Body;
}

function serve(env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, [MAIN, 'serve'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, exited, url: listeningUrl(child) };
}

describe.each(DIALECTS)('webhooks across a crash on %s', (dialect) => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  });

  it('kill -9 right after the sign-ups: every user.created arrives after the restart, each under one webhook-id', async () => {
    const fresh = await freshDatabaseUrl(dialect);
    cleanup.push(() => fresh.drop());
    const hooks = await receiver();
    cleanup.push(() => hooks.close());
    const env = { DATABASE_URL: fresh.url, LATCHKEY_SECRET: SECRET };
    const cli = (...args: string[]) => latchkey(args, env);
    if (dialect === 'postgres') expect((await cli('migrate')).code).toBe(0);
    const made = parsed(
      await cli(
        'tenant',
        'create',
        '--name',
        'Acme',
        '--plan',
        'enterprise',
        '--rps',
        '1000',
        '--rpm',
        '100000',
        '--json',
      ),
    );
    const endpoint = parsed(
      await cli(
        'webhook',
        'create',
        '--tenant',
        made.tenant.id,
        '--url',
        hooks.url,
        '--event',
        'user.created',
        '--json',
      ),
    );
    const verifier = new Webhook(endpoint.secret);

    const first = serve(env);
    cleanup.push(async () => {
      first.child.kill('SIGKILL');
      await first.exited;
    });
    const url = await first.url;
    const userIds: string[] = [];
    for (let i = 0; i < SIGN_UPS; i++) {
      const res = await fetch(`${url}/v1/auth/sign-up`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${made.secretKey}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ email: `crash-${i}@example.com`, password: PASSWORD }),
      });
      expect(res.status).toBe(201);
      userIds.push(((await res.json()) as Body).userId);
      // Half-way, the endpoint has refused an attempt: some events die waiting for a retry,
      // the others before any attempt.
      if (i === SIGN_UPS / 2)
        await eventually(async () => (hooks.received.length > 0 ? true : undefined));
    }
    first.child.kill('SIGKILL');
    await first.exited;
    const refusedBeforeCrash = hooks.received.length;

    hooks.accept();
    const second = serve(env);
    cleanup.push(async () => {
      second.child.kill('SIGKILL');
      await second.exited;
    });
    await second.url;

    // Every user's event, answered 200 (a delivery claimed when the first instance died
    // waits out its lease, 30 s, before it is attempted again).
    const delivered = () => {
      const ids = new Set<string>();
      for (const r of hooks.received)
        if (r.answered === 200) ids.add((JSON.parse(r.body) as Body).data.id);
      return ids;
    };
    await eventually(async () => (delivered().size === SIGN_UPS ? true : undefined));

    const idsOf = new Map<string, Set<string>>();
    for (const r of hooks.received) {
      // Each request verifies with the endpoint's secret, as any Standard Webhooks receiver does.
      const event = verifier.verify(r.body, r.headers) as Body;
      expect(event).toMatchObject({ type: 'user.created', data: { id: expect.any(String) } });
      const seen = idsOf.get(event.data.id) ?? new Set<string>();
      seen.add(r.headers['webhook-id'] as string);
      idsOf.set(event.data.id, seen);
    }
    expect([...delivered()].sort()).toEqual([...userIds].sort());
    expect([...idsOf.keys()].sort()).toEqual([...userIds].sort());
    for (const [userId, ids] of idsOf) expect([userId, ids.size]).toEqual([userId, 1]);
    // The refused attempts before the crash carried the ids the deliveries after it did.
    expect(refusedBeforeCrash).toBeGreaterThan(0);
    expect(hooks.received.slice(0, refusedBeforeCrash).every((r) => r.answered === 503)).toBe(true);
  }, 90_000);
});
