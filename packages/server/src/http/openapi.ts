import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { EVENT_CATALOGUE, EVENT_TYPES, eventBody } from '../modules/webhooks/index.js';
import { FactorModel, SessionModel, UserModel } from './routes/models.js';
import { TenantModel } from './routes/operator.js';
import { Problem } from './schemas.js';

/**
 * Collects `METHOD /path` of every API route as it is added (HEAD and hidden pages
 * excluded), for the check that the OpenAPI document lists them all.
 */
export function collectApiRoutes(app: FastifyInstance): string[] {
  const routes: string[] = [];
  app.addHook('onRoute', (route) => {
    // Hidden routes are HTML pages and CORS preflights, not part of the API document.
    if ((route.schema as { hide?: boolean } | undefined)?.hide) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) if (method !== 'HEAD') routes.push(`${method} ${route.url}`);
  });
  return routes;
}

/** The `webhooks` of an OpenAPI 3.1 document, as @fastify/swagger types it. */
type Webhooks = NonNullable<
  Extract<NonNullable<FastifyDynamicSwaggerOptions['openapi']>, { openapi: string }>['webhooks']
>;

const SIGNATURE_HEADERS = [
  ['webhook-id', 'The message id (msg_...): the same in every retry and resend; dedupe by it'],
  ['webhook-timestamp', 'Unix seconds when this attempt was signed'],
  [
    'webhook-signature',
    'v1,<base64 HMAC-SHA256>, space-separated: two during a secret rotation grace period',
  ],
] as const;

/**
 * The events (docs/design.md §17) as OpenAPI 3.1 `webhooks`: one POST per event type that
 * Latchkey sends to a tenant's endpoints, signed per Standard Webhooks.
 */
function webhooks(): Webhooks {
  const items = Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook.${type}`,
          summary: type,
          description: `${EVENT_CATALOGUE[type].when} Verify the signature (Standard Webhooks) over the raw body before reading it; delivery is at least once.`,
          tags: ['Webhooks'],
          security: [],
          parameters: SIGNATURE_HEADERS.map(([name, description]) => ({
            name,
            in: 'header' as const,
            required: true,
            description,
            schema: { type: 'string' },
          })),
          requestBody: {
            required: true,
            content: { 'application/json': { schema: eventBody(type) } },
          },
          responses: {
            '200': {
              description:
                'Any 2xx within 15 s is success; anything else, or no answer, is retried with the same webhook-id',
            },
          },
        },
      },
    ]),
  );
  // TypeBox schemas are JSON Schema 2020-12, which OpenAPI 3.1 takes as they are; the
  // document's types (openapi-types) do not describe them.
  return items as unknown as Webhooks;
}

/**
 * The OpenAPI document (`/v1/openapi.json`): its info, server, security schemes and the
 * shared schemas; routes registered after this add their operations to it.
 */
export async function registerOpenApi(app: FastifyInstance, publicUrl: string): Promise<void> {
  await app.register(swagger, {
    // Shared schemas are named by their $id (Problem, User, Session), not def-0, def-1, ….
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Latchkey',
        version: '0.1.0',
        description: 'Multi-tenant authentication service. Errors are RFC 9457 problem documents.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: publicUrl }],
      webhooks: webhooks(),
      components: {
        securitySchemes: {
          secretKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'A secret key, sk_test_… or sk_prod_…',
          },
          publishableKey: {
            type: 'apiKey',
            in: 'header' as const,
            name: 'X-Latchkey-Publishable-Key',
            description: 'A publishable key, pk_test_… or pk_live_… (browsers; never a secret key)',
          },
          accessToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: "An end user's access token (browsers: GET /v1/client/user)",
          },
          operatorKey: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An operator key, lko_… (latchkey operator-key create); manages tenants, never a tenant key',
          },
          metricsToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'The METRICS_TOKEN of the server (operators only)',
          },
          clientSecretBasic: {
            type: 'http',
            scheme: 'basic',
            description:
              "RFC 7662 client authentication (client_secret_basic): the tenant id as user name and a secret key as password, or a web or m2m app's client id (app_…) and client secret",
          },
        },
      },
    },
  });
  app.addSchema(Problem);
  app.addSchema(UserModel);
  app.addSchema(SessionModel);
  app.addSchema(FactorModel);
  app.addSchema(TenantModel);
}
