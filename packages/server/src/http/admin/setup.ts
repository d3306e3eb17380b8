import type { FastifyInstance } from 'fastify';
import { LatchkeyError } from '../../errors/index.js';
import { type AdminSession, adminSession } from '../../modules/admin/index.js';
import { refusalPage } from '../../views/admin/sign-in.js';
import type { AppContext } from '../context.js';
import { cookieName } from '../pages/cookies.js';
import { seeOther } from '../pages/respond.js';
import { registerPageScope } from '../pages/scope.js';
import { sendAdminPage } from './responses.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in admin of an admin-area request (every page but sign-in). */
    admin: AdminSession | undefined;
  }
}

export const adminCookie = (authUrl: string) => cookieName(authUrl, 'latchkey_admin');

/** Pages that need no signed-in admin. */
const OPEN = new Set(['/admin/sign-in', '/admin/assets/admin.js']);

/**
 * The admin area's scope: the page scope with its own cookies (SameSite=Strict), the
 * signed-in admin, and its error pages, which say what the service refused.
 */
export async function setUpAdminScope(scope: FastifyInstance, ctx: AppContext) {
  await registerPageScope(scope, ctx, {
    csrfCookie: 'latchkey_admin_csrf',
    sameSite: 'strict',
    area: 'admin',
    errorPage: (request, reply, status, title, message) =>
      sendAdminPage(reply, status, refusalPage(request.cspNonce, title, message)),
    clientError: (error, status) =>
      status === 404
        ? ['Not found', 'There is nothing here, or it is not yours to see.']
        : error instanceof LatchkeyError
          ? ['Something is wrong with this request', error.message]
          : undefined,
  });
  scope.decorateRequest('admin', undefined);
  scope.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0] as string;
    if (OPEN.has(path)) return;
    request.admin = await adminSession(ctx.database.db, request.cookies[adminCookie(ctx.authUrl)]);
    if (!request.admin) {
      const next = request.method === 'GET' ? `?next=${encodeURIComponent(path)}` : '';
      return seeOther(reply, `/admin/sign-in${next}`);
    }
  });
}
