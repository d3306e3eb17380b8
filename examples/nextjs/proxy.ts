// Next.js 16's proxy (`middleware.ts` in Next.js 15, the same line): refreshes the session
// before pages render and sends signed-out visitors of /dashboard to sign in.
import { latchkeyMiddleware } from '@latchkey/nextjs';

export default latchkeyMiddleware({ protect: '/dashboard' });

export const config = {
  // Every page and API route, not Next.js's own files and static assets.
  matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'],
};
