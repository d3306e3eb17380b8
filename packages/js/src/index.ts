/** @latchkey/js: the browser library (docs/design.md §10). One entry point; see README.md. */
export { Latchkey, SERVER_STATE } from './client.js';
export { ERROR_CODES, LatchkeyError, type LatchkeyErrorCode } from './errors.js';
export type { StorageKind } from './storage.js';
export type {
  LatchkeyClient,
  LatchkeyOptions,
  LatchkeyState,
  MountOptions,
  ProviderId,
  PublicConfig,
  SignedInSession,
  SignInMethod,
  SignInOptions,
  User,
} from './types.js';
