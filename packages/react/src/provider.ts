import {
  Latchkey,
  type LatchkeyClient,
  type LatchkeyOptions,
  type LatchkeyState,
  SERVER_STATE,
  type SignedInSession,
} from '@latchkey/js';
import * as React from 'react';
import { createElement as h, type ReactNode, useEffect, useMemo, useState } from 'react';
import { LatchkeyContext, type LatchkeyContextValue } from './context.js';

export interface LatchkeyProviderProps extends LatchkeyOptions {
  /** Where `UserButton` sends the browser after signing out (current page when unset). */
  afterSignOutUrl?: string;
  /**
   * Where the browser goes once the redirect callback has signed the user in: a URL of this
   * origin (another origin is ignored). By default the page where the sign-in started.
   */
  afterSignInUrl?: string;
  /**
   * Goes to `url` after a sign-in instead of the default, e.g. with your router's
   * `navigate(url, { replace: true })`. The default replaces the callback's history entry
   * (`history.replaceState`) and fires `popstate`, which routers listening to the address
   * (React Router, TanStack Router, wouter…) follow without a reload.
   */
  onRedirectCallback?: (url: string, session: SignedInSession) => void;
  children?: ReactNode;
}

type Subscribe = (onChange: () => void) => () => void;
const useSyncExternalStore = (
  React as {
    useSyncExternalStore?: <T>(subscribe: Subscribe, get: () => T, getServer: () => T) => T;
  }
).useSyncExternalStore;

const serverState = () => SERVER_STATE;
const noSubscription: Subscribe = () => () => {};

/** The client's state; on a server and while hydrating SERVER_STATE (isLoaded false), so the markup matches. */
function useStoreState(client: LatchkeyClient | null): LatchkeyState {
  return (useSyncExternalStore as NonNullable<typeof useSyncExternalStore>)(
    client ? client.addListener : noSubscription,
    client ? client.getState : serverState,
    serverState,
  );
}

/** React 17 has no useSyncExternalStore: a layout effect reads the client before the first paint. */
function useEffectState(client: LatchkeyClient | null): LatchkeyState {
  const [state, setState] = useState(SERVER_STATE);
  // Chosen at render time, not import time: a module loaded next to a DOM may render on a server.
  const useBeforePaint = client ? React.useLayoutEffect : useEffect;
  useBeforePaint(() => {
    if (!client) return;
    const update = () => setState(client.getState());
    update();
    return client.addListener(update);
  }, [client]);
  return state;
}

const useClientState = useSyncExternalStore ? useStoreState : useEffectState;

/** A sign-in answer in the fragment (docs/design.md §6.4): isLoaded waits until it is handled. */
const ANSWER = /[#&](code|access_token|error)=/;

const onServer = () =>
  Promise.reject(new Error('Latchkey runs in the browser: call this from an effect or a handler'));

/** The default of `onRedirectCallback`: a client-side navigation, no reload. */
function replaceLocation(url: string): void {
  history.replaceState(history.state, '', url);
  dispatchEvent(new PopStateEvent('popstate', { state: history.state }));
}

/** `url` resolved against the page, when it is a URL of this origin; else undefined. */
function sameOrigin(url: string | undefined): string | undefined {
  try {
    const resolved = url ? new URL(url, location.href) : undefined;
    return resolved && resolved.origin === location.origin ? resolved.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Provides the client of `publishableKey` to the hooks and components below. Every provider of
 * one key shares one client (@latchkey/js keeps one per key), so two providers, or a remount,
 * never race each other's refreshes. On a server no client is made: nothing touches `window`.
 */
export function LatchkeyProvider(props: LatchkeyProviderProps) {
  const { publishableKey, authUrl, storage, afterSignOutUrl } = props;
  // Read when the callback finishes, not when the effect starts: the latest props win.
  const latest = React.useRef(props);
  latest.current = props;
  const client = useMemo(
    () => (typeof window === 'undefined' ? null : Latchkey({ publishableKey, authUrl, storage })),
    [publishableKey, authUrl, storage],
  );
  const state = useClientState(client);
  const [callback, setCallback] = useState(() => ({
    pending: !!client && ANSWER.test(location.hash),
    error: null as Error | null,
  }));

  useEffect(() => {
    if (!client || !callback.pending) return;
    let live = true;
    // Strict mode runs this twice; the second call gets the first call's promise, so the
    // one-time code is redeemed once.
    client.handleRedirectCallback().then(
      (session) => {
        if (!live) return;
        try {
          if (session) {
            const { afterSignInUrl, onRedirectCallback } = latest.current;
            const here = location.href;
            // A sign-in started on the callback page itself (after a failed one) goes home.
            const url =
              sameOrigin(afterSignInUrl) ||
              (session.returnTo === here ? `${location.origin}/` : session.returnTo);
            if (url !== here) (onRedirectCallback || replaceLocation)(url, session);
          }
        } catch (error) {
          // The app's own navigation failed: say so, but the sign-in stands.
          console.error('Latchkey: going back after sign-in failed', error);
        }
        setCallback({ pending: false, error: null });
      },
      (error: Error) => live && setCallback({ pending: false, error }),
    );
    return () => {
      live = false;
    };
  }, [client, callback.pending]);

  // A session kept from an earlier visit: a fresh token brings the profile (useUser()).
  const signedIn = state.isSignedIn;
  useEffect(() => {
    if (client && signedIn) client.getToken().catch(() => {});
  }, [client, signedIn]);

  const value = useMemo<LatchkeyContextValue>(
    () => ({
      client,
      isLoaded: state.isLoaded && !callback.pending,
      isSignedIn: state.isSignedIn,
      user: state.user,
      error: callback.error,
      signInWith: client ? client.signInWith : onServer,
      handleRedirectCallback: client ? client.handleRedirectCallback : () => Promise.resolve(null),
      getToken: client ? client.getToken : () => Promise.resolve(null),
      signOut: client ? client.signOut : onServer,
      afterSignOutUrl,
    }),
    [client, state, callback, afterSignOutUrl],
  );
  return h(LatchkeyContext.Provider, { value }, props.children);
}
