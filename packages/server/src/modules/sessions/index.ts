export {
  audienceOf,
  issuerOf,
  SESSION_LIFETIME_MS,
  type Session,
  Sessions,
  type SessionsDeps,
  type TokenSet,
  USER_TOKEN_SCOPE,
} from './sessions.service.js';
export {
  type PublicJwk,
  SIGNING_ALG,
  type SigningKeyInfo,
  SigningKeys,
} from './signing-keys.service.js';
