/**
 * The client components as the server renders them (the first HTML): signed-in content from
 * the user the root layout passes, nothing signed-out, no flash, and a hook outside the
 * provider saying how to provide it.
 */
import { createElement as h, type ReactNode } from 'react';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import {
  LatchkeyProvider,
  type LatchkeyUser,
  SignedIn,
  SignedOut,
  UserButton,
  useAuth,
  useUser,
} from '../src/client/index.js';

const ADA: LatchkeyUser = { id: 'u1', email: 'ada@example.com', sessionId: 's1' };

function Probe(): ReactNode {
  const user = useUser();
  const { isLoaded, isSignedIn, userId, sessionId } = useAuth();
  return h(
    'output',
    null,
    JSON.stringify({ email: user?.email, isLoaded, isSignedIn, userId, sessionId }),
  );
}

const page = (user: LatchkeyUser | null) =>
  renderToString(
    h(
      LatchkeyProvider,
      { user },
      h(SignedIn, null, h('p', null, 'in')),
      h(SignedOut, null, h('p', null, 'out')),
      h(UserButton),
      h(Probe),
    ),
  );

describe('@latchkey/nextjs/client rendered on the server', () => {
  it('signed in: the signed-in content, the e-mail and a sign-out form, in the first HTML', () => {
    const html = page(ADA);
    expect(html).toContain('<p>in</p>');
    expect(html).not.toContain('<p>out</p>');
    expect(html).toMatch(/<form[^>]*action="\/api\/latchkey\/sign-out"[^>]*method="post"/);
    expect(html).toContain('ada@example.com</span><button type="submit">Sign out</button>');
    expect(html).toContain(
      JSON.stringify({
        email: ADA.email,
        isLoaded: true,
        isSignedIn: true,
        userId: 'u1',
        sessionId: 's1',
      }).replaceAll('"', '&quot;'),
    );
  });

  it('signed out: the signed-out content only, no user button', () => {
    const html = page(null);
    expect(html).toContain('<p>out</p>');
    expect(html).not.toContain('<p>in</p>');
    expect(html).not.toContain('Sign out');
    expect(html).toContain('isSignedIn&quot;:false');
  });

  it('a hook outside the provider says to wrap the layout in it', () => {
    expect(() => renderToString(h(Probe))).toThrow(
      'useUser() must be used inside <LatchkeyProvider>',
    );
  });
});
