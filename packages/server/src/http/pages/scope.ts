import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import { randomNonce } from '../../crypto/random.js';
import { LatchkeyError } from '../../errors/index.js';
import type { AppContext } from '../context.js';
import { parseForm } from '../form-body.js';
import { cookieName, cookieSecret, isSecure } from './cookies.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The CSP nonce of this page. */
    cspNonce: string;
  }
  interface FastifyContextConfig {
    /**
     * `false` on the one POST that comes from another site by design (a provider's
     * form_post answer, bound by its state cookie instead); every other POST of a page
     * scope must come from this origin and carry the CSRF token of the form it came from.
     */
    csrf?: false;
  }
}

/** Route options of a page or a form post. Pages stay out of the API document. */
export const PAGE = { schema: { hide: true } } as const;

/** Route options of the POST a provider sends from its own site (no CSRF token; see `csrf`). */
export const CROSS_SITE_POST = { schema: { hide: true }, config: { csrf: false } } as const;

/** How an area draws a refusal or a failure. */
export type ErrorPage = (
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  title: string,
  message: string,
) => FastifyReply;

export interface PageScope {
  /** The CSRF secret's cookie (before the `__Host-` rule). */
  csrfCookie: string;
  sameSite: 'lax' | 'strict';
  /** For the log line of a failure. */
  area: string;
  errorPage: ErrorPage;
  /** The title and message of a 4xx other than an expired form, when the area says more. */
  clientError?: (error: unknown, status: number) => [title: string, message: string] | undefined;
}

/**
 * What every server-rendered scope (the hosted pages, the admin area) has: signed cookies,
 * urlencoded form bodies, a fresh CSP nonce per request, one CSRF mechanism for every
 * POST (same origin, then the form's token; SameSite cookies refuse it too), and error pages.
 */
export async function registerPageScope(
  scope: FastifyInstance,
  ctx: AppContext,
  options: PageScope,
): Promise<void> {
  await scope.register(cookie, { secret: cookieSecret(ctx.config.secret) });
  await scope.register(csrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: cookieName(ctx.authUrl, options.csrfCookie),
    cookieOpts: {
      path: '/',
      sameSite: options.sameSite,
      httpOnly: true,
      secure: isSecure(ctx.authUrl),
      signed: true,
    },
  });
  scope.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: defaults.hosted.formBodyLimit },
    parseForm,
  );
  scope.decorateRequest('cspNonce', '');
  const origin = new URL(ctx.authUrl).origin;
  scope.addHook('onRequest', async (request, reply) => {
    request.cspNonce = randomNonce();
    // A change comes from our own pages only: a cross-site form is refused before anything
    // else. (Pages under Referrer-Policy no-referrer send `Origin: null`.)
    if (request.method === 'POST' && request.routeOptions.config.csrf !== false) {
      const from = request.headers.origin;
      const site = request.headers['sec-fetch-site'];
      const foreign = from !== undefined && from !== 'null' && from !== origin;
      if (foreign || site === 'cross-site' || site === 'same-site')
        return options.errorPage(
          request,
          reply,
          403,
          'This form came from another site',
          'Changes are made from these pages only.',
        );
    }
  });
  // Every change carries the CSRF token of the page it came from.
  scope.addHook('preHandler', (request, reply, done) => {
    if (request.method === 'POST' && request.routeOptions.config.csrf !== false)
      scope.csrfProtection(request, reply, done);
    else done();
  });
  scope.setErrorHandler((error, request, reply) => {
    const { formExpired, status } = pageErrorOf(error);
    if (formExpired)
      return options.errorPage(
        request,
        reply,
        403,
        'This form has expired',
        'Go back, reload the page and try again.',
      );
    if (status && status >= 400 && status < 500) {
      const [title, message] = options.clientError?.(error, status) ?? [
        'Something is wrong with this request',
        'Go back and try again.',
      ];
      return options.errorPage(request, reply, status, title, message);
    }
    request.log.error({ err: error }, `${options.area} page failed`);
    return options.errorPage(
      request,
      reply,
      500,
      'Something went wrong',
      'Please try again in a moment.',
    );
  });
}

/**
 * What a page's error handler needs to know of an error: whether it is a missing or stale
 * CSRF token (the form expired), and the HTTP status it stands for, if any.
 */
function pageErrorOf(error: unknown): { formExpired: boolean; status: number | undefined } {
  const code = (error as { code?: unknown }).code;
  const status =
    error instanceof LatchkeyError ? error.status : (error as { statusCode?: number }).statusCode;
  return { formExpired: typeof code === 'string' && code.startsWith('FST_CSRF'), status };
}
