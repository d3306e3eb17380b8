import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LatchkeyClaims } from './claims.js';
import { LatchkeyError, LatchkeyTokenError } from './errors.js';
import type { Introspect } from './introspect.js';
import { resourceMetadataUrl } from './resource-metadata.js';
import type { VerifyToken } from './verify.js';

export interface MiddlewareOptions {
  /**
   * `local` (default) verifies the signature against the tenant's JWKS: no network call per
   * request, but a revoked session stays valid until the token's `exp`. `introspect` asks the
   * API on every request and sees revocation at once (needs the secret key).
   */
  mode?: 'local' | 'introspect' | undefined;
  /** Let requests without a Bearer token through with `auth` undefined. Invalid tokens still get 401. */
  optional?: boolean | undefined;
  /**
   * Called when a token could not be checked at all (keys or API unreachable); the request
   * is answered 503. Default: `console.error`.
   */
  onError?: ((error: unknown) => void) | undefined;
  /**
   * The authentication methods a token's session must have used (its `amr` claim, RFC 8176):
   * every value listed (`['mfa']`), or a predicate over the token's `amr` (`[]` when it has
   * none). A valid token that falls short is answered 401 with the RFC 9470 challenge
   * `Bearer error="insufficient_user_authentication"`: the person must sign in again.
   */
  requireAmr?: readonly string[] | ((amr: readonly string[]) => boolean) | undefined;
  /**
   * The URL of your API's protected-resource metadata (`protectedResourceMetadata(…).url`).
   * Every 401 then names it in its challenge, `Bearer resource_metadata="…"` (RFC 9728
   * section 5.1), so that a client (an MCP client, for one) finds where to get a token.
   */
  resourceMetadata?: string | undefined;
}

/** The request headers we read; Node, Express and Fastify requests all fit. */
export interface RequestHeaders {
  authorization?: string | string[] | undefined;
}

export interface ExpressLikeRequest {
  headers: RequestHeaders;
  auth?: LatchkeyClaims | undefined;
}

/** Node's `ServerResponse`, which Express's response extends. */
export interface NodeLikeResponse {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body: string): unknown;
}

export type ExpressMiddleware = (
  req: ExpressLikeRequest,
  res: NodeLikeResponse,
  next: (error?: unknown) => void,
) => void;

export interface FastifyLikeRequest {
  headers: RequestHeaders;
  auth?: LatchkeyClaims | undefined;
}

export interface FastifyLikeReply {
  code(statusCode: number): unknown;
  header(name: string, value: string): unknown;
  send(payload: string): unknown;
}

export type FastifyHook = (
  request: FastifyLikeRequest,
  reply: FastifyLikeReply,
) => Promise<unknown>;

/** A request that passed the handler's authentication. */
export type AuthenticatedRequest = IncomingMessage & { auth: LatchkeyClaims };
/** A request under `optional: true`: `auth` is undefined when no token was sent. */
export type OptionallyAuthenticatedRequest = IncomingMessage & { auth: LatchkeyClaims | undefined };

export type NodeRequestListener = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface Verifiers {
  verifyToken: VerifyToken;
  introspect: Introspect;
  /** Fails at set-up, not on the first request, when the mode's configuration is missing. */
  checkConfig(mode: 'local' | 'introspect'): void;
  tenantId: string | undefined;
  audience: string | undefined;
}

type Outcome =
  | { ok: true; auth: LatchkeyClaims | undefined }
  | { ok: false; status: 401 | 503; headers: Record<string, string>; body: string };

type Authenticate = (authorization: string | string[] | undefined) => Promise<Outcome>;

const PROBLEM_TYPE = 'tag:latchkey.dev,2026:problem:';
/** RFC 6750 section 2.1: `Bearer` (case-insensitive scheme, RFC 9110 section 11.1) and a b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const SCHEME = /^Bearer(?: |$)/i;

export function createAuthenticator(
  verifiers: Verifiers,
  options: MiddlewareOptions = {},
): Authenticate {
  const mode = options.mode ?? 'local';
  if (mode !== 'local' && mode !== 'introspect') {
    throw new LatchkeyError('option_invalid', {
      reason: `Unknown middleware mode "${String(mode)}".`,
      action: "Use mode: 'local' or mode: 'introspect'.",
    });
  }
  verifiers.checkConfig(mode);
  const onError = options.onError ?? defaultOnError;
  const check = mode === 'local' ? verifiers.verifyToken : introspectAsClaims(verifiers);
  const sufficient = amrCheck(options.requireAmr);
  const challenge = challenges(options.resourceMetadata);
  const unauthorized = (detail: string, missing = false) =>
    problem(401, 'unauthorized', 'Unauthorized', detail, {
      'www-authenticate': missing ? challenge.missing : challenge.invalid,
    });

  return async (authorization) => {
    if (authorization === undefined || authorization === '' || !isBearer(authorization)) {
      // RFC 6750 section 3.1: no credentials, so no error code in the challenge.
      return options.optional
        ? { ok: true, auth: undefined }
        : unauthorized('No Bearer access token was sent.', true);
    }
    const token = typeof authorization === 'string' ? BEARER.exec(authorization)?.[1] : undefined;
    if (token === undefined) {
      return unauthorized('The Authorization header is not a valid Bearer token.');
    }
    let auth: LatchkeyClaims;
    try {
      auth = await check(token);
    } catch (error) {
      if (error instanceof Rejected) return unauthorized(error.message);
      if (error instanceof LatchkeyTokenError && error.code !== 'jwks_unavailable') {
        return unauthorized(error.reason);
      }
      onError(error);
      return unavailable(error);
    }
    if (!sufficient(auth.amr ?? [])) return insufficientAuthentication(challenge.insufficient);
    return { ok: true, auth };
  };
}

/** The WWW-Authenticate challenges of the 401s, with RFC 9728's `resource_metadata` when set. */
function challenges(resourceMetadata: string | undefined) {
  // A URL's href has no `"` or `\`, so it is a quoted-string as it is (RFC 9110 section 5.6.4).
  const where =
    resourceMetadata === undefined
      ? []
      : [`resource_metadata="${resourceMetadataUrl(resourceMetadata)}"`];
  const bearer = (...params: string[]) =>
    [...params, ...where].length ? `Bearer ${[...params, ...where].join(', ')}` : 'Bearer';
  return {
    missing: bearer(),
    invalid: bearer('error="invalid_token"'),
    insufficient: bearer(
      'error="insufficient_user_authentication"',
      'error_description="A stronger or different authentication is required"',
    ),
  };
}

