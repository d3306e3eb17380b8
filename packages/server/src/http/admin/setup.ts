import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LatchkeyError } from '../../errors/index.js';
import { type AdminSession, adminSession } from '../../modules/admin/index.js';
import { barePage, e } from '../../modules/admin/views/kit.js';
import type { AppContext } from '../context.js';
import { pageErrorOf, registerFormScope } from '../form-scope.js';
import { isSecure } from '../hosted/cookies.js';
import { sendAdminPage } from './responses.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in admin of an admin-area request (every page but sign-in). */
    admin: AdminSession | undefined;
  }
}

// __Host- (RFC 6265bis section 4.1.3.2) under https: Secure, Path=/, no Domain.
const prefix = (authUrl: string) => (isSecure(authUrl) ? '__Host-' : '');
export const adminCookie = (authUrl: string) => `${prefix(authUrl)}latchkey_admin`;
const adminCsrfCookie = (authUrl: string) => `${prefix(authUrl)}latchkey_admin_csrf`;

/** Pages that need no signed-in admin. */
const OPEN = new Set(['/admin/sign-in', '/admin/assets/admin.js']);

/**
 * The admin area's scope: its own cookies (SameSite=Strict), CSRF on every POST, a
 * same-origin check, form bodies, the CSP nonce, the signed-in admin, and error pages.
 */
export async function setUpAdminScope(scope: FastifyInstance, ctx: AppContext) {
  const origin = new URL(ctx.authUrl).origin;
  await registerFormScope(scope, ctx, { name: adminCsrfCookie(ctx.authUrl), sameSite: 'strict' });
  scope.decorateRequest('admin', undefined);
  scope.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0] as string;
    if (request.method === 'POST') {
      // A change comes from our own pages only: a cross-site form is refused before
      // anything else (SameSite=Strict and the CSRF token refuse it too).
      const from = request.headers.origin;
      const site = request.headers['sec-fetch-site'];
      const foreign = from !== undefined && from !== 'null' && from !== origin;
      if (foreign || site === 'cross-site' || site === 'same-site')
        return refusePage(
          request,
          reply,
          403,
          'This form came from another site',
          "Changes are made from the admin area's own pages only.",
        );
    }
    if (OPEN.has(path)) return;
    request.admin = await adminSession(ctx.database.db, request.cookies[adminCookie(ctx.authUrl)]);
    if (!request.admin) {
      const next = request.method === 'GET' ? `?next=${encodeURIComponent(path)}` : '';
      return reply
        .code(303)
        .header('location', `/admin/sign-in${next}`)
        .header('cache-control', 'no-store')
        .send();
    }
  });
  // Every change carries the CSRF token of the page it came from.
  scope.addHook('preHandler', (request, reply, done) => {
    if (request.method === 'POST') scope.csrfProtection(request, reply, done);
    else done();
  });
  scope.setErrorHandler((error, request, reply) => {
    const { formExpired, status } = pageErrorOf(error);
    if (formExpired)
      return refusePage(
        request,
        reply,
        403,
        'This form has expired',
        'Go back, reload the page and try again.',
      );
    if (status === 404)
      return refusePage(
        request,
        reply,
        404,
        'Not found',
        'There is nothing here, or it is not yours to see.',
      );
    if (status && status >= 400 && status < 500)
      return refusePage(
        request,
        reply,
        status,
        'Something is wrong with this request',
        error instanceof LatchkeyError ? error.message : 'Go back and try again.',
      );
    request.log.error({ err: error }, 'admin page failed');
    return refusePage(request, reply, 500, 'Something went wrong', 'Please try again in a moment.');
  });
}

export function refusePage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  title: string,
  message: string,
) {
  return sendAdminPage(
    reply,
    status,
    barePage(
      request.cspNonce,
      title,
      `<div class="alert error" role="alert">${e(message)}</div><p><a href="/admin/tenants">Back to the admin area</a></p>`,
    ),
  );
}
