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
      [h.redirectUrl.origin],
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
      return sendPage(
        reply,
        201,
        messagePage(
          pageContext(request),
          'Check your inbox',
          `We sent a link to ${done.mailedTo}. Open it to verify your address, then sign in.`,
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
        [h.redirectUrl.origin],
      );
    }
  });
}
