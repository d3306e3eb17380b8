import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import { issuerOf } from '../../modules/sessions/index.js';
import { getTenant } from '../../modules/tenants/index.js';
import { isUuid } from '../../storage/index.js';
import { sendCacheable } from '../cacheable.js';
import { CLIENT_AUTH_METHODS } from '../client-auth.js';
import type { AppContext } from '../context.js';
import { INTROSPECT_PATH } from '../introspection-fast-path.js';
import { problems } from '../schemas.js';

const Params = Type.Object({ tenantId: Type.String({ maxLength: defaults.fields.idMaxLength }) });
/** Short, so that a rotated key reaches verifiers quickly even through shared caches. */
const { maxAgeSeconds, staleWhileRevalidateSeconds } = defaults.signingKeys.jwks;
const CACHE_CONTROL = `public, max-age=${maxAgeSeconds}, stale-while-revalidate=${staleWhileRevalidateSeconds}`;

const Metadata = Type.Object({
  issuer: Type.String(),
  authorization_endpoint: Type.String(),
  jwks_uri: Type.String(),
  introspection_endpoint: Type.String(),
  introspection_endpoint_auth_methods_supported: Type.Array(Type.String()),
  response_types_supported: Type.Array(Type.String()),
  response_modes_supported: Type.Array(Type.String()),
  grant_types_supported: Type.Array(Type.String()),
  subject_types_supported: Type.Array(Type.String()),
});

/**
 * Only what the service honours. The hosted page answers with the access token in the
 * fragment (the implicit response, RFC 6749 section 4.2.2), so there is no OAuth token
 * endpoint to name (RFC 8414 section 2 needs one only for other grants); no ID tokens are
 * issued, so OpenID's id_token_signing_alg_values_supported is left out rather than claimed.
 */
export function metadataOf(authUrl: string, tenantId: string) {
  const issuer = issuerOf(authUrl, tenantId);
  return {
    issuer,
    authorization_endpoint: `${authUrl}/sign-in`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    introspection_endpoint: `${authUrl}${INTROSPECT_PATH}`,
    introspection_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    response_types_supported: ['token'],
    response_modes_supported: ['fragment'],
    grant_types_supported: ['implicit'],
    // `sub` is the user's id, the same for every app of the tenant.
    subject_types_supported: ['public'],
  };
}

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

  // One document at both addresses: OpenID Connect Discovery 1.0 section 4 and the RFC 8414
  // section 3 path (well-known segment inserted before the issuer's path).
  const metadataRoute = (operationId: string) => ({
    schema: {
      operationId,
      security: [],
      summary: "The tenant's authorization server metadata (RFC 8414, OpenID Connect Discovery)",
      description:
        "The hosted sign-in page is the authorization endpoint; it takes Latchkey's own parameters (pk, redirect_url, state, code_challenge) and answers in the URL fragment only.",
      tags: ['tokens'],
      params: Params,
      response: { 200: Metadata, ...problems(404) },
    },
  });
  async function sendMetadata(
    request: FastifyRequest<{ Params: Static<typeof Params> }>,
    reply: FastifyReply,
  ) {
    const tenant = await tenantOf(request.params.tenantId);
    return sendCacheable(
      request,
      reply,
      metadataOf(ctx.config.publicUrl, tenant.id),
      CACHE_CONTROL,
    );
  }
  app.get(
    '/t/:tenantId/.well-known/openid-configuration',
    metadataRoute('getOpenIdConfiguration'),
    sendMetadata,
  );
  app.get(
    '/.well-known/oauth-authorization-server/t/:tenantId',
    metadataRoute('getAuthorizationServerMetadata'),
    sendMetadata,
  );
}
