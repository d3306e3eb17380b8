/** @latchkey/js: the browser library (docs/design.md §10); `@latchkey/js/client` is headless.ts. See README.md. */
export { SERVER_STATE } from './client.js';
export { ERROR_CODES, LatchkeyError, type LatchkeyErrorCode } from './errors.js';
export { Latchkey } from './mount.js';
export type { StorageKind } from './storage.js';
export type {
  HeadlessClient,
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
