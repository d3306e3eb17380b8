/**
 * `@latchkey/js/client`: the client without the sign-in buttons and the provider marks, for
 * code that never shows them. The same client per key as the main entry point's (they share
 * one copy of it in the build), so an app may import both.
 */
export { Latchkey, SERVER_STATE } from './client.js';
export { ERROR_CODES, LatchkeyError, type LatchkeyErrorCode } from './errors.js';
export type { StorageKind } from './storage.js';
export type {
  HeadlessClient,
  LatchkeyOptions,
  LatchkeyState,
  Profile,
  ProviderId,
  PublicConfig,
  SignedInSession,
  SignInMethod,
  SignInOptions,
  User,
} from './types.js';
