export { type ParsedToken, parseAccessToken, verifyAccessToken } from './access-token-verify.js';
export {
  type AccountDeps,
  type SignInInput,
  signIn,
  signOutEverywhere,
  updateUser,
  verifySignIn,
} from './account-workflows.service.js';
export {
  bindBrowserSession,
  browserSessionBinding,
  browserSessionUser,
  endBrowserSession,
  endUserBrowserSessions,
  startBrowserSession,
} from './browser-sessions.js';
export { PostgresRefreshBatch, type RefreshBatch, SqliteRefreshBatch } from './refresh-batch.js';
export {
  type AuthMethod,
  audienceOf,
  type IssuedSession,
  issuerOf,
  type OpenedSession,
  type TokenSet,
} from './session-issuing.js';
export { openOAuthSession, revokeSessionsIn, type Session } from './session-records.js';
export type { SessionUser } from './session-state.js';
export { Sessions, type SessionsDeps } from './sessions.service.js';
export {
  type PublicJwk,
  SIGNING_ALG,
  type SigningKeyInfo,
  SigningKeys,
  sealedSigningKeys,
  type VerificationKey,
} from './signing-keys.service.js';
