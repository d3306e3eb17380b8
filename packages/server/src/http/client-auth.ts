import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { LatchkeyError } from '../errors/index.js';
import type { Scope } from '../modules/keys/index.js';
import type { AppCaller } from '../modules/oauth/index.js';
import { authenticateSecretKey, type Challenges, rateLimitTenant, refuseKey } from './auth.js';
import { bearerToken } from './bearer.js';
import type { ApiCaller, AppContext } from './context.js';

/**
 * The client authentication methods the introspection endpoint accepts, as its metadata
 * lists them (RFC 8414 section 2): the client id is the tenant id and the secret a secret
 * key, or (docs/design.md §14) an app's client id and secret.
 * `Authorization: Bearer sk_…` (docs/design.md §5.4) works too; it has no registered name.
 */
export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'] as const;

const HINT =
  "Send a secret key as Authorization: Bearer sk_…, or authenticate as the client: HTTP Basic or client_id and client_secret, with the tenant id as client_id and the secret key as client_secret, or a web or m2m app's client id (app_…) and client secret";
/** Every client id of an app starts so (modules/oauth); a tenant id is a UUID. */
const APP_PREFIX = 'app_';
const APP_REFUSED =
  "The client_id and client_secret are not those of a web or m2m app: the app may have been deleted, or the secret is wrong or was rotated out (its grace period is over). An app's secret is shown once, by `latchkey app create` and `latchkey app rotate-secret --tenant TENANT_ID APP_ID`.";
/** Nothing usable was sent: both schemes are offered (RFC 7235 section 4.1). */
const ANY: Challenges = {
  missing: 'Bearer realm="latchkey", Basic realm="latchkey"',
  invalid: 'Bearer realm="latchkey", error="invalid_token"',
  hint: HINT,
};
/** RFC 6749 section 5.2: a failed client authentication answers with the scheme it used. */
const BASIC: Challenges = {
  missing: 'Basic realm="latchkey"',
  invalid: 'Basic realm="latchkey"',
  hint: HINT,
};

interface ClientCredentials {
  clientId: string | undefined;
  secret: string | undefined;
}

/** RFC 6749 section 2.3.1: both parts are form-urlencoded before the Basic encoding. */
function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/** RFC 7617: `Basic base64(client_id ":" client_secret)`; undefined for any other scheme. */
function basicCredentials(request: FastifyRequest): ClientCredentials | undefined {
  const header = request.headers.authorization;
  if (!header || !/^Basic(?: |$)/i.test(header)) return undefined;
  const encoded = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header)?.[1];
  const decoded = encoded ? Buffer.from(encoded, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon < 0) return { clientId: undefined, secret: undefined };
  return {
    clientId: formDecode(decoded.slice(0, colon)),
    secret: formDecode(decoded.slice(colon + 1)),
  };
}

/**
 * docs/design.md §14: a confidential app introspects its tenant's tokens as a secret key
 * with `tokens:introspect` does (RFC 7662 section 2.1); a wrong secret costs the address
 * like a wrong key, and a browser's request is refused as a secret key's is.
 */
async function authenticateApp(
  ctx: AppContext,
  request: FastifyRequest,
  { clientId, secret }: ClientCredentials,
  challenges: Challenges,
): Promise<AppCaller> {
  const found =
    clientId !== undefined && secret ? await ctx.apps.authenticate(clientId, secret) : undefined;
  if (!found)
    await refuseKey(
      ctx,
      request,
      new LatchkeyError('unauthorized', APP_REFUSED, {
        headers: { 'www-authenticate': secret ? challenges.invalid : challenges.missing },
      }),
    );
  const caller = found as AppCaller;
  const origin = request.headers.origin;
  if (origin !== undefined)
    throw new LatchkeyError(
      'forbidden',
      `This request comes from a browser (it has an Origin header, ${origin.slice(0, 100)}), and an app's client secret must never reach one. Treat it as exposed: \`latchkey app rotate-secret --tenant ${caller.tenant.id} ${caller.app.id} --grace 0\`. (A server that forwards a browser's Origin header should not.)`,
      { headers: { 'access-control-allow-origin': origin, vary: 'Origin' } },
    );
  return caller;
}

async function authenticateClient(
  ctx: AppContext,
  request: FastifyRequest,
  credentials: ClientCredentials,
  scope: Scope,
  challenges: Challenges,
): Promise<ApiCaller> {
  if (credentials.clientId?.startsWith(APP_PREFIX))
    return authenticateApp(ctx, request, credentials, challenges);
  const auth = await authenticateSecretKey(ctx, request, credentials.secret, scope, challenges);
  if (credentials.clientId !== auth.tenant.id) {
    await refuseKey(
      ctx,
      request,
      new LatchkeyError(
        'unauthorized',
        'client_id must be the id of the tenant the secret key belongs to',
        {
          headers: { 'www-authenticate': challenges.invalid },
        },
      ),
    );
  }
  return auth;
}

/**
 * RFC 7662 section 2.1: the caller of introspection authenticates. A header (Bearer or
 * Basic) is checked before the body is read; credentials in the body (client_secret_post)
 * once it is parsed. The tenant's rate limit is counted once, after either.
 */
export function introspectionClient(ctx: AppContext, scope: Scope) {
  const limit = rateLimitTenant(ctx) as (r: FastifyRequest, s: FastifyReply) => Promise<unknown>;

  async function onRequest(request: FastifyRequest, reply: FastifyReply) {
    if (request.headers.authorization === undefined) return;
    const basic = basicCredentials(request);
    request.apiKey = basic
      ? await authenticateClient(ctx, request, basic, scope, BASIC)
      : await authenticateSecretKey(
          ctx,
          request,
          bearerToken(request.headers.authorization),
          scope,
          ANY,
        );
    return limit(request, reply);
  }

  const preHandler: preHandlerAsyncHookHandler = async (request, reply) => {
    const body = (typeof request.body === 'object' ? request.body : null) as Record<
      string,
      unknown
    > | null;
    const clientId = body?.client_id;
    const secret = body?.client_secret;
    if (request.apiKey) {
      // RFC 6749 section 2.3: one authentication method per request.
      if (secret !== undefined)
        throw new LatchkeyError(
          'invalid_request',
          'Send the secret key once: in the Authorization header or as client_secret, not both',
        );
      return;
    }
    request.apiKey = await authenticateClient(
      ctx,
      request,
      {
        clientId: typeof clientId === 'string' ? clientId : undefined,
        secret: typeof secret === 'string' ? secret : undefined,
      },
      scope,
      secret === undefined ? ANY : BASIC,
    );
    return limit(request, reply);
  };

  return { onRequest, preHandler };
}
