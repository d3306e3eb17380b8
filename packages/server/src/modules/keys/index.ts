export { publishableKeyRefused, secretKeyExposed, secretKeyRefused } from './guidance.js';
export {
  type ApiKey,
  type CachedKey,
  type CreateKeyInput,
  createKey,
  hashKey,
  type KeyCacheBus,
  type KeyContext,
  type KeyKind,
  KeyResolver,
  listKeys,
  randomBase62,
  revokeKey,
  SCOPES,
  type Scope,
  scopeBit,
} from './keys.service.js';
