import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import {
  type HostedRequest,
  hostedQuery,
  returningUserOf,
  signInWithPassword,
} from '../../modules/hosted/index.js';
import { endBrowserSession } from '../../modules/sessions/index.js';
import { enabledProviders } from '../../modules/social/index.js';
import { buttonPage, messagePage, signInPage } from '../../views/hosted.js';
import { type AppContext, hostedDeps } from '../context.js';
import { formField } from '../form-body.js';
import { seeOther } from '../pages/respond.js';
import { PAGE } from '../pages/scope.js';
import { clearBrowserCookie } from './cookies.js';
import { passkeysOn } from './passkey-routes.js';
import { pageContext, sendPage } from './responses.js';
import {
  currentBrowserCookie,
  finishSignIn,
  passwordPost,
  redirectSignedIn,
  resolveHosted,
  signInQuery,
} from './setup.js';

/** Sign-in (a returning browser goes straight back) and sign-out. */
export function signInPages(scope: FastifyInstance, ctx: AppContext) {
  const db = ctx.database.db;
  const deps = hostedDeps(ctx);
  /** The user of this browser's live hosted session who may go straight back, if any. */
  const returningUser = (request: FastifyRequest, h: HostedRequest) =>
    returningUserOf(deps, h.tenant, currentBrowserCookie(ctx, request, h));

  /** The sign-in form, again with what was typed and what went wrong when `extra` says so. */
  const showSignIn = async (
    request: FastifyRequest,
    reply: FastifyReply,
    h: HostedRequest,
    status: number,
    extra: Pick<Parameters<typeof signInPage>[0], 'email' | 'alert' | 'invalid'> = {},
  ) =>
    sendPage(
      reply,
      status,
      signInPage({
        ctx: pageContext(request),
        query: signInQuery(request, h),
        csrf: reply.generateCsrf(),
        providers: await enabledProviders(db, h.tenant),
        passwordEnabled: h.tenant.passwordEnabled,
        passkeys: passkeysOn(ctx, h.tenant),
        ...extra,
      }),
      h.formTo,
      passkeysOn(ctx, h.tenant),
    );

  scope.get('/sign-in', PAGE, async (request, reply) => {
    const h = await resolveHosted(ctx, request, reply);
    if (!h) return reply;
    const returning = await returningUser(request, h);
    // A user whose hosted session lives goes straight back, with fresh tokens.
    if (returning && formField(request.query, 'prompt') !== 'login') {
      // A plain request goes straight back. One that asks for a PKCE code (which yields a
      // long-lived refresh token) takes one click, so a crafted link cannot mint a code
      // without the user.
      if (!h.codeChallenge) return finishSignIn(ctx, request, reply, h, returning, true);
      return sendPage(
        reply,
        200,
        buttonPage({
          ctx: pageContext(request),
          title: 'Continue',
          message: `You are signed in as ${returning.email}.`,
          action: `/sign-in/continue?${hostedQuery(h)}`,
          csrf: reply.generateCsrf(),
          button: `Continue as ${returning.email}`,
          link: { href: `/sign-in?${hostedQuery(h)}&prompt=login`, text: 'Use another account' },
        }),
        h.formTo,
      );
    }
    // From the second step's pages when its pending sign-in is gone (docs/design.md §13).
    const expired = formField(request.query, 'notice') === 'expired';
    // An OpenID Provider's login_hint (docs/design.md §14) fills in the address.
    const hint = formField(request.query, 'login_hint', defaults.email.maxLength);
    return showSignIn(request, reply, h, 200, {
      ...(hint ? { email: hint } : {}),
      ...(expired
        ? {
            alert: {
              kind: 'error',
              message: 'That sign-in took too long or was finished already. Please sign in again.',
            },
          }
        : {}),
    });
  });

  scope.post('/sign-in/continue', PAGE, async (request, reply) => {
    const h = await resolveHosted(ctx, request, reply);
    if (!h) return reply;
    const returning = await returningUser(request, h);
    if (!returning) return seeOther(reply, `/sign-in?${hostedQuery(h)}`);
    return finishSignIn(ctx, request, reply, h, returning, true);
  });

  scope.post('/sign-in', PAGE, async (request, reply) => {
    const form = await passwordPost(ctx, request, reply);
    if (!form) return reply;
    const { h, input } = form;
    const { email } = input;
    const again = (status: number, message: string, invalid?: 'email' | 'password') =>
      showSignIn(request, reply, h, status, { email, alert: { kind: 'error', message }, invalid });
    if (!email || !input.password)
      return again(
        422,
        'Enter your e-mail address and your password.',
        email ? 'password' : 'email',
      );
    try {
      const outcome = await signInWithPassword(deps, h, input);
      if (!('unverified' in outcome)) return redirectSignedIn(ctx, reply, h, outcome);
      return sendPage(
        reply,
        403,
        messagePage(
          pageContext(request),
          'Check your inbox',
          outcome.resent
            ? `Verify your e-mail address first: we sent a new link to ${email}.`
            : `Verify your e-mail address first, with the link we sent to ${email}.`,
        ),
      );
    } catch (error) {
      if (!(error instanceof LatchkeyError)) throw error;
      if (error.code === 'invalid_credentials')
        return again(401, 'The e-mail address or the password is wrong.', 'password');
      if (error.code === 'rate_limited') return again(429, `Too many attempts. ${error.message}.`);
      if (error.code === 'confirmation_required')
        return sendPage(
          reply,
          403,
          messagePage(
            pageContext(request),
            'Confirm it is you',
            `Many sign-ins to this account have failed from other places, so we need to know this one is you. If the password was right, we sent a link to the e-mail address of the account: open it, then sign in again.`,
            { href: `/sign-in?${hostedQuery(h)}`, text: 'Back to sign in' },
          ),
        );
      return again(403, 'This account is disabled.');
    }
  });

  // GET only asks (a link or an image cannot sign anyone out); the POST carries CSRF.
  scope.get('/sign-out', PAGE, async (request, reply) => {
    const h = await resolveHosted(ctx, request, reply);
    if (!h) return reply;
    return sendPage(
      reply,
      200,
      buttonPage({
        ctx: pageContext(request),
        title: 'Sign out',
        message: `Sign out of ${h.tenant.name} on this browser?`,
        action: `/sign-out?${hostedQuery(h)}`,
        csrf: reply.generateCsrf(),
        button: 'Sign out',
      }),
      h.formTo,
    );
  });

  scope.post('/sign-out', PAGE, async (request, reply) => {
    const h = await resolveHosted(ctx, request, reply);
    if (!h) return reply;
    const value = currentBrowserCookie(ctx, request, h);
    if (value) await endBrowserSession(db, value);
    clearBrowserCookie(reply, ctx.authUrl, h.tenant.id);
    return seeOther(reply, h.redirectUrl.href);
  });
}
