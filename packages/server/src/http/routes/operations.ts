import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { withDeadline } from '../../async/deadline.js';
import { defaults } from '../../config/defaults.js';
import type { AppContext } from '../context.js';

const Health = Type.Object({ status: Type.String() });
const Readiness = Type.Object({
  status: Type.String(),
  checks: Type.Object({ database: Type.String(), redis: Type.String() }),
});

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
        .header('cache-control', 'no-store')
        .send({ status: ready ? 'ready' : 'not ready', checks: { database, redis } });
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        operationId: 'getMetrics',
        security: [],
        summary: 'Prometheus metrics',
        tags: ['operations'],
        hide: false,
      },
    },
    async (_request, reply) => {
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
