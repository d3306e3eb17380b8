import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import { getTenant, type Tenant } from '../../modules/tenants/index.js';
import { isUuid, type Schema } from '../../storage/index.js';
import { sendCacheable } from '../cacheable.js';
import type { AppContext } from '../context.js';
import { problems } from '../schemas.js';

/** The `{tenantId}` of the tenant's paths under its issuer (`/t/{tenantId}/…`). */
export const TenantParams = Type.Object({
  tenantId: Type.String({ maxLength: defaults.fields.idMaxLength }),
});
/**
 * The tenant's public documents (JWKS, discovery): short, so that a rotated key reaches
 * verifiers quickly even through shared caches.
 */
const { maxAgeSeconds, staleWhileRevalidateSeconds } = defaults.signingKeys.jwks;
export const PUBLIC_DOCUMENT_CACHE = `public, max-age=${maxAgeSeconds}, stale-while-revalidate=${staleWhileRevalidateSeconds}`;

/** The tenant a path names; a malformed or unknown id is 404 `not_found`. */
export async function tenantOfPath(db: Kysely<Schema>, tenantId: string): Promise<Tenant> {
  if (!isUuid(tenantId)) throw new LatchkeyError('not_found', `No tenant ${tenantId}`);
  return getTenant(db, tenantId);
}

export function wellKnownRoutes(server: FastifyInstance, ctx: AppContext) {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tenantOf = (tenantId: string) => tenantOfPath(ctx.database.db, tenantId);

  app.get(
    '/t/:tenantId/.well-known/jwks.json',
    {
      schema: {
        operationId: 'getJwks',
        security: [],
        summary: "The tenant's public signing keys (RFC 7517)",
        tags: ['tokens'],
        params: TenantParams,
        response: {
          200: Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.String())) }),
          ...problems(404),
        },
      },
    },
    async (request, reply) => {
      const tenant = await tenantOf(request.params.tenantId);
      return sendCacheable(
        request,
        reply,
        await ctx.signingKeys.jwks(tenant.id),
        PUBLIC_DOCUMENT_CACHE,
      );
    },
  );
}
