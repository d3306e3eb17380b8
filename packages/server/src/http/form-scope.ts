import { randomBytes } from 'node:crypto';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import type { FastifyInstance } from 'fastify';
import { defaults } from '../config/defaults.js';
import { LatchkeyError } from '../errors/index.js';
import type { AppContext } from './context.js';
import { parseForm } from './form-body.js';
import { cookieSecret, isSecure } from './hosted/cookies.js';

/**
 * What every server-rendered scope (hosted pages, admin area) needs: signed cookies, a CSRF
 * secret in a cookie of its own, urlencoded form bodies, and a fresh CSP nonce per request.
 */
export async function registerFormScope(
  scope: FastifyInstance,
  ctx: AppContext,
  csrfCookie: { name: string; sameSite: 'lax' | 'strict' },
): Promise<void> {
  await scope.register(cookie, { secret: cookieSecret(ctx.config.secret) });
  await scope.register(csrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: csrfCookie.name,
    cookieOpts: {
      path: '/',
      sameSite: csrfCookie.sameSite,
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
  scope.addHook('onRequest', async (request) => {
    request.cspNonce = randomBytes(16).toString('base64');
  });
}

/**
 * What a form page's error handler needs to know of an error: whether it is a missing or
 * stale CSRF token (the form expired), and the HTTP status it stands for, if any.
 */
export function pageErrorOf(error: unknown): { formExpired: boolean; status: number | undefined } {
  const code = (error as { code?: unknown }).code;
  const status =
    error instanceof LatchkeyError ? error.status : (error as { statusCode?: number }).statusCode;
  return { formExpired: typeof code === 'string' && code.startsWith('FST_CSRF'), status };
}
