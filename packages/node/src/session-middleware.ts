import { LatchkeyError } from './errors.js';
import { sessionConfigFromEnv } from './session/config.js';
import {
  createLatchkeySession,
  type LatchkeySession,
  type LatchkeySessionConfig,
  type Session,
} from './session/index.js';

/**
 * docs/design.md §15 for Node servers: the cookie session of `@latchkey/node/session` as
 * Express, Fastify and Hono middleware. Each mounts sign-in, callback and sign-out under
 * `basePath`, sets `auth` to the `Session` or null (writing a refreshed cookie on the
 * response), and `requireSession` sends a browser to sign in, an API client a 401.
 */

/** Request headers as Node gives them. */
type NodeHeaders = Record<string, string | string[] | undefined>;

/**
 * The parts of an Express (or Node) request the session reads. It sets `auth` (a `Session`
 * or null), left out here so that your own typing of `req.auth` is never contradicted.
 */

/** Answers that set a session cookie: the browser's own, never a shared cache's. */
const PRIVATE = 'private, no-store';
export interface SessionExpressRequest {
  method?: string | undefined;
  url?: string | undefined;
  originalUrl?: string | undefined;
  headers: NodeHeaders;
}

/** The parts of Node's `ServerResponse` (Express's response extends it) the session writes. */
export interface SessionNodeResponse {
  statusCode: number;
  setHeader(name: string, value: string | string[]): unknown;
  getHeader(name: string): number | string | string[] | undefined;
  end(body?: string): unknown;
}

export type SessionExpressMiddleware = (
  req: SessionExpressRequest,
  res: SessionNodeResponse,
  next: (error?: unknown) => void,
) => void;

/** The parts of a Fastify request the session reads; it sets `auth`, as on Express. */
export interface SessionFastifyRequest {
  method: string;
  url: string;
  headers: NodeHeaders;
}

type WithAuth = { auth?: Session | null | undefined };
const authOf = (request: object) => (request as WithAuth).auth;
const setAuth = (request: object, session: Session | null) => {
  (request as WithAuth).auth = session;
};

export interface SessionFastifyReply {
  code(statusCode: number): unknown;
  header(name: string, value: string | string[]): unknown;
  send(payload?: string): unknown;
}

export type SessionFastifyHook = (
  request: SessionFastifyRequest,
  reply: SessionFastifyReply,
) => Promise<unknown>;

/** Hono's context variables: `new Hono<{ Variables: LatchkeySessionVariables }>()`. */
export interface LatchkeySessionVariables {
  auth: Session | null;
}

/** The parts of Hono's `Context` the session uses. */
export interface SessionHonoContext {
  req: { raw: Request };
  set(key: 'auth', value: Session | null): void;
  get(key: 'auth'): Session | null | undefined;
  header(name: string, value: string, options?: { append?: boolean }): void;
}

export type SessionHonoMiddleware = (
  c: SessionHonoContext,
  next: () => Promise<void>,
) => Promise<Response | undefined>;

export interface LatchkeySessionMiddleware {
  /** The shared core (`getSession`, `handle`, `signInUrl`). */
  readonly core: LatchkeySession;
  /** `app.use(sessions.express())`: the routes, and `req.auth`. */
  express(): SessionExpressMiddleware;
  /** `app.addHook('onRequest', sessions.fastify())` after `app.decorateRequest('auth', null)`. */
  fastify(): SessionFastifyHook;
  /** `app.use(sessions.hono())`: the routes, and `c.get('auth')`. */
  hono(): SessionHonoMiddleware;
  /** Guards that need `auth`: browsers (HTML GET) go to sign-in with returnTo, others get 401 JSON. */
  readonly requireSession: {
    express(): SessionExpressMiddleware;
    fastify(): SessionFastifyHook;
    hono(): SessionHonoMiddleware;
  };
}

const PROBLEM_TYPE = 'tag:latchkey.dev,2026:problem:';
const BODY_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'expect']);

/** `requireSession` without the session middleware before it is a set-up mistake, said loudly. */
function notMounted(framework: string, mount: string): LatchkeyError {
  return new LatchkeyError('option_invalid', {
    reason: `requireSession.${framework}() ran on a request the session middleware did not see.`,
    action: `Mount the session first: ${mount}.`,
  });
}

