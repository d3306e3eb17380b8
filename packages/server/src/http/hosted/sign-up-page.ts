import type { FastifyInstance } from 'fastify';
import { LatchkeyError } from '../../errors/index.js';
import { hostedQuery, signUpInBrowser } from '../../modules/hosted/index.js';
import { messagePage, signUpPage } from '../../views/hosted.js';
import { type AppContext, hostedDeps } from '../context.js';
import { PAGE } from '../pages/scope.js';
import { errorPage, pageContext, passwordOff, sendPage } from './responses.js';
import { passwordPost, redirectSignedIn, resolveHosted } from './setup.js';

/** Sign-up with e-mail and password, under the same rules as the API's sign-up. */
export function signUpPages(scope: FastifyInstance, ctx: AppContext) {
  const deps = hostedDeps(ctx);

  scope.get('/sign-up', PAGE, async (request, reply) => {
    const h = await resolveHosted(ctx, request, reply);
    if (!h) return reply;
    if (!h.tenant.passwordEnabled) return passwordOff(request, reply);
    return sendPage(
      reply,
      200,
      signUpPage({ ctx: pageContext(request), query: hostedQuery(h), csrf: reply.generateCsrf() }),
      h.formTo,
    );
  });

  scope.post('/sign-up', PAGE, async (request, reply) => {
    const form = await passwordPost(ctx, request, reply);
    if (!form) return reply;
    const { h, input } = form;
    const { email } = input;
    try {
      const done = await signUpInBrowser(deps, h, input);
      if (done.signedIn) return redirectSignedIn(ctx, reply, h, done.signedIn);
      // The same words for a new address (a verification link) and one that has an account
      // (a mail with a sign-in and a reset link, or none past the mail limits): true for both.
      const outbox =
        !ctx.config.smtpUrl && h.tenant.environment === 'development'
          ? ` (This server has no SMTP_URL, so mail is not delivered: it is kept in the dev outbox, ${ctx.authUrl}/admin/outbox, and the server's log names each one.)`
          : '';
      return sendPage(
        reply,
        201,
        messagePage(
          pageContext(request),
          'Check your inbox',
          `We are sending a message about this sign-up to ${done.mailedTo}: follow its link to go on. If nothing arrives within a few minutes, look in your spam folder, or try signing in.${outbox}`,
          { href: `/sign-in?${hostedQuery(h)}`, text: 'Sign in' },
        ),
      );
    } catch (error) {
      if (!(error instanceof LatchkeyError)) throw error;
      if (error.code === 'rate_limited')
        return errorPage(
          request,
          reply,
          429,
          'Too many requests',
          'Too many sign-ups from this address; try again later.',
        );
      const details = (error.errors ?? []).map((x) => x.message);
      const invalid = error.errors?.some((x) => x.path === '/email') ? 'email' : 'password';
      return sendPage(
        reply,
        422,
        signUpPage({
          ctx: pageContext(request),
          query: hostedQuery(h),
          csrf: reply.generateCsrf(),
          email,
          invalid,
          alert: { kind: 'error', message: 'Please correct the following:', details },
        }),
        h.formTo,
      );
    }
  });
}
