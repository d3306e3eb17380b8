export type { LatchkeyClaims } from './claims.js';
export type { LatchkeyOptions } from './config.js';
export {
  LatchkeyApiError,
  type LatchkeyApiErrorDetails,
  type LatchkeyConfigErrorCode,
  LatchkeyError,
  type LatchkeyErrorDetails,
  LatchkeyTokenError,
  type LatchkeyTokenErrorCode,
} from './errors.js';
export type { IntrospectionResult } from './introspect.js';
export { createLatchkey, type Latchkey } from './latchkey.js';
export type {
  AuthenticatedRequest,
  ExpressLikeRequest,
  ExpressMiddleware,
  FastifyHook,
  FastifyLikeReply,
  FastifyLikeRequest,
  MiddlewareOptions,
  NodeLikeResponse,
  NodeRequestListener,
  OptionallyAuthenticatedRequest,
  RequestHeaders,
} from './middleware.js';
export {
  type ProtectedResourceDocument,
  type ProtectedResourceMetadata,
  type ProtectedResourceOptions,
  protectedResourceMetadata,
} from './resource-metadata.js';
export type { LatchkeySessionConfig, Session } from './session/index.js';
export {
  type LatchkeySessionMiddleware,
  type LatchkeySessionVariables,
  latchkeySession,
  type SessionExpressMiddleware,
  type SessionExpressRequest,
  type SessionFastifyHook,
  type SessionFastifyReply,
  type SessionFastifyRequest,
  type SessionHonoContext,
  type SessionHonoMiddleware,
  type SessionNodeResponse,
} from './session-middleware.js';
