import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import { signOutEverywhere, updateUser } from '../../modules/sessions/index.js';
import {
  deleteUser,
  getUser,
  listUsers,
  Metadata,
  NAME_MAX_LENGTH,
} from '../../modules/users/index.js';
import { authOf, rateLimitTenant, requireSecretKey } from '../auth.js';
import { type AppContext, accountDeps } from '../context.js';
import { problems } from '../schemas.js';
import { sessionRef, UserParams, userRef } from './models.js';

const ListQuery = Type.Object(
  {
    email: Type.Optional(
      Type.String({
        maxLength: defaults.email.maxLength,
        description: 'Exact address, matched case-insensitively',
      }),
    ),
    query: Type.Optional(
      Type.String({
        maxLength: defaults.email.maxLength,
        description: 'Part of an address or a name, matched in any case',
      }),
    ),
    limit: Type.Optional(
      Type.String({
        pattern: '^(100|[1-9][0-9]?)$',
        description: `1 to 100, default ${defaults.users.pageSize}`,
      }),
    ),
    cursor: Type.Optional(
      Type.String({
        maxLength: defaults.fields.tokenMaxLength,
        description: 'nextCursor of the previous page',
      }),
    ),
  },
  { additionalProperties: false },
);

const UpdateBody = Type.Object(
  {
    name: Type.Optional(Type.Union([Type.String({ maxLength: NAME_MAX_LENGTH }), Type.Null()])),
    metadata: Type.Optional(Metadata('Replaces the whole metadata object')),
    roles: Type.Optional(
      Type.Array(Type.String({ maxLength: defaults.users.roles.maxLength }), {
        maxItems: defaults.users.roles.max,
      }),
    ),
    disabled: Type.Optional(Type.Boolean({ description: 'Disabling also revokes every session' })),
  },
  { additionalProperties: false, minProperties: 1 },
);

const SessionParams = Type.Object({
  sessionId: Type.String({ maxLength: defaults.fields.idMaxLength }),
});

export function userRoutes(server: FastifyInstance, ctx: AppContext) {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const db = ctx.database.db;
  const deps = accountDeps(ctx);
  const read = [requireSecretKey(ctx, 'users:read'), rateLimitTenant(ctx)];
  const write = [requireSecretKey(ctx, 'users:write'), rateLimitTenant(ctx)];
  const sessionsWrite = [requireSecretKey(ctx, 'sessions:write'), rateLimitTenant(ctx)];
  const tags = ['users'];
  const security = [{ secretKey: [] }];

  app.get(
    '/v1/users',
    {
      schema: {
        operationId: 'listUsers',
        summary: 'List users, oldest first, with cursor pagination',
        tags,
        security,
        querystring: ListQuery,
        response: {
          200: Type.Object({
            data: Type.Array(userRef),
            nextCursor: Type.Union([Type.String(), Type.Null()]),
          }),
          ...problems(400, 401, 403, 422, 429),
        },
      },
      onRequest: read,
    },
    async (request) => {
      const q = request.query;
      return listUsers(db, authOf(request).tenant.id, {
        email: q.email,
        query: q.query,
        cursor: q.cursor,
        limit: q.limit === undefined ? undefined : Number(q.limit),
      });
    },
  );

  app.get(
    '/v1/users/:userId',
    {
      schema: {
        operationId: 'getUser',
        summary: 'Get a user',
        tags,
        security,
        params: UserParams,
        response: { 200: userRef, ...problems(401, 403, 404, 429) },
      },
      onRequest: read,
    },
    async (request) => getUser(db, authOf(request).tenant.id, request.params.userId),
  );

  app.patch(
    '/v1/users/:userId',
    {
      schema: {
        operationId: 'updateUser',
        summary: 'Update a user: name, metadata, roles, disabled',
        tags,
        security,
        params: UserParams,
        body: UpdateBody,
        response: { 200: userRef, ...problems(400, 401, 403, 404, 413, 415, 422, 429) },
      },
      onRequest: write,
    },
    async (request) =>
      updateUser(deps, authOf(request).tenant.id, request.params.userId, request.body),
  );

  app.delete(
    '/v1/users/:userId',
    {
      schema: {
        operationId: 'deleteUser',
        summary: 'Delete a user and every session of theirs',
        tags,
        security,
        params: UserParams,
        response: { 204: Type.Null(), ...problems(401, 403, 404, 429) },
      },
      onRequest: write,
    },
    async (request, reply) => {
      await deleteUser(deps, authOf(request).tenant.id, request.params.userId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/users/:userId/sessions',
    {
      schema: {
        operationId: 'listUserSessions',
        summary: "List a user's sessions, newest first",
        tags,
        security,
        params: UserParams,
        response: {
          200: Type.Object({ data: Type.Array(sessionRef) }),
          ...problems(401, 403, 404, 429),
        },
      },
      onRequest: read,
    },
    async (request) => {
      const tenantId = authOf(request).tenant.id;
      const { userId } = request.params;
      await getUser(db, tenantId, userId);
      return { data: await ctx.sessions.list(tenantId, userId) };
    },
  );

  app.delete(
    '/v1/users/:userId/sessions',
    {
      schema: {
        operationId: 'revokeUserSessions',
        summary: 'Revoke every session of a user (sign out everywhere)',
        tags,
        security,
        params: UserParams,
        response: { 204: Type.Null(), ...problems(401, 403, 404, 429) },
      },
      onRequest: sessionsWrite,
    },
    async (request, reply) => {
      await signOutEverywhere(deps, authOf(request).tenant.id, request.params.userId);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/v1/sessions/:sessionId',
    {
      schema: {
        operationId: 'revokeSession',
        summary: 'Revoke one session',
        tags: ['sessions'],
        security,
        params: SessionParams,
        response: { 204: Type.Null(), ...problems(401, 403, 404, 429) },
      },
      onRequest: sessionsWrite,
    },
    async (request, reply) => {
      await ctx.sessions.revokeSession(authOf(request).tenant.id, request.params.sessionId);
      return reply.code(204).send(null);
    },
  );
}
