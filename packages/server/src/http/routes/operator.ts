import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { defaults, ENVIRONMENTS, MFA_POLICIES, PLANS } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import { recordAudit } from '../../modules/audit/index.js';
import {
  OPERATOR_KEY_PREFIX,
  type OperatorKey,
  resolveOperatorKey,
} from '../../modules/operators/index.js';
import { provisionTenant } from '../../modules/provisioning/index.js';
import { SigningKeys } from '../../modules/sessions/index.js';
import { getTenant, searchTenants, updateTenant } from '../../modules/tenants/index.js';
import { changes } from '../admin/tenant-pages.js';
import { refuseKey } from '../auth.js';
import { bearerToken } from '../bearer.js';
import type { AppContext } from '../context.js';
import { problems } from '../schemas.js';

const limits = defaults.tenants;
const literals = <T extends string>(values: readonly T[]) =>
  Type.Union(values.map((v) => Type.Literal(v)));

export const TenantModel = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    plan: literals(PLANS),
    limits: Type.Object({ rps: Type.Integer(), rpm: Type.Integer() }),
    environment: literals(ENVIRONMENTS),
    allowedOrigins: Type.Array(Type.String()),
    requireEmailVerification: Type.Boolean(),
    accessTokenTtl: Type.Integer(),
    passwordEnabled: Type.Boolean(),
    mfaPolicy: literals(MFA_POLICIES),
    passkeysEnabled: Type.Boolean(),
    dynamicRegistration: Type.Boolean(),
    branding: Type.Object({
      logoUrl: Type.Union([Type.String(), Type.Null()]),
      primaryColor: Type.Union([Type.String(), Type.Null()]),
    }),
    audience: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Tenant', title: 'Tenant' },
);
const tenantRef = Type.Unsafe<unknown>({ $ref: 'Tenant#' });

/** The settings of `latchkey tenant create`, by the names of the Tenant model. */
const settings = {
  name: Type.String({ maxLength: limits.nameMaxLength }),
  plan: Type.String({ maxLength: 20, description: PLANS.join(', ') }),
  rps: Type.Integer({ description: 'Enterprise plan only' }),
  rpm: Type.Integer({ description: 'Enterprise plan only' }),
  allowedOrigins: Type.Array(Type.String({ maxLength: 2048 }), { maxItems: 100 }),
  requireEmailVerification: Type.Boolean(),
  accessTokenTtl: Type.Integer(),
  passwordEnabled: Type.Boolean(),
  mfaPolicy: Type.String({ maxLength: 20, description: MFA_POLICIES.join(', ') }),
  passkeysEnabled: Type.Boolean(),
  dynamicRegistration: Type.Boolean(),
  logoUrl: Type.Union([Type.String({ maxLength: limits.logoUrlMaxLength }), Type.Null()]),
  primaryColor: Type.Union([Type.String({ maxLength: 7 }), Type.Null()]),
  audience: Type.Union([Type.String({ maxLength: limits.audienceMaxLength }), Type.Null()]),
};
const optional = <T extends Record<string, Parameters<typeof Type.Optional>[0]>>(fields: T) =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(v)])) as {
    [K in keyof T]: ReturnType<typeof Type.Optional<T[K]>>;
  };

const CreateBody = Type.Object(
  {
    ...optional(settings),
    name: settings.name,
    environment: Type.Optional(
      Type.String({ maxLength: 20, description: `${ENVIRONMENTS.join(', ')} (never changes)` }),
    ),
  },
  { additionalProperties: false },
);
const UpdateBody = Type.Object(optional(settings), {
  additionalProperties: false,
  minProperties: 1,
});

const ListQuery = Type.Object(
  {
    search: Type.Optional(
      Type.String({
        maxLength: limits.nameMaxLength,
        description: 'Part of a name or an id, in any case',
      }),
    ),
    after: Type.Optional(
      Type.String({ maxLength: 64, description: 'next of the previous page: a tenant id' }),
    ),
    limit: Type.Optional(
      Type.String({ pattern: '^(100|[1-9][0-9]?)$', description: '1 to 100, default 50' }),
    ),
  },
  { additionalProperties: false },
);
const TenantParams = Type.Object({
  tenantId: Type.String({ maxLength: defaults.fields.idMaxLength }),
});

const CHALLENGE = 'Bearer realm="latchkey-operator"';
const operators = new WeakMap<FastifyRequest, OperatorKey>();

/**
 * Step "authenticate key" of docs/design.md §21: a live operator key (lko_…). Tenant keys
 * never work here, nor operator keys on tenants' routes (the key resolver knows no lko_).
 */