function amrCheck(required: MiddlewareOptions['requireAmr']): (amr: readonly string[]) => boolean {
  if (required === undefined) return () => true;
  if (typeof required === 'function') return required;
  if (!Array.isArray(required) || !required.every((m) => typeof m === 'string' && m !== '')) {
    throw new LatchkeyError('option_invalid', {
      reason: 'requireAmr must be a list of amr values or a function.',
      action: "Pass values such as ['mfa'], or (amr) => amr.includes('hwk').",
    });
  }
  const values = [...required];
  return (amr) => values.every((m) => amr.includes(m));
}

/** An introspection answer that rejects the token; it has no code of its own. */
class Rejected extends Error {}

function introspectAsClaims(verifiers: Verifiers): VerifyToken {
  return async (token) => {
    const result = await verifiers.introspect(token);
    if (!result.active) {
      throw new Rejected('The access token is not active (expired, revoked, or unknown).');
    }
    if (verifiers.tenantId !== undefined && result.tid !== verifiers.tenantId) {
      throw new Rejected('The access token belongs to another tenant.');
    }
    if (verifiers.audience !== undefined && result.aud !== verifiers.audience) {
      throw new Rejected('The access token is meant for another API (aud).');
    }
    const { active: _active, ...claims } = result;
    return claims;
  };
}

export function expressMiddleware(authenticate: Authenticate): ExpressMiddleware {
  return (req, res, next) => {
    void authenticate(req.headers.authorization).then((outcome) => {
      if (outcome.ok) {
        req.auth = outcome.auth;
        next();
      } else {
        writeNode(res, outcome);
      }
    }, next);
  };
}

export function fastifyHook(authenticate: Authenticate): FastifyHook {
  return async (request, reply) => {
    const outcome = await authenticate(request.headers.authorization);
    if (outcome.ok) {
      request.auth = outcome.auth;
      return;
    }
    reply.code(outcome.status);
    for (const [name, value] of Object.entries(outcome.headers)) reply.header(name, value);
    reply.send(outcome.body);
    // An async hook that has answered returns the reply, so Fastify stops the request here.
    return reply;
  };
}

export function nodeHandler(
  authenticate: Authenticate,
  handler: (req: OptionallyAuthenticatedRequest, res: ServerResponse) => unknown,
): NodeRequestListener {
  return async (req, res) => {
    const outcome = await authenticate(req.headers.authorization);
    if (!outcome.ok) {
      writeNode(res, outcome);
      return;
    }
    const authenticated = req as OptionallyAuthenticatedRequest;
    authenticated.auth = outcome.auth;
    await handler(authenticated, res);
  };
}

function writeNode(res: NodeLikeResponse, outcome: Extract<Outcome, { ok: false }>): void {
  res.statusCode = outcome.status;
  for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
  res.end(outcome.body);
}

function isBearer(authorization: string | string[]): boolean {
  return typeof authorization !== 'string' || SCHEME.test(authorization);
}

/** RFC 9470 section 3: the token is valid, but how its person authenticated is not enough. */
function insufficientAuthentication(challenge: string): Outcome {
  return problem(
    401,
    'insufficient_user_authentication',
    'Insufficient user authentication',
    "The access token is valid, but the way its user signed in does not meet this resource's requirement (amr); sign in again with the required method.",
    { 'www-authenticate': challenge },
  );
}

function unavailable(error: unknown): Outcome {
  const retryAfter = (error as { retryAfter?: unknown }).retryAfter;
  const headers: Record<string, string> =
    typeof retryAfter === 'number' ? { 'retry-after': String(retryAfter) } : {};
  return problem(
    503,
    'service_unavailable',
    'Service unavailable',
    'Authentication is temporarily unavailable.',
    headers,
  );
}

/** RFC 9457 problem document, in the service's own shape. */
function problem(
  status: 401 | 503,
  code: string,
  title: string,
  detail: string,
  headers: Record<string, string>,
): Outcome {
  return {
    ok: false,
    status,
    headers: {
      'content-type': 'application/problem+json',
      'cache-control': 'no-store',
      ...headers,
    },
    body: JSON.stringify({ type: `${PROBLEM_TYPE}${code}`, title, status, detail, code }),
  };
}

function defaultOnError(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`[latchkey] could not check an access token: ${message}`);
}
