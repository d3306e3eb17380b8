import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import { getTenant } from '../../modules/tenants/index.js';
import { isUuid } from '../../storage/index.js';
import { sendCacheable } from '../cacheable.js';
import type { AppContext } from '../context.js';
import { problems } from '../schemas.js';

const Params = Type.Object({ tenantId: Type.String({ maxLength: defaults.fields.idMaxLength }) });
/** Short, so that a rotated key reaches verifiers quickly even through shared caches. */
const { maxAgeSeconds, staleWhileRevalidateSeconds } = defaults.signingKeys.jwks;
const CACHE_CONTROL = `public, max-age=${maxAgeSeconds}, stale-while-revalidate=${staleWhileRevalidateSeconds}`;

export function wellKnownRoutes(server: FastifyInstance, ctx: AppContext) {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  async function tenantOf(tenantId: string) {
    if (!isUuid(tenantId)) throw new LatchkeyError('not_found', `No tenant ${tenantId}`);
    return getTenant(ctx.database.db, tenantId);
  }

  app.get(
    '/t/:tenantId/.well-known/jwks.json',
    {
      schema: {
        operationId: 'getJwks',
        security: [],
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
      const tenant = await tenantOf(request.params.tenantId);
      return sendCacheable(request, reply, await ctx.signingKeys.jwks(tenant.id), CACHE_CONTROL);
    },
  );
}
