import { latchkey } from './core.js';

async function handle(request: Request): Promise<Response> {
  return (await latchkey().handle(request)) ?? new Response('Not found', { status: 404 });
}

/**
 * The route handler of `app/api/latchkey/[...latchkey]/route.ts` (sign-in, callback,
 * sign-out): `export const { GET, POST } = handlers;`.
 */
export const handlers = { GET: handle, POST: handle } as const;
