export {
  type ApiKey,
  type CreateKeyInput,
  createKey,
  type KeyContext,
  type KeyKind,
  listKeys,
  resolveKey,
  revokeKey,
  SCOPES,
  type Scope,
} from './keys.service.js';
