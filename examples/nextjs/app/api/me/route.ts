import { auth } from '@latchkey/nextjs';

export async function GET(): Promise<Response> {
  const { userId, sessionId, claims } = await auth();
  if (!userId) {
    return Response.json(
      { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'Sign in first.' },
      { status: 401, headers: { 'content-type': 'application/problem+json' } },
    );
  }
  return Response.json({ userId, sessionId, email: claims?.email ?? null });
}
