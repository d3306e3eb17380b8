import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { defaults } from '../config/defaults.js';
import { signIn } from '../modules/sessions/index.js';
import { type AppContext, accountDeps } from './context.js';
import {
  admit,
  answerJson,
  type FastPath,
  jsonObject,
  readBody,
  smallJsonBody,
} from './fast-path.js';

export const SIGN_IN_PATH = '/v1/auth/sign-in';
const ROUTE_SCOPE = 'sessions:write';
/**
 * The largest body it reads itself: both fields at their longest, every character written
 * as a six-byte `\uXXXX` escape, and the names. Fastify reads anything longer.
 */
const MAX_BODY = (defaults.email.maxLength + defaults.password.maxLength) * 6 + 64;

/** A string the route's schema accepts whatever the counting (see `credentialsOf`). */
const fits = (value: unknown, max: number): value is string =>
  typeof value === 'string' && value.length >= 1 && value.length <= max;

/**
 * `{"email": "…", "password": "…"}` within the route's bounds, nothing else; else
 * undefined. The schema counts characters as code points: a string of at most `max`
 * UTF-16 units has at most `max` of them, so what this accepts the schema accepts; the
 * rest (a long string of astral characters, say) goes to Fastify to decide.
 */
function credentialsOf(text: string): { email: string; password: string } | undefined {
  const body = jsonObject(text);
  if (!body || Object.keys(body).length !== 2) return undefined;
  const { email, password } = body;
  return fits(email, defaults.email.maxLength) && fits(password, defaults.password.maxLength)
    ? { email, password }
    : undefined;
}

/** The end user's address a customer's server sent in `Latchkey-Client-IP`, if valid. */
export function claimedClientIp(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && isIP(header.trim()) ? header.trim() : undefined;
}

/**
 * `POST /v1/auth/sign-in` without the framework. The argon2id verify is most of a
 * sign-in's cost, but what is left (Fastify's routing, hooks, validation, serializer and
 * child logger, around a handful of statements and one signature) is a sixth of it on one
 * core, in code that at tens of sign-ins a second never gets optimised. As the other fast
 * paths do, it takes only what the route would take the same way: a cached live secret
 * key with `sessions:write`, a plan that allows the request in memory, a JSON body of
 * exactly `email` and `password` within the schema's bounds, and no trusted proxy (behind
 * one, Fastify reads the client's address from X-Forwarded-For). Then the route's own
 * `signIn()` runs, its session is answered here, and at `info` the line Fastify would log
 * for it is logged (http/logging.ts: sign-ins are logged). Everything else goes
 * to Fastify before `signIn()` runs, with the body replayed and the plan counted once; a
 * refusal `signIn()` reached (a wrong password, a second factor to ask for) goes there
 * after, with its outcome (`settledBy`), so that Fastify writes and logs the problem
 * exactly as it would have, without counting the failure twice.
 */
export function signInFastPath(
  ctx: AppContext,
  options: {
    fallback: (request: IncomingMessage, response: ServerResponse) => void;
    enabled: () => boolean;
    observe: (elapsedMs: number) => void;
    /** The app's logger: the answer's line, as OneLineLog writes it for Fastify's answers. */
    log: FastifyBaseLogger;
  },
): FastPath {
  const { fallback, enabled, observe, log } = options;
  const deps = accountDeps(ctx);
  const trustsProxy = ctx.config.trustProxy !== false && ctx.config.trustProxy !== 0;
  return (request, response) => {
    if (request.url !== SIGN_IN_PATH || request.method !== 'POST') return false;
    const startedAt = performance.now();
    const length = smallJsonBody(request.headers, MAX_BODY);
    if (length === undefined || trustsProxy || !enabled()) return false;
    // Fastify's request.ip when no proxy is trusted.
    const peer = request.socket.remoteAddress;
    if (peer === undefined) return false;
    const clientIp = claimedClientIp(request.headers['latchkey-client-ip']);
    const admitted = admit(ctx, request, ROUTE_SCOPE);
    if (!admitted) return false;
    const { tenant, decision } = admitted;
    readBody(request, response, length, decision, fallback, (body, handOver) => {
      const credentials = body === undefined ? undefined : credentialsOf(body.toString('utf8'));
      if (credentials === undefined) return handOver();
      signIn(deps, tenant, {
        ...credentials,
        ip: clientIp,
        sessionIp: clientIp ?? peer,
        userAgent: request.headers['user-agent'],
      })
        .then(
          (answer) => {
            const json = JSON.stringify(answer);
            answerJson(response, decision, json);
            const elapsed = performance.now() - startedAt;
            observe(elapsed);
            log.info(
              {
                reqId: randomUUID(),
                req: { method: 'POST', url: SIGN_IN_PATH, ip: peer },
                res: { statusCode: 200 },
                responseTime: elapsed,
              },
              'request completed',
            );
          },
          (error: unknown) => handOver({ error, startedAt }),
        )
        // The answer is written by then: what failed after it can only be logged.
        .catch((error: unknown) => log.error({ err: error }, 'sign-in answer failed'));
    });
    return true;
  };
}
