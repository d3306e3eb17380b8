import type { IncomingMessage, ServerResponse } from 'node:http';
import { defaults } from '../config/defaults.js';
import {
  type Introspection,
  introspect,
  introspectionJson,
} from '../modules/introspection/index.js';
import type { Decision } from '../modules/rate-limit/index.js';
import type { AppContext } from './context.js';
import {
  admit,
  answerJson,
  type FastPath,
  jsonObject,
  readBody,
  smallJsonBody,
} from './fast-path.js';

/**
 * Introspection without the framework, for the requests that make up nearly all of its
 * traffic: servers call it on every request they serve (docs/design.md §5.4), and
 * Fastify's routing, hooks, request and reply objects cost more than the answer itself.
 *
 * It takes a request only when everything it needs is already in memory and the answer
 * can only be a 200: `POST /api/auth/introspect`, a JSON body of a known small size, a
 * cached live secret key with the introspection scope in `Authorization: Bearer`, a plan
 * that allows one more request in memory, and a body of exactly `token` (and optionally
 * `token_type_hint`). Every rule is the one the Fastify route runs: the same `introspect()`,
 * the same rate limiter, the same key cache, the same headers. Anything else (a problem
 * document to write, a key or plan decision that needs the database or Redis, debug
 * logging, shutdown) goes to Fastify: before the body is read as it is, after it with the
 * body replayed (`replayedBody`) and the plan decision already taken (`countedPlan`), so
 * that nothing is counted twice.
 */
export const INTROSPECT_PATH = '/api/auth/introspect';
const ROUTE_SCOPE = 'tokens:introspect';
/** The largest body it reads itself: a token at its longest, quoted, plus a hint. */
const MAX_BODY = defaults.maxTokenLength + 256;

/**
 * The answers worked out in one turn of the event loop and the next are written one after
 * another at the end of the next turn (in its check phase, after its poll has read every
 * request that arrived meanwhile), and at once when this many are waiting, so that none
 * waits long behind the others' work.
 *
 * Why: a write to a socket whose reader sleeps makes the kernel wake that reader, and on a
 * virtual machine that wake-up (an inter-processor interrupt) costs as much as answering.
 * Answers written back to back reach a client while it is awake, so it reads several per
 * wake-up and sends its next requests together, and this server then reads several per
 * turn in its turn. Netty's FlushConsolidationHandler does the same for the same reason.
 * Measured under ten connections: about 40 % more warm introspections per CPU-second when
 * one turn's answers were first held. Holding them through the next turn too, so that the
 * requests which arrived while this turn worked are answered in the same burst: cold
 * introspection 0.94 of its ceiling (median of four runs) against 0.885 before, warm 0.79
 * of bare node:http against 0.75, p99.9 at half load unchanged; it won three of four
 * alternated pairs (bench/README.md, the performance bar of 2026-11-30). Writing each
 * answer at once read 0.77 cold.
 */
const HOLD_AT_MOST = 16;
type Held = [ServerResponse, Decision, Introspection, number];

/** `{"token": "…"}` with an optional short `token_type_hint`, nothing else; else undefined. */
function tokenOf(text: string): string | undefined {
  const body = jsonObject(text);
  if (!body) return undefined;
  let token: string | undefined;
  for (const [name, value] of Object.entries(body)) {
    if (name === 'token' && typeof value === 'string') token = value;
    else if (
      name !== 'token_type_hint' ||
      typeof value !== 'string' ||
      value.length > defaults.fields.hintMaxLength
    )
      return undefined;
  }
  return token;
}

export function introspectionFastPath(
  ctx: AppContext,
  options: {
    /** Fastify's own handler: where everything the fast path does not take goes. */
    fallback: (request: IncomingMessage, response: ServerResponse) => void;
    /** False while the server shuts down or logs at debug (Fastify then answers and logs). */
    enabled: () => boolean;
    /** Counts a 200 of this route, as Fastify's onResponse hook counts its answers. */
    observe: (elapsedMs: number) => void;
  },
): FastPath {
  const { fallback, enabled, observe } = options;

  function write(
    response: ServerResponse,
    decision: Decision,
    result: Introspection,
    startedAt: number,
  ) {
    const { json, length } = introspectionJson(result);
    answerJson(response, decision, json, length);
    observe(performance.now() - startedAt);
  }

  // Answers held until the end of the next turn of the event loop (see HOLD_AT_MOST).
  let held: Held[] = [];
  function flush() {
    const batch = held;
    held = [];
    for (const [response, decision, result, startedAt] of batch) {
      try {
        write(response, decision, result, startedAt);
      } catch (error) {
        // One answer that cannot be written must not strand the others.
        response.destroy(error as Error);
      }
    }
  }
  // Scheduled from this turn's check phase, an immediate runs in the next turn's.
  const flushNextTurn = () => setImmediate(flush);
  function respond(
    response: ServerResponse,
    decision: Decision,
    result: Introspection,
    startedAt: number,
  ) {
    held.push([response, decision, result, startedAt]);
    // The first answer held schedules the flush, at the end of the next turn; a flush that
    // finds nothing does nothing.
    if (held.length >= HOLD_AT_MOST) flush();
    else if (held.length === 1) setImmediate(flushNextTurn);
  }

  return (request, response) => {
    if (request.url !== INTROSPECT_PATH || request.method !== 'POST') return false;
    const startedAt = performance.now();
    const { headers } = request;
    const length = smallJsonBody(headers, MAX_BODY);
    if (length === undefined || !enabled()) return false;
    const admitted = admit(ctx, request, ROUTE_SCOPE);
    if (!admitted) return false;
    const { tenant, decision } = admitted;

    readBody(request, response, length, decision, fallback, (body, handOver) => {
      const token = body === undefined ? undefined : tokenOf(body.toString('utf8'));
      if (token === undefined) return handOver();
      let result: ReturnType<typeof introspect>;
      try {
        result = introspect(ctx, tenant, token);
      } catch {
        return handOver();
      }
      if (!(result instanceof Promise)) return respond(response, decision, result, startedAt);
      result.then(
        (answer) => respond(response, decision, answer, startedAt),
        // A database error: Fastify asks again and answers (or logs) it as it would have.
        () => handOver(),
      );
    });
    return true;
  };
}
