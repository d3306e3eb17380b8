import { distance } from 'fastest-levenshtein';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LatchkeyError } from '../errors/index.js';
import { INTROSPECT_PATH } from './introspection-fast-path.js';
import { sendProblem } from './problem.js';

interface KnownRoute {
  /** The route as registered, e.g. `/v1/users/:id`. */
  url: string;
  match: RegExp;
  methods: Set<string>;
}

/** A path is "close" to a route within this many edits (signup, sign_up, /auth/sign-up). */
const MAX_EDITS = 3;

function pattern(url: string): RegExp {
  const parts = url.split(/(:[A-Za-z0-9_]+|\*)/).map((part) => {
    if (part === '*') return '.*';
    if (part.startsWith(':')) return '[^/]+';
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${parts.join('')}$`);
}

/**
 * What the not-found handler knows of the routes (docs/design.md §6.1): a path that exists
 * with other methods is `405 method_not_allowed` with `Allow`; a path a few edits from a
 * route is a 404 that names it.
 */
export function registerNotFound(app: FastifyInstance): void {
  const routes = new Map<string, KnownRoute>();
  app.addHook('onRoute', (route) => {
    const known = routes.get(route.url) ?? {
      url: route.url,
      match: pattern(route.url),
      methods: new Set<string>(),
    };
    for (const method of [route.method].flat()) known.methods.add(method);
    routes.set(route.url, known);
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = new Set<string>();
    for (const route of routes.values())
      if (route.match.test(path)) for (const m of route.methods) allowed.add(m);
    if (allowed.size > 0 && isApiPreflight(request, path, allowed)) {
      // A web page about to send a key to the REST API: let its request through, so that
      // it reads why a secret key is refused there (http/auth.ts) instead of a CORS error.
      // Nothing with an Origin header ever succeeds with a secret key.
      return reply
        .code(204)
        .headers({
          'access-control-allow-origin': request.headers.origin,
          'access-control-allow-methods': request.headers['access-control-request-method'],
          'access-control-allow-headers': 'authorization, content-type',
          'access-control-max-age': '600',
          vary: 'Origin',
        })
        .send();
    }
    if (allowed.size > 0) {
      const allow = [...allowed].sort().join(', ');
      return sendProblem(
        reply,
        new LatchkeyError('method_not_allowed', `${path} answers ${allow}, not ${request.method}`, {
          headers: { allow },
        }),
      );
    }
    const near = closest(routes, path, request.method);
    return sendProblem(
      reply,
      new LatchkeyError(
        'not_found',
        `No route for ${request.method} ${path}${near ? `; did you mean ${near}?` : ''}`,
      ),
    );
  });
}

/** A CORS preflight (Fetch standard) for a method the REST API has at this path. */
function isApiPreflight(request: FastifyRequest, path: string, allowed: Set<string>): boolean {
  const method = request.headers['access-control-request-method'];
  return (
    request.method === 'OPTIONS' &&
    typeof request.headers.origin === 'string' &&
    typeof method === 'string' &&
    allowed.has(method) &&
    (path.startsWith('/v1/') || path === INTROSPECT_PATH)
  );
}

/** The registered path nearest to `path` (with this method if one has it), if it is close. */
function closest(
  routes: Map<string, KnownRoute>,
  path: string,
  method: string,
): string | undefined {
  // Paths with parameters are compared as written (`/v1/users/:id`); wildcards never.
  let best: { url: string; edits: number } | undefined;
  const wanted = path.toLowerCase().replace(/\/+$/, '');
  for (const route of routes.values()) {
    // The distance is at least the difference in length: a long path costs nothing here.
    if (route.url.includes('*') || Math.abs(route.url.length - wanted.length) > MAX_EDITS) continue;
    const edits = distance(wanted, route.url.toLowerCase());
    const better =
      !best ||
      edits < best.edits ||
      (edits === best.edits &&
        route.methods.has(method) &&
        !routes.get(best.url)?.methods.has(method));
    if (better) best = { url: route.url, edits };
  }
  if (!best) return undefined;
  // Close means a few edits, and fewer than a third of the path (so /x is not "/v1/me").
  return best.edits <= Math.min(MAX_EDITS, Math.floor(best.url.length / 3)) ? best.url : undefined;
}
