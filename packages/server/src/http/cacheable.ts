import type { FastifyReply, FastifyRequest } from 'fastify';
import { sha256Base64url } from '../crypto/hash.js';

/**
 * Public JSON that browsers and verifiers may cache: a strong ETag over the exact bytes,
 * and 304 to a matching If-None-Match (RFC 9110 section 13.1.2).
 */
export function sendCacheable(
  request: FastifyRequest,
  reply: FastifyReply,
  body: unknown,
  cacheControl: string,
) {
  const json = JSON.stringify(body);
  const etag = `"${sha256Base64url(json).slice(0, 27)}"`;
  reply
    .header('cache-control', cacheControl)
    .header('etag', etag)
    .header('access-control-allow-origin', '*')
    .header('content-type', 'application/json; charset=utf-8');
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.send(json);
}
