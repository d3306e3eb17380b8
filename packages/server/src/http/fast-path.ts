import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { type Scope, scopeBit } from '../modules/keys/index.js';
import { type Decision, rateLimitHeaderList } from '../modules/rate-limit/index.js';
import type { Tenant } from '../modules/tenants/index.js';
import { bearerToken } from './bearer.js';
import type { AppContext } from './context.js';
import { hasNul } from './json-body.js';

/**
 * What the fast paths (introspection-fast-path.ts, refresh-fast-path.ts) share: the test of
 * a request they may read themselves, reading its small body, and handing a request they
 * then leave to Fastify over with its body and its plan decision, so that Fastify parses
 * the same bytes and counts nothing twice.
 */

/** True when it took the request; false: hand it to Fastify untouched. */
export type FastPath = (request: IncomingMessage, response: ServerResponse) => boolean;

/** Bodies a fast path read and then left to Fastify, to be parsed again there. */
const replayed = new WeakMap<IncomingMessage, Buffer>();
/** Plan decisions a fast path took for requests it then left to Fastify. */
const counted = new WeakMap<IncomingMessage, Decision | Promise<Decision>>();
/** Refusals a fast path reached and then left to Fastify to answer. */
const settled = new WeakMap<IncomingMessage, Settled>();

/** What a fast path's work came to, when that is a refusal for Fastify to write. */
export interface Settled {
  error: unknown;
  /** When the fast path took the request (performance.now()): its answer's time counts from there. */
  startedAt: number;
}

/** The body a fast path already read, as a stream for Fastify's parser (a preParsing hook). */
export function replayedBody(request: IncomingMessage): Readable | undefined {
  const body = replayed.get(request);
  return body ? Readable.from([body]) : undefined;
}

/**
 * The refusal a fast path's work already came to for this request, if any: the route
 * throws it instead of doing the work again, so that its side effects (a failed sign-in
 * counted) happen once and Fastify's error handler writes and logs the problem.
 */
export function settledBy(request: IncomingMessage): Settled | undefined {
  return settled.get(request);
}

/**
 * Milliseconds since the request arrived: Fastify's own count starts when a fast path hands
 * the request over, after the work (the verify, a slowed failure's wait) of a refusal.
 */
export function elapsedMs(request: IncomingMessage, fastifyElapsedMs: number): number {
  const outcome = settled.get(request);
  return outcome ? performance.now() - outcome.startedAt : fastifyElapsedMs;
}

/** The tenant plan decision already taken for this request, if a fast path took one. */
export function countedPlan(request: IncomingMessage): Decision | Promise<Decision> | undefined {
  return counted.get(request);
}

/**
 * The tenant of a request whose secret key (`Authorization: Bearer sk_…`) is cached, live
 * and holds `scope`, and its plan's decision, when the plan allows one more request in
 * memory. Undefined: leave the request to Fastify, which then finds the decision taken.
 */
export function admit(
  ctx: AppContext,
  request: IncomingMessage,
  scope: Scope,
): { tenant: Tenant; decision: Decision } | undefined {
  const presented = bearerToken(request.headers.authorization, 'sk_');
  // One cached record holds everything read here (see CachedKey).
  const held = presented === undefined ? null : ctx.keys.cachedKey(presented);
  if (!held || (held.secretScopes & scopeBit(scope)) === 0) return undefined;
  const { tenant } = held;
  const decision = ctx.limiter.consumeHeld(held);
  if (decision instanceof Promise || !decision.allowed) {
    counted.set(request, decision);
    return undefined;
  }
  return { tenant, decision };
}

/**
 * The length of a body a fast path may read itself: JSON of a known length up to
 * `maxBody`, not encoded, no `Expect`, and no `Origin` (a browser's request: Fastify's path
 * refuses its secret key, http/auth.ts). Undefined: leave the request to Fastify.
 */
export function smallJsonBody(headers: IncomingHttpHeaders, maxBody: number): number | undefined {
  const length = Number(headers['content-length']);
  const type = headers['content-type'];
  if (
    !(length > 0 && length <= maxBody) ||
    (type !== 'application/json' && type !== 'application/json; charset=utf-8') ||
    headers['transfer-encoding'] !== undefined ||
    headers['content-encoding'] !== undefined ||
    headers.expect !== undefined ||
    headers.origin !== undefined
  )
    return undefined;
  return length;
}

/**
 * Reads the body of a request `smallJsonBody` let through. `done` gets it, and a
 * `handOver` that gives the request to Fastify with that body and the plan decision (for a
 * body the fast path does not take, or an answer it cannot give), and with the refusal its
 * work came to when it did the work (`settledBy`).
 */
export function readBody(
  request: IncomingMessage,
  response: ServerResponse,
  length: number,
  decision: Decision,
  fallback: (request: IncomingMessage, response: ServerResponse) => void,
  done: (body: Buffer | undefined, handOver: (outcome?: Settled) => void) => void,
): void {
  const chunks: Buffer[] = [];
  let received = 0;
  // A client that goes away mid-body: nothing to answer (Fastify does the same).
  request.on('error', () => {});
  request.on('data', (chunk: Buffer) => {
    received += chunk.length;
    chunks.push(chunk);
  });
  request.on('end', () => {
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received);
    done(received === length ? body : undefined, (outcome) => {
      replayed.set(request, body);
      counted.set(request, decision);
      if (outcome) settled.set(request, outcome);
      fallback(request, response);
    });
  });
}

/** A body that is one JSON object, as a fast path reads it; undefined: leave it to Fastify. */
export function jsonObject(text: string): Record<string, unknown> | undefined {
  // The JSON parser refuses NUL in any form; leave such bodies to it.
  if (hasNul(text)) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : undefined;
}

/**
 * A fast path's 200: the headers the Fastify route's answer has (DEFAULT_HEADERS in app.ts,
 * the plan's rate-limit headers, JSON), then `json`.
 */
export function answerJson(
  response: ServerResponse,
  decision: Decision,
  json: string,
  length = Buffer.byteLength(json),
): void {
  response.writeHead(200, [
    'cache-control',
    'no-store',
    'x-content-type-options',
    'nosniff',
    ...rateLimitHeaderList(decision),
    'content-type',
    'application/json; charset=utf-8',
    'content-length',
    String(length),
  ]);
  response.end(json);
}
