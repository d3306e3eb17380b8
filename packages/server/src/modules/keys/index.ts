export {
  type ApiKey,
  type CreateKeyInput,
  createKey,
  type KeyCacheBus,
  type KeyContext,
  KeyResolver,
  type KeyKind,
  listKeys,
  resolveKey,
  revokeKey,
  SCOPES,
  type Scope,
} from './keys.service.js';
