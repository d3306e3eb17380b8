import type { ServerResponse } from 'node:http';
import type { LatchkeyClaims } from './claims.js';
import {
  type LatchkeyOptions,
  requireSecretKey,
  requireTenantId,
  resolveConfig,
} from './config.js';
import { createIntrospector, type IntrospectionResult } from './introspect.js';
import {
  type AuthenticatedRequest,
  createAuthenticator,
  type ExpressMiddleware,
  expressMiddleware,
  type FastifyHook,
  fastifyHook,
  type MiddlewareOptions,
  type NodeRequestListener,
  nodeHandler,
  type OptionallyAuthenticatedRequest,
} from './middleware.js';
import { createVerifier } from './verify.js';

export interface Latchkey {
  /**
   * Verifies an access token locally against the tenant's published keys. Fast (no call per
   * token once the keys are cached), but a revoked session's token stays valid until `exp`.
   * Throws `LatchkeyTokenError` with a stable `code` when the token is not accepted.
   */
  verifyToken(token: string): Promise<LatchkeyClaims>;
  /**
   * Asks the Latchkey API whether the token is active (needs the secret key). Sees a revoked
   * session or a disabled user at once. An unacceptable token is `{ active: false }`, not an error.
   */
  introspect(token: string): Promise<IntrospectionResult>;
  /** Express middleware: sets `req.auth`, or answers 401 problem+json. */
  expressMiddleware(options?: MiddlewareOptions): ExpressMiddleware;
  /** Fastify `onRequest`/`preHandler` hook: sets `request.auth`, or answers 401 problem+json. */
  fastifyHook(options?: MiddlewareOptions): FastifyHook;
  /** Wraps a `node:http` request listener: sets `req.auth`, or answers 401 problem+json. */
  nodeHandler(
    handler: (req: AuthenticatedRequest, res: ServerResponse) => unknown,
    options?: MiddlewareOptions & { optional?: false | undefined },
  ): NodeRequestListener;
  nodeHandler(
    handler: (req: OptionallyAuthenticatedRequest, res: ServerResponse) => unknown,
    options: MiddlewareOptions & { optional: true },
  ): NodeRequestListener;
  nodeHandler(
    handler: (req: OptionallyAuthenticatedRequest, res: ServerResponse) => unknown,
    options?: MiddlewareOptions,
  ): NodeRequestListener;
}

/**
 * Creates the SDK. Options fall back to LATCHKEY_SECRET_KEY, LATCHKEY_TENANT_ID,
 * LATCHKEY_API_URL, LATCHKEY_AUTH_URL and LATCHKEY_AUDIENCE. Missing keys are reported when first needed.
 */
export function createLatchkey(options: LatchkeyOptions = {}): Latchkey {
  const config = resolveConfig(options, process.env);
  const verifyToken = createVerifier(config);
  const introspect = createIntrospector(config);
  const verifiers = {
    verifyToken,
    introspect,
    tenantId: config.tenantId,
    audience: config.audience,
    checkConfig(mode: 'local' | 'introspect') {
      if (mode === 'local') requireTenantId(config);
      else requireSecretKey(config);
    },
  };
  return {
    verifyToken,
    introspect,
    expressMiddleware: (middlewareOptions) =>
      expressMiddleware(createAuthenticator(verifiers, middlewareOptions)),
    fastifyHook: (middlewareOptions) =>
      fastifyHook(createAuthenticator(verifiers, middlewareOptions)),
    nodeHandler: (
      handler: (req: OptionallyAuthenticatedRequest, res: ServerResponse) => unknown,
      middlewareOptions?: MiddlewareOptions,
    ) => nodeHandler(createAuthenticator(verifiers, middlewareOptions), handler),
  } as Latchkey;
}
