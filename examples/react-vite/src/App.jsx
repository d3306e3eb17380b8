import {
  SignedIn,
  SignedOut,
  SignIn,
  UserButton,
  useAuth,
  useLatchkey,
  useUser,
} from '@latchkey/react';
import { useEffect, useState } from 'react';

const redirectUrl = `${location.origin}/callback`;

/**
 * The page's path, following history: after a sign-in LatchkeyProvider goes back to the page
 * where it started with history.replaceState and a popstate event, as routers expect (with
 * React Router and the like you need nothing of this).
 */
function usePath() {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return path;
}

export function App() {
  const page = { '/': Home, '/account': Account, '/callback': Callback }[usePath()];
  const Page = page || NotFound;
  return (
    <>
      <header>
        <nav aria-label="Main">
          <a href="/">Home</a>
          <a href="/account">Account</a>
        </nav>
        <SignedIn>
          <UserButton />
        </SignedIn>
      </header>
      <main>
        <Page />
      </main>
    </>
  );
}

function Home() {
  return (
    <>
      <h1>Latchkey + React</h1>
      <p>Anyone can read this page.</p>
      <SignedOut>
        <SignIn redirectUrl={redirectUrl} />
      </SignedOut>
      <SignedIn>
        <p>
          You are signed in: see <a href="/account">your account</a>.
        </p>
      </SignedIn>
    </>
  );
}

/** Only for signed-in users; everyone else gets the sign-in buttons. */
function Account() {
  return (
    <>
      <h1>Your account</h1>
      <SignedIn>
        <Profile />
      </SignedIn>
      <SignedOut>
        <p>This page is for signed-in users.</p>
        <SignIn redirectUrl={redirectUrl} />
      </SignedOut>
    </>
  );
}

function Profile() {
  const user = useUser();
  const { getToken } = useAuth();
  const [answer, setAnswer] = useState('');

  async function callApi() {
    const token = await getToken();
    const res = await fetch('/api/me', { headers: { authorization: `Bearer ${token}` } });
    setAnswer(`${res.status} ${await res.text()}`);
  }

  return (
    <>
      <p>Signed in as {user.name ? `${user.name} (${user.email})` : user.email}.</p>
      <button type="button" onClick={callApi}>
        Call the API
      </button>
      <output>{answer}</output>
    </>
  );
}

/**
 * LatchkeyProvider finishes the sign-in here, then goes back to the page where it started
 * (or to its afterSignInUrl prop).
 */
function Callback() {
  const { isLoaded, isSignedIn, error } = useLatchkey();
  if (!isLoaded || isSignedIn) return <p>Signing you in…</p>;
  return (
    <>
      <h1>Sign-in did not work</h1>
      {error ? null : <p>There was no sign-in to finish here.</p>}
      <SignIn redirectUrl={redirectUrl} />
    </>
  );
}

function NotFound() {
  return <h1>Not found</h1>;
}
