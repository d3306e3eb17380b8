export { publishableKeyRefused, secretKeyExposed, secretKeyRefused } from './guidance.js';
export {
  type ApiKey,
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
} from './keys.service.js';
