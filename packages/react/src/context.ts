import type {
  LatchkeyClient,
  SignedInSession,
  SignInMethod,
  SignInOptions,
  User,
} from '@latchkey/js';
import { createContext, useContext } from 'react';

/** What `useLatchkey()` returns: the client's state and its methods, for one publishable key. */
export interface LatchkeyContextValue {
  /** The `@latchkey/js` client; null while rendering on a server. */
  client: LatchkeyClient | null;
  /** False until the browser has read storage and finished a redirect callback. */
  isLoaded: boolean;
  isSignedIn: boolean;
  /** The decoded access token payload with the profile's fields once fetched (`name`, `picture`…), or null. */
  user: User | null;
  /** Why the redirect callback failed (the user cancelled, a stale link…), else null. */
  error: Error | null;
  /** Starts a sign-in: the browser leaves for the provider (or the e-mail page) and comes back. */
  signInWith(method: SignInMethod, options: SignInOptions): Promise<void>;
  /** Finishes a sign-in; the provider calls it on mount when the URL holds an answer. */
  handleRedirectCallback(url?: string): Promise<SignedInSession | null>;
  /** A fresh access token, or null when signed out. */
  getToken(): Promise<string | null>;
  /** Ends the session on the server and in every tab. */
  signOut(): Promise<void>;
  /** Where `UserButton` goes after signing out, unless given its own. */
  afterSignOutUrl: string | undefined;
}

export const LatchkeyContext = createContext<LatchkeyContextValue | null>(null);

/** The context, or an error that says how to provide it. */
export function useContextOf(caller: string): LatchkeyContextValue {
  const value = useContext(LatchkeyContext);
  if (!value) {
    throw new Error(
      `${caller} must be used inside <LatchkeyProvider>: wrap your app in <LatchkeyProvider publishableKey="pk_…">`,
    );
  }
  return value;
}

/** The whole context: client, state and methods. */
export function useLatchkey(): LatchkeyContextValue {
  return useContextOf('useLatchkey()');
}

/**
 * The signed-in user: the access token's claims and, a moment after sign-in or load, the
 * profile (`name`, `picture`, `emailVerified`, `createdAt`, `publicMetadata`); or null.
 */
export function useUser(): User | null {
  return useContextOf('useUser()').user;
}

export interface AuthState {
  isLoaded: boolean;
  isSignedIn: boolean;
  getToken(): Promise<string | null>;
  signOut(): Promise<void>;
}

/** What most components need: whether someone is signed in, a token for API calls, sign-out. */
export function useAuth(): AuthState {
  const { isLoaded, isSignedIn, getToken, signOut } = useContextOf('useAuth()');
  return { isLoaded, isSignedIn, getToken, signOut };
}