async function requireOperatorKey(ctx: AppContext, request: FastifyRequest): Promise<void> {
  const presented = bearerToken(request.headers.authorization);
  if (!presented)
    await refuseKey(
      ctx,
      request,
      new LatchkeyError(
        'unauthorized',
        'Send an operator key as Authorization: Bearer lko_… (make one with latchkey operator-key create)',
        { headers: { 'www-authenticate': CHALLENGE } },
      ),
    );
  const token = presented as string;
  if (/^(sk|pk)_/.test(token))
    throw new LatchkeyError(
      'forbidden',
      `This endpoint needs an operator key (${OPERATOR_KEY_PREFIX}…); a tenant's key never works here`,
    );
  const key = await resolveOperatorKey(ctx.database.db, token);
  if (!key)
    await refuseKey(
      ctx,
      request,
      new LatchkeyError('unauthorized', 'This operator key is unknown or revoked', {
        headers: { 'www-authenticate': `${CHALLENGE}, error="invalid_token"` },
      }),
    );
  operators.set(request, key as OperatorKey);
}

/** Who made a change, in the audit log: the key as listed, never the key itself. */
const actorOf = (request: FastifyRequest) =>
  `operator key ${operators.get(request)?.display ?? 'unknown'}`;

/** docs/design.md §21: tenants over REST, for platforms that provision many. */
export function operatorRoutes(server: FastifyInstance, ctx: AppContext) {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const db = ctx.database.db;
  const tags = ['operator'];
  const security = [{ operatorKey: [] }];
  const onRequest = (request: FastifyRequest) => requireOperatorKey(ctx, request);

  app.post(
    '/v1/operator/tenants',
    {
      schema: {
        operationId: 'createTenant',
        summary:
          'Create a tenant with its signing key, a secret key and a publishable key (the secret key is returned only now)',
        tags,
        security,
        body: CreateBody,
        response: {
          201: Type.Object({
            tenant: tenantRef,
            secretKey: Type.String({ description: 'sk_test_… or sk_prod_…; shown only now' }),
            publishableKey: Type.String(),
          }),
          ...problems(400, 401, 403, 413, 415, 422, 429),
        },
      },
      onRequest,
    },
    async (request, reply) => {
      const { environment, ...input } = request.body;
      // One transaction: the tenant, its signing key and its keys exist together or not at all.
      const created = await db.transaction().execute(async (trx) => {
        const made = await provisionTenant(
          { db: trx, signingKeys: new SigningKeys(trx, ctx.box) },
          { ...input, environment } as Parameters<typeof provisionTenant>[1],
          { name: 'default' },
        );
        await recordAudit(trx, {
          tenantId: made.tenant.id,
          kind: 'tenant_created',
          actor: actorOf(request),
          detail: {
            name: made.tenant.name,
            environment: made.tenant.environment,
            plan: made.tenant.plan,
          },
        });
        return made;
      });
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/v1/operator/tenants',
    {
      schema: {
        operationId: 'listTenants',
        summary: 'List tenants, oldest first, a page at a time; search by name or id',
        tags,
        security,
        querystring: ListQuery,
        response: {
          200: Type.Object({
            data: Type.Array(tenantRef),
            next: Type.Union([Type.String(), Type.Null()], {
              description: 'Pass as after for the next page; null on the last',
            }),
          }),
          ...problems(400, 401, 403, 422, 429),
        },
      },
      onRequest,
    },
    async (request) => {
      const q = request.query;
      return searchTenants(db, {
        query: q.search,
        after: q.after || undefined,
        limit: q.limit === undefined ? 50 : Number(q.limit),
      });
    },
  );

  app.get(
    '/v1/operator/tenants/:tenantId',
    {
      schema: {
        operationId: 'getTenant',
        summary: 'Get a tenant',
        tags,
        security,
        params: TenantParams,
        response: { 200: tenantRef, ...problems(401, 403, 404, 429) },
      },
      onRequest,
    },
    async (request) => getTenant(db, request.params.tenantId),
  );

  app.patch(
    '/v1/operator/tenants/:tenantId',
    {
      schema: {
        operationId: 'updateTenant',
        summary: "Change a tenant's settings; what is not sent stays as it is",
        tags,
        security,
        params: TenantParams,
        body: UpdateBody,
        response: { 200: tenantRef, ...problems(400, 401, 403, 404, 413, 415, 422, 429) },
      },
      onRequest,
    },
    async (request) => {
      const id = request.params.tenantId;
      const before = await getTenant(db, id);
      const updated = await updateTenant(
        { db, bus: ctx.bus },
        id,
        request.body as Parameters<typeof updateTenant>[2],
      );
      await recordAudit(db, {
        tenantId: id,
        kind: 'tenant_updated',
        actor: actorOf(request),
        detail: changes(before, updated),
      });
      return updated;
    },
  );
}
