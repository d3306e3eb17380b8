import type { IncomingMessage, ServerResponse } from 'node:http';
import { defaults } from '../config/defaults.js';
import type { RefreshBatch } from '../modules/sessions/index.js';
import {
  admit,
  answerJson,
  type FastPath,
  jsonObject,
  readBody,
  smallJsonBody,
} from './fast-path.js';

export const REFRESH_PATH = '/v1/auth/token';
const ROUTE_SCOPE = 'sessions:write';
/** The largest body it reads itself: a refresh token at its longest, quoted, and the name. */
const MAX_BODY = defaults.fields.tokenMaxLength + 64;

/** `{"refreshToken": "…"}` within the route's bounds, nothing else; else undefined. */
function refreshTokenOf(text: string): string | undefined {
  const body = jsonObject(text);
  const token = body?.refreshToken;
  if (!body || Object.keys(body).length !== 1 || typeof token !== 'string') return undefined;
  return token.length >= 1 && token.length <= defaults.fields.tokenMaxLength ? token : undefined;
}

/**
 * `POST /v1/auth/token` without the framework, for the common case: a server
 * keeping its user's session going (docs/design.md §5). Refreshes are frequent (every
 * access token's lifetime, for every signed-in user) and each costs a signature and a
 * durable write; the route's Fastify handler costs as much again. As the introspection fast
 * path does (introspection-fast-path.ts), it takes only what it can answer with a 200 by
 * the same rules: a cached live secret key with `sessions:write`, a plan that allows the
 * request in memory, a body of exactly `refreshToken`, and a token SqliteRefreshBatch
 * rotates. The refreshes of one turn share one transaction. Everything else, including
 * every refusal, goes to Fastify with the body replayed and the plan already counted.
 */
export function refreshFastPath(
  batch: RefreshBatch,
  ctx: Parameters<typeof admit>[0],
  options: {
    fallback: (request: IncomingMessage, response: ServerResponse) => void;
    enabled: () => boolean;
    observe: (elapsedMs: number) => void;
  },
): FastPath {
  const { fallback, enabled, observe } = options;
  return (request, response) => {
    if (request.url !== REFRESH_PATH || request.method !== 'POST') return false;
    const startedAt = performance.now();
    const length = smallJsonBody(request.headers, MAX_BODY);
    if (length === undefined || !enabled()) return false;
    const admitted = admit(ctx, request, ROUTE_SCOPE);
    if (!admitted) return false;
    const { tenant, decision } = admitted;
    readBody(request, response, length, decision, fallback, (body, handOver) => {
      const token = body === undefined ? undefined : refreshTokenOf(body.toString('utf8'));
      if (token === undefined) return handOver();
      batch.refresh(tenant, token).then(
        (answer) => {
          if (answer === undefined) return handOver();
          const json = JSON.stringify(answer);
          answerJson(response, decision, json);
          observe(performance.now() - startedAt);
        },
        () => handOver(),
      );
    });
    return true;
  };
}
