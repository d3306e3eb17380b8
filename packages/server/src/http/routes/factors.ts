import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import {
  confirmTotp,
  enrolTotp,
  listFactors,
  newRecoveryCodes,
  resetFactor,
} from '../../modules/mfa/index.js';
import { getUser } from '../../modules/users/index.js';
import { authOf, rateLimitTenant, requireSecretKey } from '../auth.js';
import type { AppContext } from '../context.js';
import { problems } from '../schemas.js';
import { factorRef, UserParams } from './models.js';

const FactorParams = Type.Object({
  userId: Type.String({ maxLength: defaults.fields.idMaxLength }),
  factorId: Type.String({ maxLength: defaults.fields.idMaxLength }),
});
const EnrolBody = Type.Object({ type: Type.Literal('totp') }, { additionalProperties: false });
const CodeBody = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 32, description: 'The 6 digits the app shows' }) },
  { additionalProperties: false },
);

/**
 * A user's second factors for teams that build their own UI, and for operators who reset a
 * lost device (docs/design.md §13): `users:read` lists, `users:write` changes.
 */
export function factorRoutes(server: FastifyInstance, ctx: AppContext) {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const deps = { db: ctx.database.db, bus: ctx.bus, box: ctx.box };
  const read = [requireSecretKey(ctx, 'users:read'), rateLimitTenant(ctx)];
  const write = [requireSecretKey(ctx, 'users:write'), rateLimitTenant(ctx)];
  const tags = ['factors'];
  const security = [{ secretKey: [] }];
  const who = (tenant: ReturnType<typeof authOf>['tenant'], userId: string) => ({
    tenant,
    userId,
    via: 'api',
  });

  app.get(
    '/v1/users/:userId/factors',
    {
      schema: {
        operationId: 'listFactors',
        summary: "List a user's second factors (never their secrets)",
        tags,
        security,
        params: UserParams,
        response: {
          200: Type.Object({ data: Type.Array(factorRef) }),
          ...problems(401, 403, 404, 429),
        },
      },
      onRequest: read,
    },
    async (request) => {
      const tenantId = authOf(request).tenant.id;
      const { userId } = request.params;
      await getUser(deps.db, tenantId, userId);
      return { data: await listFactors(deps.db, tenantId, userId) };
    },
  );

  app.post(
    '/v1/users/:userId/factors',
    {
      schema: {
        operationId: 'createFactor',
        summary: 'Start an authenticator app (TOTP) for a user; confirm it with a first code',
        description:
          'The secret and otpauthUri are shown only in this answer: show the URI as a QR code and the secret as text. The factor is not used until it is confirmed; starting another replaces an unconfirmed one.',
        tags,
        security,
        params: UserParams,
        body: EnrolBody,
        response: {
          201: Type.Object({
            id: Type.String({ format: 'uuid' }),
            type: Type.Literal('totp'),
            confirmed: Type.Literal(false),
            secret: Type.String({ description: 'Base32 (RFC 4648), for typing in by hand' }),
            otpauthUri: Type.String({ description: 'otpauth://totp/… for a QR code' }),
          }),
          ...problems(400, 401, 403, 404, 409, 413, 415, 422, 429),
        },
      },
      onRequest: write,
    },
    async (request, reply) => {
      const { tenant } = authOf(request);
      return reply.code(201).send(await enrolTotp(deps, who(tenant, request.params.userId)));
    },
  );

  app.post(
    '/v1/users/:userId/factors/:factorId/confirm',
    {
      schema: {
        operationId: 'confirmFactor',
        summary: 'Confirm an authenticator app with a first code: the factor is live',
        description:
          'A wrong code is 422 with errors[].code code_invalid; the code used here cannot sign in afterwards.',
        tags,
        security,
        params: FactorParams,
        body: CodeBody,
        response: { 200: factorRef, ...problems(400, 401, 403, 404, 409, 413, 415, 422, 429) },
      },
      onRequest: write,
    },
    async (request) => {
      const { tenant } = authOf(request);
      const { userId, factorId } = request.params;
      return confirmTotp(deps, who(tenant, userId), factorId, request.body.code);
    },
  );

  app.post(
    '/v1/users/:userId/recovery-codes',
    {
      schema: {
        operationId: 'createRecoveryCodes',
        summary: 'Make ten new recovery codes for a user; older ones stop working',
        description: 'The codes are shown only in this answer; each works once.',
        tags,
        security,
        params: UserParams,
        response: {
          201: Type.Object({ codes: Type.Array(Type.String(), { minItems: 10, maxItems: 10 }) }),
          ...problems(401, 403, 404, 429),
        },
      },
      onRequest: write,
    },
    async (request, reply) => {
      const { tenant } = authOf(request);
      const codes = await newRecoveryCodes(deps, who(tenant, request.params.userId));
      return reply.code(201).send({ codes });
    },
  );

  app.delete(
    '/v1/users/:userId/factors/:factorId',
    {
      schema: {
        operationId: 'deleteFactor',
        summary: "Remove a user's factor (an operator resets a lost device)",
        description:
          'recovery_code removes all the recovery codes. Under the required policy the user sets up a new factor at the next sign-in.',
        tags,
        security,
        params: FactorParams,
        response: { 204: Type.Null(), ...problems(401, 403, 404, 429) },
      },
      onRequest: write,
    },
    async (request, reply) => {
      const { tenant } = authOf(request);
      const { userId, factorId } = request.params;
      await resetFactor(deps, who(tenant, userId), factorId);
      return reply.code(204).send(null);
    },
  );
}
