import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { FactorModel, SessionModel, UserModel } from './routes/models.js';
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
      components: {
        securitySchemes: {
          secretKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'A secret key, sk_test_… or sk_prod_…',
          },
          publishableKey: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Latchkey-Publishable-Key',
            description: 'A publishable key, pk_test_… or pk_live_… (browsers; never a secret key)',
          },
          accessToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: "An end user's access token (browsers: GET /v1/client/user)",
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
}
