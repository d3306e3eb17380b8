import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import type { LinkPurpose } from '../../modules/email/index.js';
import {
  completePasswordReset,
  confirmAddress,
  hostedQuery,
  type LinkOutcome,
  openEmailLink,
  requestPasswordReset,
  verifyEmail,
} from '../../modules/hosted/index.js';
import { buttonPage, forgotPage, messagePage, resetPage } from '../../views/hosted.js';
import { type AppContext, hostedDeps } from '../context.js';
import { formField } from '../form-body.js';
import { PAGE } from '../pages/scope.js';
import { errorPage, pageContext, passwordOff, sendPage } from './responses.js';
import { resolveHosted } from './setup.js';

const badLink = (request: FastifyRequest, reply: FastifyReply) =>
  errorPage(
    request,
    reply,
    400,
    'This link does not work',
    'It was already used, has expired, or was mistyped. Ask for a new one.',
  );

/** Forgotten password, the reset link's page, and the verification link's page. */
export function emailLinkPages(scope: FastifyInstance, ctx: AppContext) {
  const deps = hostedDeps(ctx);

  scope.get('/forgot-password', PAGE, async (request, reply) => {
    const h = await resolveHosted(ctx, request, reply);
    if (!h) return reply;
    return sendPage(
      reply,
      200,
      forgotPage({ ctx: pageContext(request), query: hostedQuery(h), csrf: reply.generateCsrf() }),
    );
  });

  scope.post('/forgot-password', PAGE, async (request, reply) => {
    const h = await resolveHosted(ctx, request, reply);
    if (!h) return reply;
    if (!h.tenant.passwordEnabled) return passwordOff(request, reply);
    const email = formField(request.body, 'email', defaults.email.maxLength).trim();
    try {
      await requestPasswordReset(deps, h, {
        email,
        ip: request.ip,
        onMailError: (error) => request.log.error({ err: error }, 'password reset mail failed'),
      });
    } catch (error) {
      if (!(error instanceof LatchkeyError && error.code === 'rate_limited')) throw error;
      return sendPage(
        reply,
        429,
        forgotPage({
          ctx: pageContext(request),
          query: hostedQuery(h),
          csrf: reply.generateCsrf(),
          email,
          alert: {
            kind: 'error',
            message: 'Too many requests from this address; try again later.',
          },
        }),
      );
    }
    // The same answer whether or not the address has an account.
    return sendPage(
      reply,
      200,
      messagePage(
        pageContext(request),
        'Check your inbox',
        `If an account exists for ${email}, we sent it a link to choose a new password.`,
        { href: `/sign-in?${hostedQuery(h)}`, text: 'Back to sign in' },
      ),
    );
  });

  scope.get('/reset-password', PAGE, async (request, reply) => {
    const token = formField(request.query, 'token');
    const link = await openEmailLink(deps, token, 'reset');
    if (!link) return badLink(request, reply);
    request.pageTenant = link.tenant;
    return sendPage(
      reply,
      200,
      resetPage({ ctx: pageContext(request), token, csrf: reply.generateCsrf() }),
    );
  });

  scope.post('/reset-password', PAGE, async (request, reply) => {
    const token = formField(request.body, 'token');
    const password = formField(request.body, 'password', defaults.password.maxLength);
    const outcome = await completePasswordReset(deps, { token, password });
    request.pageTenant = outcome.tenant;
    if (!outcome.ok && outcome.problem) {
      return sendPage(
        reply,
        422,
        resetPage({
          ctx: pageContext(request),
          token,
          csrf: reply.generateCsrf(),
          alert: { kind: 'error', message: outcome.problem },
        }),
      );
    }
    if (!outcome.ok) return badLink(request, reply);
    return sendPage(
      reply,
      200,
      messagePage(
        pageContext(request),
        'Your password is changed',
        'Sign in with your new password.',
        outcome.returnTo ? { href: outcome.returnTo, text: 'Sign in' } : undefined,
      ),
    );
  });

  /**
   * A mailed link whose page asks for one click: a button, not a side effect of GET (mail
   * scanners that open links change nothing); the POST uses the link once.
   */
  function oneClickLink(
    path: string,
    purpose: LinkPurpose,
    ask: {
      title: string;
      message: (link: NonNullable<Awaited<ReturnType<typeof openEmailLink>>>) => string;
      button: string;
    },
    act: (token: string) => Promise<LinkOutcome>,
    done: { title: string; message: string; link: string },
  ) {
    scope.get(path, PAGE, async (request, reply) => {
      const token = formField(request.query, 'token');
      const link = await openEmailLink(deps, token, purpose);
      if (!link) return badLink(request, reply);
      request.pageTenant = link.tenant;
      return sendPage(
        reply,
        200,
        buttonPage({
          ctx: pageContext(request),
          title: ask.title,
          message: ask.message(link),
          action: path,
          csrf: reply.generateCsrf(),
          button: ask.button,
          hidden: { token },
        }),
      );
    });
    scope.post(path, PAGE, async (request, reply) => {
      const outcome = await act(formField(request.body, 'token'));
      if (!outcome.ok) return badLink(request, reply);
      request.pageTenant = outcome.tenant;
      return sendPage(
        reply,
        200,
        messagePage(
          pageContext(request),
          done.title,
          done.message,
          outcome.returnTo ? { href: outcome.returnTo, text: done.link } : undefined,
        ),
      );
    });
  }

  oneClickLink(
    '/confirm-address',
    'address',
    {
      title: 'Confirm it is you',
      message: (link) =>
        `Let ${link.address} sign in to ${link.user.email}? Only if it was you who just signed in from there.`,
      button: 'Yes, it was me',
    },
    (token) => confirmAddress(deps, token),
    {
      title: 'Thank you',
      message: 'That address can sign in to your account now. Sign in again there.',
      link: 'Sign in',
    },
  );

  oneClickLink(
    '/verify-email',
    'verify',
    {
      title: 'Verify your e-mail',
      message: (link) => `Confirm that ${link.user.email} is your address.`,
      button: 'Verify my e-mail address',
    },
    (token) => verifyEmail(deps, token),
    {
      title: 'Your e-mail address is verified',
      message: 'You can sign in now.',
      link: 'Continue to sign in',
    },
  );
}
