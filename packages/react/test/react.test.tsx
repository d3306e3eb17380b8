/**
 * Every export of @latchkey/react in React 17, 18 and 19 (this file runs once per version; see
 * projects.ts), in happy-dom against the real server: loading, sign-in through the redirect
 * callback in strict mode, server rendering and hydration, shared clients, the user menu.
 */
import { Latchkey } from '@latchkey/js';
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { type ReactElement, type ReactNode, StrictMode, version } from 'react';
import { renderToString } from 'react-dom/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type LatchkeyContextValue,
  LatchkeyProvider,
  SignedIn,
  SignedOut,
  SignIn,
  UserButton,
  useAuth,
  useLatchkey,
  useUser,
} from '../src/index.js';
import { PAGE_ORIGIN } from './shared.js';
import {
  authUrl,
  freshKey,
  freshSession,
  onServer,
  signInOnHostedPage,
  storeSession,
} from './support.js';

const major = Number(version.split('.')[0]);

/** Every render's view of the context, in order. */
function recorder() {
  const seen: { isLoaded: boolean; isSignedIn: boolean }[] = [];
  let latest: LatchkeyContextValue | undefined;
  function Probe() {
    const context = useLatchkey();
    const auth = useAuth();
    const user = useUser();
    expect(auth.isSignedIn).toBe(context.isSignedIn);
    expect(user).toBe(context.user);
    latest = context;
    seen.push({ isLoaded: auth.isLoaded, isSignedIn: auth.isSignedIn });
    return <p data-testid="probe">{`loaded:${auth.isLoaded} user:${user?.email ?? 'none'}`}</p>;
  }
  return { Probe, seen, context: () => latest as LatchkeyContextValue };
}

/** Children of SignedOut that note when they render at all. */
function tracker() {
  const rendered: string[] = [];
  function Mark({ name }: { name: string }) {
    rendered.push(name);
    return <p>{name}</p>;
  }
  return { Mark, rendered };
}

function Provider({
  pk,
  children,
  ...rest
}: {
  pk: string;
  children: ReactNode;
  afterSignOutUrl?: string;
  afterSignInUrl?: string;
  onRedirectCallback?: (url: string, session: { user: { email: string } }) => void;
}) {
  return (
    <LatchkeyProvider publishableKey={pk} authUrl={authUrl} {...rest}>
      {children}
    </LatchkeyProvider>
  );
}

/** The buttons that SignIn (through the client's `mount`) drew in its shadow root. */
const signInButtons = (container: HTMLElement) => [
  ...(container.querySelector('[data-latchkey]')?.shadowRoot?.querySelectorAll('button') ?? []),
];

afterEach(() => {
  cleanup();
  localStorage.clear();
  sessionStorage.clear();
  history.replaceState(null, '', '/');
  vi.restoreAllMocks();
});

