import {
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import type { DestinationStream } from 'pino';
import { elapsedMs } from './fast-path.js';
import { INTROSPECT_PATH } from './introspection-fast-path.js';
import { REFRESH_PATH } from './refresh-fast-path.js';

/** Paths whose content must never reach a log line. */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.token',
  '*.refresh_token',
  '*.access_token',
];

/**
 * Routes whose successful answers are logged at `debug`, not `info`: servers call
 * introspection on every request they serve, and its line (redaction, serializing, the
 * write) cost about a third of its CPU; they refresh every session each access token's
 * lifetime. Their 4xx answers and errors stay at `info`.
 */
const QUIET_WHEN_OK = new Set([INTROSPECT_PATH, REFRESH_PATH]);

/**
 * One log line per request, when it is answered, with the request in it: Fastify's own
 * logging writes two (incoming, completed), which cost a fifth of a warm introspection.
 */
export class OneLineLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) super.requestCompleted(error, request, reply);
    else {
      const quiet = reply.statusCode < 400 && QUIET_WHEN_OK.has(request.routeOptions.url ?? '');
      // pino's methods below the level are no-ops: at info a quiet line costs nothing more.
      (quiet ? reply.log.debug : reply.log.info).call(
        reply.log,
        { req: request, res: reply, responseTime: elapsedMs(request.raw, reply.elapsedTime) },
        'request completed',
      );
    }
  }
}

/** The logger of the app: secrets redacted, requests logged by path only. */
export function loggerOptions(level: string, stream?: DestinationStream) {
  return {
    level,
    redact: { paths: REDACT, censor: '[redacted]' },
    // Paths only: query strings carry one-time e-mail link tokens and hosted-page parameters.
    serializers: {
      req: (req: {
        method: string;
        url: string;
        ip?: string;
        socket?: { remoteAddress?: string };
      }) => ({
        method: req.method,
        url: req.url.split('?')[0],
        remoteAddress: req.ip ?? req.socket?.remoteAddress,
      }),
    },
    ...(stream ? { stream } : {}),
  } satisfies FastifyServerOptions['logger'];
}
