export { type ParsedToken, parseAccessToken, verifyAccessToken } from './access-token-verify.js';
export {
  type AccountDeps,
  type SignInInput,
  signIn,
  signOutEverywhere,
  updateUser,
} from './account-workflows.service.js';
export {
  bindBrowserSession,
  browserSessionBinding,
  browserSessionUser,
  endBrowserSession,
  endUserBrowserSessions,
  startBrowserSession,
} from './browser-sessions.js';
export {
  audienceOf,
  type IssuedSession,
  issuerOf,
  type OpenedSession,
  type Session,
  Sessions,
  type SessionsDeps,
  type SessionUser,
  type TokenSet,
} from './sessions.service.js';
export { sealedSigningKeys } from './signing-keys.repository.js';
export {
  type PublicJwk,
  SIGNING_ALG,
  type SigningKeyInfo,
  SigningKeys,
  type VerificationKey,
} from './signing-keys.service.js';