describe(`@latchkey/react on React ${version}`, () => {
  it('a hook or component outside the provider says to wrap the app in LatchkeyProvider', () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const Hook = ({ use }: { use: () => unknown }) => {
      use();
      return null;
    };
    const cases: [ReactNode, string][] = [
      [<Hook key="a" use={useLatchkey} />, 'useLatchkey()'],
      [<Hook key="b" use={useUser} />, 'useUser()'],
      [<Hook key="c" use={useAuth} />, 'useAuth()'],
      [<SignedIn key="d">x</SignedIn>, '<SignedIn>'],
      [<SignedOut key="e">x</SignedOut>, '<SignedOut>'],
      [<SignIn key="f" redirectUrl="/callback" />, '<SignIn>'],
      [<UserButton key="g" />, '<UserButton>'],
    ];
    for (const [element, name] of cases) {
      expect(() => render(element as ReactElement)).toThrow(
        `${name} must be used inside <LatchkeyProvider>: wrap your app in <LatchkeyProvider publishableKey="pk_…">`,
      );
    }
  });

  it('signed out: SignedOut shows, and SignIn draws the tenant buttons from the server', async () => {
    const { Probe, seen, context } = recorder();
    const { container } = render(
      <Provider pk={freshKey()}>
        <Probe />
        <SignedIn>in</SignedIn>
        <SignedOut>
          <p>out</p>
          <SignIn redirectUrl={`${PAGE_ORIGIN}/callback`} />
        </SignedOut>
      </Provider>,
    );
    expect(screen.getByText('out')).toBeTruthy();
    expect(screen.queryByText('in')).toBeNull();
    expect(seen.at(-1)).toEqual({ isLoaded: true, isSignedIn: false });
    expect(context().user).toBeNull();
    expect(context().error).toBeNull();
    expect(await context().getToken()).toBeNull();
    await waitFor(() =>
      expect(signInButtons(container).map((b) => b.textContent)).toEqual(['Continue with e-mail']),
    );
  });

  it('signed in from storage: never a render that shows the signed-out view', async () => {
    const pk = freshKey();
    const session = freshSession();
    storeSession(pk, session);
    const { Probe, seen, context } = recorder();
    const { Mark, rendered } = tracker();
    render(
      <Provider pk={pk}>
        <Probe />
        <SignedIn>
          <Mark name="in" />
        </SignedIn>
        <SignedOut>
          <Mark name="out" />
        </SignedOut>
      </Provider>,
    );
    expect(screen.getByTestId('probe').textContent).toBe(`loaded:true user:${session.email}`);
    expect(rendered).not.toContain('out');
    expect(rendered).toContain('in');
    expect(seen.filter((s) => s.isLoaded && !s.isSignedIn)).toEqual([]);
    expect(await context().getToken()).toBe(session.accessToken);
    expect(context().user).toMatchObject({ email: session.email, sub: expect.any(String) });
  });

  it('strict mode: a click on SignIn, the hosted page, and the callback redeemed once', async () => {
    const pk = freshKey();
    const session = freshSession();
    const left: string[] = [];
    vi.spyOn(location, 'assign').mockImplementation((url) => {
      left.push(String(url));
    });
    const first = render(
      <StrictMode>
        <Provider pk={pk}>
          <SignIn redirectUrl={`${PAGE_ORIGIN}/callback`} />
        </Provider>
      </StrictMode>,
    );
    await waitFor(() => expect(signInButtons(first.container)).toHaveLength(1));
    signInButtons(first.container)[0]?.click();
    await waitFor(() => expect(left).toHaveLength(1));
    const startUrl = new URL(left[0] as string);
    expect(startUrl.origin + startUrl.pathname).toBe(`${authUrl}/sign-in`);
    expect(startUrl.searchParams.get('code_challenge_method')).toBe('S256');
    first.unmount();

    const back = new URL(await signInOnHostedPage(startUrl.href, session.email));
    expect(back.origin + back.pathname).toBe(`${PAGE_ORIGIN}/callback`);
    history.replaceState(null, '', back.pathname + back.hash);

    const redeemed: string[] = [];
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
      if (String(input).endsWith('/v1/client/token')) redeemed.push(String(init?.body));
      return realFetch(input, init);
    });
    const { Probe, seen } = recorder();
    const { Mark, rendered } = tracker();
    render(
      <StrictMode>
        <Provider pk={pk}>
          <Probe />
          <SignedIn>
            <Mark name="in" />
          </SignedIn>
          <SignedOut>
            <Mark name="out" />
          </SignedOut>
        </Provider>
      </StrictMode>,
    );
    expect(seen[0]).toEqual({ isLoaded: false, isSignedIn: false });
    await screen.findByText('in');
    expect(screen.getByTestId('probe').textContent).toBe(`loaded:true user:${session.email}`);
    expect(redeemed).toHaveLength(1);
    expect(redeemed[0]).toContain('"grant_type":"authorization_code"');
    expect(rendered).not.toContain('out');
    expect(location.hash).toBe('');
  });

  it('after the callback: back where the sign-in started, or afterSignInUrl through onRedirectCallback', async () => {
    /** signInWith on `start`, the hosted page, and back on the callback URL (not yet redeemed). */
    async function comeBack(pk: string, start: string): Promise<string> {
      history.replaceState(null, '', start);
      const left: string[] = [];
      vi.spyOn(location, 'assign').mockImplementation((url) => {
        left.push(String(url));
      });
      await Latchkey({ publishableKey: pk, authUrl }).signInWith('email', {
        redirectUrl: `${PAGE_ORIGIN}/callback`,
      });
      const { email } = freshSession();
      const back = new URL(await signInOnHostedPage(left[0] as string, email));
      history.replaceState(null, '', back.pathname + back.hash);
      return email;
    }

    // By default: the start page, by history.replaceState and a popstate for the router. An
    // afterSignInUrl of another origin is ignored: never a way off the site.
    const pops: string[] = [];
    const onPop = () => pops.push(location.pathname + location.search);
    addEventListener('popstate', onPop);
    const first = freshKey();
    await comeBack(first, '/orders?id=7');
    const length = history.length;
    const one = render(
      <StrictMode>
        <Provider pk={first} afterSignInUrl="https://evil.example/steal">
          <SignedIn>
            <p>in</p>
          </SignedIn>
        </Provider>
      </StrictMode>,
    );
    await screen.findByText('in');
    expect(location.pathname + location.search + location.hash).toBe('/orders?id=7');
    expect(pops).toEqual(['/orders?id=7']);
    expect(history.length).toBe(length);
    removeEventListener('popstate', onPop);
    one.unmount();

    // afterSignInUrl, handed to onRedirectCallback, which navigates instead.
    const second = freshKey();
    const email = await comeBack(second, '/orders?id=8');
    const calls: [string, string][] = [];
    const two = render(
      <Provider
        pk={second}
        afterSignInUrl="/welcome?tour=1"
        onRedirectCallback={(url, session) => calls.push([url, session.user.email])}
      >
        <SignedIn>
          <p>in</p>
        </SignedIn>
      </Provider>,
    );
    await screen.findByText('in');
    expect(calls).toEqual([[`${PAGE_ORIGIN}/welcome?tour=1`, email]]);
    expect(location.pathname + location.hash).toBe('/callback');
    two.unmount();

    // A malformed afterSignInUrl is ignored, and a navigation that throws still ends the
    // callback: the app is signed in, not left waiting.
    const third = freshKey();
    await comeBack(third, '/orders?id=9');
    const tried: string[] = [];
    const reported = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { Probe, context } = recorder();
    render(
      <Provider
        pk={third}
        afterSignInUrl="http://["
        onRedirectCallback={(url) => {
          tried.push(url);
          throw new Error('the router is not ready');
        }}
      >
        <Probe />
        <SignedIn>
          <p>in</p>
        </SignedIn>
      </Provider>,
    );
    await screen.findByText('in');
    expect(tried).toEqual([`${PAGE_ORIGIN}/orders?id=9`]);
    expect(context().isLoaded).toBe(true);
    expect(String(reported.mock.calls[0]?.[1])).toContain('the router is not ready');
    reported.mockRestore();
  });

  it('a failed callback: loaded, signed out, and SignIn says why', async () => {
    history.replaceState(null, '', '/callback#error=access_denied&state=nope');
    const { Probe, context } = recorder();
    render(
      <Provider pk={freshKey()}>
        <Probe />
        <SignedOut>
          <SignIn redirectUrl={`${PAGE_ORIGIN}/callback`} />
        </SignedOut>
      </Provider>,
    );
    expect((await screen.findByRole('alert')).textContent).toMatch(
      /did not complete.*start it again/,
    );
    expect(context().error?.message).toMatch(/access_denied/);
    expect(context().isLoaded).toBe(true);
    expect(location.hash).toBe('');
  });

  it('renders on a server without window, and hydrates without a mismatch', async () => {
    const pk = freshKey();
    const session = freshSession();
    const { Probe } = recorder();
    const app = (
      <Provider pk={pk}>
        <Probe />
        <SignedIn>in</SignedIn>
        <SignedOut>out</SignedOut>
        <SignIn redirectUrl={`${PAGE_ORIGIN}/callback`} />
        <UserButton />
      </Provider>
    );
    const errors = vi.spyOn(console, 'error');
    const html = onServer(() => renderToString(app));
    expect(html).toBe('<p data-testid="probe">loaded:false user:none</p><div></div>');

    storeSession(pk, session);
    const container = document.createElement('div');
    container.innerHTML = html;
    document.body.appendChild(container);
    const recoverable: unknown[] = [];
    await act(async () => {
      if (major >= 18) {
        // Not in React 17: a name Vite leaves alone, resolved by the version hook at run time.
        const entry = 'react-dom/client';
        const { hydrateRoot } = (await import(
          /* @vite-ignore */ entry
        )) as typeof import('react-dom/client');
        hydrateRoot(container, app, { onRecoverableError: (error) => recoverable.push(error) });
      } else {
        const { hydrate } = (await import('react-dom')) as unknown as {
          hydrate: (element: ReactNode, container: Element) => void;
        };
        hydrate(app, container);
      }
    });
    await waitFor(() => expect(container.textContent).toContain('in'));
    expect(container.querySelector('[data-testid=probe]')?.textContent).toBe(
      `loaded:true user:${session.email}`,
    );
    expect(recoverable).toEqual([]);
    expect(errors).not.toHaveBeenCalled();
    container.remove();
  });

  it('two providers, and a remount, share one client per publishable key', async () => {
    const pk = freshKey();
    storeSession(pk, freshSession());
    const a = recorder();
    const b = recorder();
    const view = render(
      <>
        <Provider pk={pk}>
          <a.Probe />
        </Provider>
        <Provider pk={pk}>
          <b.Probe />
          <SignedOut>b is out</SignedOut>
        </Provider>
      </>,
    );
    const client = a.context().client;
    expect(client).not.toBeNull();
    expect(b.context().client).toBe(client);
    view.unmount();
    const again = recorder();
    render(
      <Provider pk={pk}>
        <again.Probe />
        <SignedOut>out again</SignedOut>
      </Provider>,
    );
    expect(again.context().client).toBe(client);
    const other = recorder();
    render(
      <Provider pk={freshKey()}>
        <other.Probe />
      </Provider>,
    );
    expect(other.context().client).not.toBe(client);
    // A sign-out through one reaches every provider of the key.
    await act(() => again.context().signOut());
    expect(screen.getByText('out again')).toBeTruthy();
  });

  it('UserButton: initials, a menu that opens and closes by keyboard, sign-out and afterSignOutUrl', async () => {
    const pk = freshKey();
    const session = freshSession();
    storeSession(pk, session);
    const left: string[] = [];
    vi.spyOn(location, 'assign').mockImplementation((url) => {
      left.push(String(url));
    });
    const { Probe, context } = recorder();
    render(
      <Provider pk={pk} afterSignOutUrl="/goodbye">
        <Probe />
        <button type="button">elsewhere</button>
        <UserButton />
      </Provider>,
    );
    const button = screen.getByRole('button', { name: /account: / });
    expect(button.getAttribute('aria-label')).toBe(
      `${button.textContent}, account: ${session.email}`,
    );
    expect(button.getAttribute('aria-haspopup')).toBe('menu');
    expect(button.getAttribute('aria-expanded')).toBe('false');
    // Initials of the e-mail's local part (react-N-…): no picture claim in these tokens.
    expect(button.textContent).toMatch(/^R[A-Z]?$/);

    button.focus();
    fireEvent.keyDown(button, { key: 'ArrowDown' });
    const item = screen.getByRole('menuitem', { name: 'Sign out' });
    expect(button.getAttribute('aria-expanded')).toBe('true');
    expect(
      document.getElementById(button.getAttribute('aria-controls') as string)?.contains(item),
    ).toBe(true);
    expect(document.activeElement).toBe(item);
    expect(screen.getByText(session.email)).toBeTruthy();
    fireEvent.keyDown(item, { key: 'Escape' });
    expect(screen.queryByRole('menu')).toBeNull();
    expect(document.activeElement).toBe(button);

    fireEvent.click(button);
    expect(screen.getByRole('menu')).toBeTruthy();
    fireEvent.mouseDown(screen.getByText('elsewhere'));
    expect(screen.queryByRole('menu')).toBeNull();

    fireEvent.click(button);
    fireEvent.click(screen.getByRole('menuitem', { name: 'Sign out' }));
    await waitFor(() => expect(left).toEqual(['/goodbye']));
    expect(context().isSignedIn).toBe(false);
    expect(screen.queryByRole('button', { name: /account: / })).toBeNull();
    expect(await context().getToken()).toBeNull();
  });

  it("UserButton's own afterSignOutUrl wins over the provider's", async () => {
    const pk = freshKey();
    storeSession(pk, freshSession());
    const left: string[] = [];
    vi.spyOn(location, 'assign').mockImplementation((url) => {
      left.push(String(url));
    });
    render(
      <Provider pk={pk} afterSignOutUrl="/provider">
        <UserButton afterSignOutUrl="/button" />
      </Provider>,
    );
    fireEvent.click(screen.getByRole('button', { name: /account: / }));
    fireEvent.click(screen.getByRole('menuitem', { name: 'Sign out' }));
    await waitFor(() => expect(left).toEqual(['/button']));
  });
});
