import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { SignUpBody, SignUpResponse, signUp } from '../../modules/users/index.js';
import { authOf, rateLimitTenant, requireSecretKey } from '../auth.js';
import type { AppContext } from '../context.js';
import { problems } from '../schemas.js';

export function signUpRoutes(server: FastifyInstance, ctx: AppContext) {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/v1/auth/sign-up',
    {
      schema: {
        operationId: 'signUp',
        summary: 'Create a user with e-mail and password',
        tags: ['users'],
        security: [{ secretKey: [] }],
        body: SignUpBody,
        response: {
          201: SignUpResponse,
          ...problems(400, 401, 403, 409, 413, 415, 422, 429),
        },
      },
      onRequest: [requireSecretKey(ctx, 'users:write'), rateLimitTenant(ctx)],
    },
    async (request, reply) => {
      const { tenant } = authOf(request);
      try {
        const deps = { db: ctx.database.db, hasher: ctx.hasher, breached: ctx.breached };
        const user = await signUp(deps, tenant, request.body);
        ctx.metrics.signUps.inc({ outcome: 'created' });
        return reply.code(201).send(user);
      } catch (error) {
        ctx.metrics.signUps.inc({ outcome: 'refused' });
        throw error;
      }
    },
  );
}
