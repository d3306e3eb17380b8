import type { MountOptions } from '@latchkey/js';
import {
  Fragment,
  createElement as h,
  type ReactElement,
  type ReactNode,
  useEffect,
  useRef,
} from 'react';
import { useContextOf } from './context.js';

export interface ChildrenProps {
  children?: ReactNode;
}

/** Renders its children once loaded and signed in; nothing before (no flash). */
export function SignedIn({ children }: ChildrenProps): ReactElement | null {
  const { isLoaded, isSignedIn } = useContextOf('<SignedIn>');
  return isLoaded && isSignedIn ? h(Fragment, null, children) : null;
}

/** Renders its children once loaded and signed out; nothing before (no flash). */
export function SignedOut({ children }: ChildrenProps): ReactElement | null {
  const { isLoaded, isSignedIn } = useContextOf('<SignedOut>');
  return isLoaded && !isSignedIn ? h(Fragment, null, children) : null;
}

export type SignInProps = MountOptions;

/**
 * The tenant's sign-in buttons: the very ones `mount` renders (in their own shadow root), and
 * above them why the last sign-in failed, if it did.
 */
export function SignIn({ redirectUrl, nonce }: SignInProps): ReactElement {
  const { client, error } = useContextOf('<SignIn>');
  const target = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (client && target.current) return client.mount(target.current, { redirectUrl, nonce });
  }, [client, redirectUrl, nonce]);
  return h(
    Fragment,
    null,
    error && h('p', { role: 'alert', style: { color: '#cf222e' } }, error.message),
    h('div', { ref: target }),
  );
}
