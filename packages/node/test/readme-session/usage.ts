/**
 * The README's "Cookie sessions" examples, type-checked by `tsc -b` (never run) in a program
 * of their own, since their `auth` augmentations (a `Session`) differ from the "Protect
 * routes" ones (claims) in ../readme. The same middleware runs against the real server in
 * ../session-middleware.test.ts.
 */
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { type LatchkeySessionVariables, latchkeySession, type Session } from '../../src/index.js';
import { createLatchkeySession, sessionConfigFromEnv } from '../../src/session/index.js';

declare global {
  namespace Express {
    interface Request {
      auth?: Session | null;
    }
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: Session | null;
  }
}

export function expressExample() {
  const sessions = latchkeySession();
  const app = express();
  app.use(sessions.express());

  app.get('/dashboard', sessions.requireSession.express(), (req, res) => {
    res.send(`Signed in as ${req.auth?.email}`);
  });
  app.listen(3000);
}

export async function fastifyExample() {
  const sessions = latchkeySession();
  const app = Fastify();
  app.decorateRequest('auth', null);
  app.addHook('onRequest', sessions.fastify());

  app.get('/dashboard', { preHandler: sessions.requireSession.fastify() }, async (request) => {
    return `Signed in as ${request.auth?.email}`;
  });
  await app.listen({ port: 3000 });
}

export function honoExample() {
  const sessions = latchkeySession();
  const app = new Hono<{ Variables: LatchkeySessionVariables }>();
  app.use(sessions.hono());

  app.get('/dashboard', sessions.requireSession.hono(), (c) =>
    c.text(`Signed in as ${c.get('auth')?.email}`),
  );
  return app;
}

export async function coreExample(request: Request): Promise<Response> {
  const latchkey = createLatchkeySession(sessionConfigFromEnv());
  const handled = await latchkey.handle(request);
  if (handled) return handled;
  const { session, setCookie } = await latchkey.getSession(request);
  const response = session
    ? new Response(`Signed in as ${session.email}`)
    : Response.redirect(latchkey.signInUrl(new URL(request.url).pathname), 302);
  for (const cookie of setCookie) response.headers.append('set-cookie', cookie);
  return response;
}
