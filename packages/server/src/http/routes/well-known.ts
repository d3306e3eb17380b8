import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { LatchkeyError } from '../../errors/index.js';
import { issuerOf } from '../../modules/sessions/index.js';
import { getTenant } from '../../modules/tenants/index.js';
import { isUuid } from '../../storage/index.js';
import { sendCacheable } from '../cacheable.js';
import type { AppContext } from '../context.js';
import { problems } from '../schemas.js';

const Params = Type.Object({ tenantId: Type.String({ maxLength: 64 }) });
/** Short, so that a rotated key reaches verifiers quickly even through shared caches. */
const CACHE_CONTROL = 'public, max-age=60, stale-while-revalidate=30';

export function wellKnownRoutes(app: FastifyInstance, ctx: AppContext) {
  async function tenantOf(request: FastifyRequest) {
    const { tenantId } = request.params as { tenantId: string };
    if (!isUuid(tenantId)) throw new LatchkeyError('not_found', `No tenant ${tenantId}`);
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
      return sendCacheable(request, reply, await ctx.signingKeys.jwks(tenant.id), CACHE_CONTROL);
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
      return sendCacheable(
        request,
        reply,
        {
          issuer,
          jwks_uri: `${issuer}/.well-known/jwks.json`,
          introspection_endpoint: `${ctx.config.publicUrl}/api/auth/introspect`,
        },
        CACHE_CONTROL,
      );
    },
  );
}
