export default function Home() {
  return (
    <>
      <h1>A public page</h1>
      <p>Anyone can see this page. The dashboard is for signed-in users, rendered on the server.</p>
      <p>
        <a className="button" href="/api/latchkey/sign-in?returnTo=/dashboard">
          Sign in
        </a>
      </p>
    </>
  );
}
