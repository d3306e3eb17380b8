/** @latchkey/react: React components and hooks on top of @latchkey/js (docs/design.md §11). */

export {
  LatchkeyError,
  type LatchkeyErrorCode,
  type SignInMethod,
  type StorageKind,
  type User,
} from '@latchkey/js';
export {
  type ChildrenProps,
  SignedIn,
  SignedOut,
  SignIn,
  type SignInProps,
} from './components.js';
export {
  type AuthState,
  type LatchkeyContextValue,
  useAuth,
  useLatchkey,
  useUser,
} from './context.js';
export { LatchkeyProvider, type LatchkeyProviderProps } from './provider.js';
export { UserButton, type UserButtonProps } from './user-button.js';
