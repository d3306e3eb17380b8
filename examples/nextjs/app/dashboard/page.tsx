import { currentUser, protect } from '@latchkey/nextjs';
import { CallApi } from './call-api';

export default async function Dashboard() {
  await protect();
  const user = await currentUser();
  return (
    <>
      <h1>Dashboard</h1>
      <p>Signed in as {user?.email}</p>
      <CallApi />
      <form method="post" action="/api/latchkey/sign-out">
        <button type="submit">Sign out</button>
      </form>
    </>
  );
}
