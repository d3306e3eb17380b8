import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request a receiver got, verified or not. */
export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  raw: string;
  /** The parsed body: `{ type, timestamp, data }`. */
  // biome-ignore lint/suspicious/noExplicitAny: a received JSON body, checked by each test.
  body: any;
  /** Whether the `standardwebhooks` package verified it with the receiver's secret(s). */
  verified: boolean;
  at: number;
}

/**
 * What the receiver answers: a status code (body optional), once `after` settles if given;
 * or never (a hanging receiver).
 */
export type Answer =
  | { status: number; body?: string; location?: string; after?: Promise<unknown> }
  | 'hang';

/**
 * A real receiver on loopback, as a team would write one: it verifies each request with
 * the Standard Webhooks reference library and records it; `answer` decides the reply.
 */
export async function startReceiver(options: {
  secrets?: () => string[];
  answer?: (received: Received, count: number) => Answer;
}) {
  const received: Received[] = [];
  const hanging = new Set<ServerResponse>();
  let inFlight = 0;
  let maxInFlightPerId = 0;
  const inFlightById = new Map<string, number>();
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(request.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(request.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(request.headers['webhook-signature'] ?? ''),
      };
      const secrets = options.secrets?.() ?? [];
      const verified = secrets.some((secret) => {
        try {
          new Webhook(secret).verify(raw, headers);
          return true;
        } catch {
          return false;
        }
      });
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const entry: Received = {
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        signature: headers['webhook-signature'],
        raw,
        body,
        verified,
        at: Date.now(),
      };
      received.push(entry);
      const now = (inFlightById.get(entry.id) ?? 0) + 1;
      inFlightById.set(entry.id, now);
      maxInFlightPerId = Math.max(maxInFlightPerId, now);
      inFlight++;
      const finish = () => {
        inFlight--;
        inFlightById.set(entry.id, (inFlightById.get(entry.id) ?? 1) - 1);
      };
      const answer = options.answer?.(entry, received.length) ?? { status: 204 };
      if (answer === 'hang') {
        hanging.add(response);
        response.on('close', finish);
        return;
      }
      // A little work, as a real receiver does: attempts of one event overlap if sent at once.
      const reply = () =>
        setTimeout(() => {
          finish();
          response.writeHead(answer.status, {
            'content-type': 'text/plain',
            ...(answer.location && { location: answer.location }),
          });
          response.end(answer.body ?? '');
        }, 5);
      if (answer.after) void answer.after.then(reply);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return {
    url,
    received,
    /** The most attempts of one webhook-id the receiver had open at once. */
    maxInFlightPerId: () => maxInFlightPerId,
    inFlight: () => inFlight,
    ofType: (type: string) => received.filter((r) => r.body?.type === type),
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
