import type { FastifyInstance } from 'fastify';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import { type AdminSignInDeps, signInAdmin, signOutAdmin } from '../../modules/admin/index.js';
import { signInPage } from '../../views/admin/sign-in.js';
import type { AppContext } from '../context.js';
import { formField } from '../form-body.js';
import { isSecure } from '../pages/cookies.js';
import { seeOther } from '../pages/respond.js';
import { PAGE } from '../pages/scope.js';
import { sendAdminPage } from './responses.js';
import { adminCookie } from './setup.js';

/** Only a path inside the admin area: `next` can never lead elsewhere. */
const safeNext = (next: string) =>
  /^\/admin\/[A-Za-z0-9/_-]*$/.test(next) ? next : '/admin/tenants';

export const adminSignInDeps = (ctx: AppContext): AdminSignInDeps => ({
  db: ctx.database.db,
  hasher: ctx.hasher,
  limiter: ctx.limiter,
  policy: ctx.signInPolicy,
});

/** Sign-in and sign-out of the admin area. */
export function sessionPages(scope: FastifyInstance, ctx: AppContext) {
  const deps = adminSignInDeps(ctx);

  scope.get('/admin', PAGE, async (_request, reply) => seeOther(reply, '/admin/tenants'));

  scope.get('/admin/sign-in', PAGE, async (request, reply) =>
    sendAdminPage(
      reply,
      200,
      signInPage({
        nonce: request.cspNonce,
        csrf: reply.generateCsrf(),
        next: safeNext(formField(request.query, 'next', 200)),
      }),
    ),
  );

  scope.post('/admin/sign-in', PAGE, async (request, reply) => {
    const email = formField(request.body, 'email', defaults.email.maxLength).trim();
    const password = formField(request.body, 'password', defaults.password.maxLength);
    const next = safeNext(formField(request.body, 'next', 200));
    try {
      if (!email || !password)
        throw new LatchkeyError('invalid_credentials', 'Enter your e-mail address and password.');
      const { cookie } = await signInAdmin(deps, { email, password, ip: request.ip });
      reply.setCookie(adminCookie(ctx.authUrl), cookie, {
        path: '/',
        httpOnly: true,
        sameSite: 'strict',
        secure: isSecure(ctx.authUrl),
        maxAge: defaults.admin.sessionMs / 1000,
      });
      return seeOther(reply, next);
    } catch (error) {
      if (!(error instanceof LatchkeyError)) throw error;
      const status = error.code === 'rate_limited' ? 429 : 401;
      const message =
        error.code === 'rate_limited'
          ? `Too many attempts. ${error.message}.`
          : 'The e-mail address or the password is wrong.';
      return sendAdminPage(
        reply,
        status,
        signInPage({
          nonce: request.cspNonce,
          csrf: reply.generateCsrf(),
          next,
          email,
          alert: { kind: 'error', message },
        }),
      );
    }
  });

  scope.post('/admin/sign-out', PAGE, async (request, reply) => {
    await signOutAdmin(ctx.database.db, request.cookies[adminCookie(ctx.authUrl)]);
    reply.clearCookie(adminCookie(ctx.authUrl), {
      path: '/',
      httpOnly: true,
      sameSite: 'strict',
      secure: isSecure(ctx.authUrl),
    });
    return seeOther(reply, '/admin/sign-in');
  });
}
