export {
  issuerOf,
  type Session,
  Sessions,
  type SessionsDeps,
  type TokenSet,
} from './sessions.service.js';
export {
  type PublicJwk,
  SIGNING_ALG,
  type SigningKeyInfo,
  SigningKeys,
} from './signing-keys.service.js';
