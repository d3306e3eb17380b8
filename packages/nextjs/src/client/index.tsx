'use client';
/**
 * @latchkey/nextjs for client components (docs/design.md §15), the names of @latchkey/react:
 * the provider is fed by the server's session from the root layout, so the first HTML
 * already shows the signed-in or signed-out content (no flash, nothing read in the browser).
 */
import {
  createContext,
  type ReactElement,
  type ReactNode,
  useCallback,
  useContext,
  useMemo,
} from 'react';

/** The signed-in user as the server passes it (`currentUser()`); no token ever reaches the browser. */
export interface LatchkeyUser {
  id: string;
  email: string;
  sessionId: string | null;
  name?: string;
}

export interface LatchkeyProviderProps {
  /** `await currentUser()` in the root layout: the user, or null when signed out. */
  user: LatchkeyUser | null;
  /** Where the route handler is mounted. Default `/api/latchkey`. */
  basePath?: string;
  children?: ReactNode;
}

interface ContextValue {
  user: LatchkeyUser | null;
  basePath: string;
}

const LatchkeyContext = createContext<ContextValue | null>(null);

function useContextOf(caller: string): ContextValue {
  const value = useContext(LatchkeyContext);
  if (!value) {
    throw new Error(
      `${caller} must be used inside <LatchkeyProvider>: wrap your root layout's children in <LatchkeyProvider user={await currentUser()}>`,
    );
  }
  return value;
}

export function LatchkeyProvider({
  user,
  basePath = '/api/latchkey',
  children,
}: LatchkeyProviderProps): ReactElement {
  const value = useMemo(() => ({ user, basePath }), [user, basePath]);
  return <LatchkeyContext.Provider value={value}>{children}</LatchkeyContext.Provider>;
}

/** The signed-in user, or null. */
export function useUser(): LatchkeyUser | null {
  return useContextOf('useUser()').user;
}

export interface AuthState {
  /** Always true: the server rendered the state. */
  isLoaded: true;
  isSignedIn: boolean;
  userId: string | null;
  sessionId: string | null;
  /** Signs in, coming back to `returnTo` (default: the current page). */
  signIn(returnTo?: string): void;
  /** Ends the session here and in Latchkey. */
  signOut(): void;
}

function submit(action: string): void {
  const form = document.createElement('form');
  form.method = 'post';
  form.action = action;
  document.body.append(form);
  form.submit();
}

export function useAuth(): AuthState {
  const { user, basePath } = useContextOf('useAuth()');
  const signIn = useCallback(
    (returnTo?: string) => {
      const to = returnTo ?? location.pathname + location.search;
      location.assign(`${basePath}/sign-in?returnTo=${encodeURIComponent(to)}`);
    },
    [basePath],
  );
  const signOut = useCallback(() => submit(`${basePath}/sign-out`), [basePath]);
  return {
    isLoaded: true,
    isSignedIn: user !== null,
    userId: user?.id ?? null,
    sessionId: user?.sessionId ?? null,
    signIn,
    signOut,
  };
}

export interface ChildrenProps {
  children?: ReactNode;
}

/** Its children when signed in, from the first HTML on. */
export function SignedIn({ children }: ChildrenProps): ReactNode {
  return useContextOf('<SignedIn>').user ? children : null;
}

/** Its children when signed out, from the first HTML on. */
export function SignedOut({ children }: ChildrenProps): ReactNode {
  return useContextOf('<SignedOut>').user ? null : children;
}

/**
 * The user's e-mail and a "Sign out" button: a plain form posted to the route handler, so it
 * works before the page's scripts have loaded.
 */
export function UserButton(): ReactElement | null {
  const { user, basePath } = useContextOf('<UserButton>');
  if (!user) return null;
  return (
    <form
      method="post"
      action={`${basePath}/sign-out`}
      style={{ display: 'inline-flex', alignItems: 'center', gap: 8, margin: 0 }}
    >
      <span>{user.email}</span>
      <button type="submit">Sign out</button>
    </form>
  );
}