/** The cookie session for Express, Fastify and Hono; configuration from the environment by default. */
export function latchkeySession(
  config: LatchkeySessionConfig = sessionConfigFromEnv(),
): LatchkeySessionMiddleware {
  const core = createLatchkeySession(config);
  const base = core.config.appOrigin;

  const toRequest = (method: string | undefined, path: string, headers: NodeHeaders) => {
    const out = new Headers();
    for (const [name, value] of Object.entries(headers)) {
      // HTTP/2 pseudo-headers, and those of a body the session never reads.
      if (value === undefined || name.startsWith(':') || BODY_HEADERS.has(name)) continue;
      for (const item of Array.isArray(value) ? value : [value]) out.append(name, item);
    }
    return new Request(new URL(path, base), { method: method ?? 'GET', headers: out });
  };

  /** What the guard answers when there is no session: null when the request may go on. */
  const refusal = (method: string, path: string, accept: string | null) => {
    const browser = (method === 'GET' || method === 'HEAD') && /\btext\/html\b/.test(accept ?? '');
    if (browser) {
      return {
        status: 302,
        headers: { location: core.signInUrl(path), 'cache-control': 'no-store' },
        body: '',
      };
    }
    return {
      status: 401,
      headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store' },
      body: JSON.stringify({
        type: `${PROBLEM_TYPE}unauthorized`,
        title: 'Unauthorized',
        status: 401,
        code: 'unauthorized',
        detail: 'Sign in first: this needs a session.',
      }),
    };
  };

  const writeNode = async (res: SessionNodeResponse, response: Response) => {
    res.statusCode = response.status;
    response.headers.forEach((value, name) => {
      if (name !== 'set-cookie') res.setHeader(name, value);
    });
    appendCookies(res, response.headers.getSetCookie());
    res.end(await response.text());
  };

  const writeFastify = async (reply: SessionFastifyReply, response: Response) => {
    reply.code(response.status);
    response.headers.forEach((value, name) => {
      if (name !== 'set-cookie') reply.header(name, value);
    });
    const cookies = response.headers.getSetCookie();
    if (cookies.length > 0) reply.header('set-cookie', cookies);
    return reply.send(await response.text());
  };

  return {
    core,

    express() {
      return (req, res, next) => {
        const path = req.originalUrl ?? req.url ?? '/';
        const request = toRequest(req.method, path, req.headers);
        (async () => {
          const handled = await core.handle(request);
          if (handled) return writeNode(res, handled);
          const { session, setCookie } = await core.getSession(request);
          setAuth(req, session);
          appendCookies(res, setCookie);
          // An answer that sets a session cookie is this browser's alone: no shared cache keeps it.
          if (setCookie.length > 0) res.setHeader('cache-control', PRIVATE);
          next();
        })().catch(next);
      };
    },

    fastify() {
      return async (request, reply) => {
        const web = toRequest(request.method, request.url, request.headers);
        const handled = await core.handle(web);
        if (handled) return writeFastify(reply, handled);
        const { session, setCookie } = await core.getSession(web);
        setAuth(request, session);
        if (setCookie.length > 0) {
          reply.header('set-cookie', setCookie);
          reply.header('cache-control', PRIVATE);
        }
        return undefined;
      };
    },

    hono() {
      return async (c, next) => {
        const handled = await core.handle(c.req.raw);
        if (handled) return handled;
        const { session, setCookie } = await core.getSession(c.req.raw);
        c.set('auth', session);
        await next();
        for (const cookie of setCookie) c.header('set-cookie', cookie, { append: true });
        if (setCookie.length > 0) c.header('cache-control', PRIVATE);
        return undefined;
      };
    },

    requireSession: {
      express() {
        return (req, res, next) => {
          const auth = authOf(req);
          if (auth) return next();
          if (auth === undefined) return next(notMounted('express', 'app.use(sessions.express())'));
          const header = req.headers.accept;
          const refused = refusal(
            (req.method ?? 'GET').toUpperCase(),
            req.originalUrl ?? req.url ?? '/',
            typeof header === 'string' ? header : null,
          );
          res.statusCode = refused.status;
          for (const [name, value] of Object.entries(refused.headers)) res.setHeader(name, value);
          res.end(refused.body);
        };
      },
      fastify() {
        return async (request, reply) => {
          const auth = authOf(request);
          if (auth) return undefined;
          if (auth === undefined) {
            throw notMounted('fastify', "app.addHook('onRequest', sessions.fastify())");
          }
          const header = request.headers.accept;
          const refused = refusal(
            request.method.toUpperCase(),
            request.url,
            typeof header === 'string' ? header : null,
          );
          reply.code(refused.status);
          for (const [name, value] of Object.entries(refused.headers)) reply.header(name, value);
          return reply.send(refused.body);
        };
      },
      hono() {
        return async (c, next) => {
          const auth = c.get('auth');
          if (auth) {
            await next();
            return undefined;
          }
          if (auth === undefined) throw notMounted('hono', 'app.use(sessions.hono())');
          const url = new URL(c.req.raw.url);
          const refused = refusal(
            c.req.raw.method.toUpperCase(),
            `${url.pathname}${url.search}`,
            c.req.raw.headers.get('accept'),
          );
          return new Response(refused.body || null, {
            status: refused.status,
            headers: refused.headers,
          });
        };
      },
    },
  };
}

/** Adds Set-Cookie values to those the response already has. */
function appendCookies(res: SessionNodeResponse, cookies: string[]): void {
  if (cookies.length === 0) return;
  const existing = res.getHeader('set-cookie');
  const before =
    existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
  res.setHeader('set-cookie', [...before, ...cookies]);
}
