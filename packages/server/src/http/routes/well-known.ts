import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { LatchkeyError } from '../../errors/index.js';
import { issuerOf } from '../../modules/sessions/index.js';
import { getTenant } from '../../modules/tenants/index.js';
import type { AppContext } from '../context.js';
import { problems } from '../schemas.js';

const Params = Type.Object({ tenantId: Type.String({ maxLength: 64 }) });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Short, so that a rotated key reaches verifiers quickly even through shared caches. */
const CACHE_CONTROL = 'public, max-age=60, stale-while-revalidate=30';

/** Public, cacheable JSON with an ETag; answers 304 to a matching If-None-Match. */
function sendCacheable(request: FastifyRequest, reply: FastifyReply, body: unknown) {
  const json = JSON.stringify(body);
  const etag = `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;
  reply
    .header('cache-control', CACHE_CONTROL)
    .header('etag', etag)
    .header('access-control-allow-origin', '*')
    .header('content-type', 'application/json; charset=utf-8');
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.send(json);
}

export function wellKnownRoutes(app: FastifyInstance, ctx: AppContext) {
  async function tenantOf(request: FastifyRequest) {
    const { tenantId } = request.params as { tenantId: string };
    if (!UUID.test(tenantId)) throw new LatchkeyError('not_found', `No tenant ${tenantId}`);
    return getTenant(ctx.database.db, tenantId);
  }

  app.get(
    '/t/:tenantId/.well-known/jwks.json',
    {
      schema: {
        summary: "The tenant's public signing keys (RFC 7517)",
        tags: ['tokens'],
        params: Params,
        response: {
          200: Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.String())) }),
          ...problems(404),
        },
      },
    },
    async (request, reply) => {
      const tenant = await tenantOf(request);
      return sendCacheable(request, reply, await ctx.signingKeys.jwks(tenant.id));
    },
  );

  app.get(
    '/t/:tenantId/.well-known/openid-configuration',
    {
      schema: {
        summary: 'Minimal discovery document: issuer, jwks_uri, introspection_endpoint',
        tags: ['tokens'],
        params: Params,
        response: {
          200: Type.Object({
            issuer: Type.String(),
            jwks_uri: Type.String(),
            introspection_endpoint: Type.String(),
          }),
          ...problems(404),
        },
      },
    },
    async (request, reply) => {
      const tenant = await tenantOf(request);
      const issuer = issuerOf(ctx.config.publicUrl, tenant.id);
      return sendCacheable(request, reply, {
        issuer,
        jwks_uri: `${issuer}/.well-known/jwks.json`,
        introspection_endpoint: `${ctx.config.publicUrl}/api/auth/introspect`,
      });
    },
  );
}
