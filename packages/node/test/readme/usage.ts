/**
 * The README's "Protect routes" examples, type-checked by `tsc -b` (never run) in a program of
 * their own: with the README's `auth` augmentations of Express and Fastify, and without the
 * server's own `FastifyRequest.auth` (its API key context), which the tests that start the real
 * server bring into theirs. The same middleware runs against the real server in
 * ../middleware.test.ts.
 */
import { createServer } from 'node:http';
import express from 'express';
import Fastify from 'fastify';
import { createLatchkey, type LatchkeyClaims, protectedResourceMetadata } from '../../src/index.js';

declare global {
  namespace Express {
    interface Request {
      auth?: LatchkeyClaims;
    }
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: LatchkeyClaims;
  }
}

export function expressExample() {
  const latchkey = createLatchkey();
  const app = express();
  app.get('/api/me', latchkey.expressMiddleware(), (req, res) => {
    res.json({ userId: req.auth?.sub, email: req.auth?.email });
  });
  app.get('/api/admin', latchkey.expressMiddleware({ mode: 'introspect' }), (req, res) => {
    res.json({ roles: req.auth?.roles });
  });
  return app;
}

export function fastifyExample() {
  const latchkey = createLatchkey();
  const app = Fastify();
  app.decorateRequest('auth', undefined);
  app.addHook('onRequest', latchkey.fastifyHook());
  app.get('/api/me', async (request) => ({ userId: request.auth?.sub }));
  app.get('/api/admin', { onRequest: latchkey.fastifyHook({ mode: 'introspect' }) }, handler);
  app.addHook('preHandler', latchkey.fastifyHook({ optional: true }));
  return app;
}

async function handler(request: { auth?: LatchkeyClaims }) {
  return { roles: request.auth?.roles };
}

export function nodeExample() {
  const latchkey = createLatchkey();
  return createServer(
    latchkey.nodeHandler((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ userId: req.auth.sub }));
    }),
  );
}

export function mcpExample() {
  const resource = 'https://api.example.com/mcp';
  const latchkey = createLatchkey({ audience: resource });
  const metadata = protectedResourceMetadata({
    resource,
    issuer: `https://auth.example.com/t/${process.env.LATCHKEY_TENANT_ID}`,
    scopesSupported: ['files:read'],
  });
  const app = express();
  app.get(metadata.path, metadata.nodeHandler);
  app.options(metadata.path, metadata.nodeHandler);
  app.post(
    '/mcp',
    latchkey.expressMiddleware({ resourceMetadata: metadata.url }),
    express.json(),
    (req, res) => {
      res.json({ jsonrpc: '2.0', id: req.body.id, result: { user: req.auth?.sub } });
    },
  );
  const fastifyApp = Fastify();
  fastifyApp.route({
    method: ['GET', 'OPTIONS'],
    url: metadata.path,
    handler: metadata.fastifyHandler,
  });
  return { app, fastifyApp };
}
