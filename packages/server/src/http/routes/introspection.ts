import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import { introspect } from '../../modules/introspection/index.js';
import { authOf } from '../auth.js';
import { introspectionClient } from '../client-auth.js';
import type { AppContext } from '../context.js';
import { replayedBody } from '../fast-path.js';
import { parseForm } from '../form-body.js';
import { INTROSPECT_PATH } from '../introspection-fast-path.js';
import { problems } from '../schemas.js';

const Body = Type.Object(
  {
    token: Type.String({ description: 'The access token to check' }),
    token_type_hint: Type.Optional(Type.String({ maxLength: defaults.fields.hintMaxLength })),
    client_id: Type.Optional(
      Type.String({
        maxLength: defaults.fields.idMaxLength,
        description: "client_secret_post: the tenant id, or a web or m2m app's id (app_…)",
      }),
    ),
    client_secret: Type.Optional(
      Type.String({
        maxLength: defaults.fields.keyMaxLength,
        description: "client_secret_post: a secret key, or the app's client secret",
      }),
    ),
  },
  { additionalProperties: false },
);

const Result = Type.Object(
  {
    active: Type.Boolean(),
    sub: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
    tid: Type.Optional(Type.String()),
    sid: Type.Optional(Type.String()),
    roles: Type.Optional(Type.Array(Type.String())),
    scope: Type.Optional(Type.String()),
    exp: Type.Optional(Type.Integer()),
    iat: Type.Optional(Type.Integer()),
    iss: Type.Optional(Type.String()),
    jti: Type.Optional(Type.String()),
    aud: Type.Optional(Type.String({ description: "The tenant's API audience (RFC 9068)" })),
    client_id: Type.Optional(
      Type.String({
        description:
          "RFC 9068: the tenant id (the hosted flow's tokens), or the id of the app the token was issued to",
      }),
    ),
    amr: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'How the user authenticated for this session (RFC 8176: pwd, fed); absent on sessions older than it',
      }),
    ),
    auth_time: Type.Optional(
      Type.Integer({
        description: 'When the user authenticated for this session, seconds since the epoch',
      }),
    ),
    token_type: Type.Optional(Type.String()),
  },
  { description: 'An inactive answer is exactly {"active":false}.' },
);

export function introspectionRoutes(app: FastifyInstance, ctx: AppContext) {
  const client = introspectionClient(ctx, 'tokens:introspect');
  // RFC 7662 section 2.1: the request is form-encoded; docs/design.md §5.4 also takes JSON.
  app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      parseForm,
    );
    scope.post(
      INTROSPECT_PATH,
      {
        bodyLimit: defaults.introspectionBodyLimit,
        attachValidation: true,
        schema: {
          operationId: 'introspectToken',
          summary: 'Is this access token active for my tenant? (RFC 7662)',
          description:
            "Inactive when the token is invalid, expired, of another tenant, or its session is revoked or its user disabled or deleted; an m2m app's client-credentials token (sub = client_id = the app's id, no sid, email or roles) is active while its app exists. The caller is a secret key of the tenant, or a web or m2m app of it with its client credentials. A missing `token` is a bad request (400).",
          tags: ['tokens'],
          security: [{ secretKey: [] }, { clientSecretBasic: [] }],
          consumes: ['application/json', 'application/x-www-form-urlencoded'],
          body: Body,
          response: { 200: Result, ...problems(400, 401, 403, 413, 415, 429) },
        },
        onRequest: client.onRequest,
        // A body the fast path read before handing the request over is parsed from memory.
        preParsing: (request, _reply, payload, done) =>
          done(null, replayedBody(request.raw) ?? payload),
        preHandler: client.preHandler,
      },
      async (request) => {
        if (request.validationError) {
          throw new LatchkeyError('invalid_request', 'Send the token to check as {"token": "…"}');
        }
        return introspect(ctx, authOf(request).tenant, request.body.token);
      },
    );
  });
}
