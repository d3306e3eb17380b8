import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { withDeadline } from '../../async/deadline.js';
import { defaults } from '../../config/defaults.js';
import { sha256Bytes } from '../../crypto/hash.js';
import { LatchkeyError } from '../../errors/index.js';
import { bearerToken } from '../bearer.js';
import type { AppContext } from '../context.js';

const Health = Type.Object({ status: Type.String() });
const Readiness = Type.Object({
  status: Type.String(),
  checks: Type.Object({ database: Type.String(), redis: Type.String() }),
});

/**
 * `/metrics` tells route names, traffic and memory: only a scraper holding METRICS_TOKEN
 * reads it, and without the variable it is off.
 */
function requireMetricsToken(ctx: AppContext, request: FastifyRequest): void {
  const expected = ctx.config.metricsToken;
  if (expected === undefined) {
    throw new LatchkeyError('not_found', 'Metrics are off; set METRICS_TOKEN to turn them on');
  }
  const given = bearerToken(request.headers.authorization) ?? '';
  if (!timingSafeEqual(sha256Bytes(given), sha256Bytes(expected))) {
    throw new LatchkeyError('unauthorized', 'Send Authorization: Bearer METRICS_TOKEN', {
      headers: { 'www-authenticate': 'Bearer realm="metrics"' },
    });
  }
}

export function operationsRoutes(app: FastifyInstance, ctx: AppContext) {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getHealth',
        security: [],
        summary: 'The process is up',
        tags: ['operations'],
        response: { 200: Health },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        security: [],
        summary: 'The database (and Redis, when configured) answer',
        tags: ['operations'],
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (_request, reply) => {
      // A dependency that hangs is as unready as one that is down, and says so in time.
      const check = (ping: () => Promise<unknown>, what: string) =>
        withDeadline(ping(), defaults.timeouts.readinessMs, what).then(
          () => 'ok',
          () => 'unreachable',
        );
      const { redis: client } = ctx;
      const [database, redis] = await Promise.all([
        check(() => ctx.database.ping(), 'database ping'),
        client ? check(() => client.ping(), 'Redis ping') : Promise.resolve('not configured'),
      ]);
      const ready = database === 'ok' && redis !== 'unreachable';
      return reply
        .code(ready ? 200 : 503)
        .send({ status: ready ? 'ready' : 'not ready', checks: { database, redis } });
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        operationId: 'getMetrics',
        security: [{ metricsToken: [] }],
        summary: 'Prometheus metrics (Authorization: Bearer METRICS_TOKEN; off when unset)',
        tags: ['operations'],
        hide: false,
      },
    },
    async (request, reply) => {
      requireMetricsToken(ctx, request);
      const body = await ctx.metrics.registry.metrics();
      return reply.header('content-type', ctx.metrics.registry.contentType).send(body);
    },
  );

  app.get(
    '/v1/openapi.json',
    {
      schema: {
        operationId: 'getOpenApiDocument',
        security: [],
        summary: 'This OpenAPI document',
        tags: ['operations'],
      },
    },
    async () => app.swagger(),
  );
}
