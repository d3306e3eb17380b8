'use server';
import { auth } from '@latchkey/nextjs';

/** A server action calling an API as the user: here Latchkey's own userinfo endpoint. */
export async function callUserinfo(): Promise<string> {
  const token = await (await auth()).getToken();
  if (!token) return 'Signed out.';
  const res = await fetch(`${process.env.LATCHKEY_ISSUER}/oauth/userinfo`, {
    headers: { authorization: `Bearer ${token}` },
    cache: 'no-store',
  });
  return `${res.status} ${JSON.stringify(await res.json())}`;
}
