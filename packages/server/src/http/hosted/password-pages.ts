import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LatchkeyError } from '../../errors/index.js';
import {
  browserSessionUser,
  buttonPage,
  endBrowserSession,
  endUserBrowserSessions,
  forgotPage,
  hostedQuery,
  messagePage,
  peekEmailToken,
  resetPage,
  signInPage,
  signUpPage,
  useEmailToken,
  voidEmailTokens,
} from '../../modules/hosted/index.js';
import { dropUnprovenIdentities, enabledProviders } from '../../modules/social/index.js';
import { getTenant } from '../../modules/tenants/index.js';
import {
  checkPassword,
  createUser,
  findUserByEmail,
  getUser,
  markEmailVerified,
  setPasswordHash,
  verifyCredentials,
} from '../../modules/users/index.js';
import type { AppContext } from '../context.js';

import { field, type Kit } from './kit.js';

/** Sign-in, sign-up, password reset, e-mail verification and sign-out pages. */
export function passwordPages(scope: FastifyInstance, ctx: AppContext, kit: Kit) {
  const {
    secure,
    sessionCookie,
    signInDeps,
    send,
    page,
    hosted,
    finish,
    sendLink,
    addressAllowed,
    recipientAllowed,
    mailAllowed,
    signUpAllowed,
    passwordOff,
    csrfCheck,
    get,
    setTenant,
  } = kit;

  scope.get('/sign-in', get, async (request, reply) => {
    const h = await hosted(request, reply);
    if (!h) return reply;
    const cookieValue = request.cookies[sessionCookie(h.tenant.id)];
    const returning = cookieValue
      ? await browserSessionUser(ctx.database.db, h.tenant.id, cookieValue)
      : undefined;
    // A user whose hosted session lives goes straight back, with fresh tokens.
    if (returning && (request.query as { prompt?: string }).prompt !== 'login') {
      // A plain request goes straight back. One that asks for a PKCE code (which yields a
      // long-lived refresh token) takes one click, so a crafted link cannot mint a code
      // without the user.
      if (!h.codeChallenge) return finish(request, reply, h, returning);
      return send(
        reply,
        200,
        buttonPage({
          ctx: page(request),
          title: 'Continue',
          message: `You are signed in as ${returning.email}.`,
          action: `/sign-in/continue?${hostedQuery(h)}`,
          csrf: reply.generateCsrf(),
          button: `Continue as ${returning.email}`,
          link: { href: `/sign-in?${hostedQuery(h)}&prompt=login`, text: 'Use another account' },
        }),
        [h.redirectUrl.origin],
      );
    }
    return send(
      reply,
      200,
      signInPage({
        ctx: page(request),
        query: hostedQuery(h),
        csrf: reply.generateCsrf(),
        providers: await enabledProviders(ctx.database.db, h.tenant.id),
        passwordEnabled: h.tenant.passwordEnabled,
      }),
      [h.redirectUrl.origin],
    );
  });

  scope.post('/sign-in/continue', csrfCheck, async (request, reply) => {
    const h = await hosted(request, reply);
    if (!h) return reply;
    const cookieValue = request.cookies[sessionCookie(h.tenant.id)];
    const returning = cookieValue
      ? await browserSessionUser(ctx.database.db, h.tenant.id, cookieValue)
      : undefined;
    if (!returning)
      return reply
        .code(303)
        .header('location', `/sign-in?${hostedQuery(h)}`)
        .send();
    return finish(request, reply, h, returning);
  });

  scope.post('/sign-in', csrfCheck, async (request, reply) => {
    const h = await hosted(request, reply);
    if (!h) return reply;
    if (!h.tenant.passwordEnabled) return passwordOff(request, reply);
    const email = field(request.body, 'email').slice(0, 320);
    const password = field(request.body, 'password').slice(0, 1024);
    const providers = await enabledProviders(ctx.database.db, h.tenant.id);
    const again = (status: number, message: string, invalid?: 'email' | 'password') =>
      send(
        reply,
        status,
        signInPage({
          ctx: page(request),
          query: hostedQuery(h),
          csrf: reply.generateCsrf(),
          providers,
          passwordEnabled: h.tenant.passwordEnabled,
          email,
          alert: { kind: 'error', message },
          invalid,
        }),
        [h.redirectUrl.origin],
      );
    if (!email || !password)
      return again(
        422,
        'Enter your e-mail address and your password.',
        email ? 'password' : 'email',
      );
    try {
      const user = await verifyCredentials(signInDeps, h.tenant, {
        email,
        password,
        ip: request.ip,
      });
      return await finish(request, reply, h, user);
    } catch (error) {
      if (!(error instanceof LatchkeyError)) throw error;
      if (error.code === 'invalid_credentials')
        return again(401, 'The e-mail address or the password is wrong.', 'password');
      if (error.code === 'rate_limited') return again(429, `Too many attempts. ${error.message}.`);
      if (error.code === 'email_not_verified') {
        const user = await findUserByEmail(ctx.database.db, h.tenant.id, email);
        const sent = !!user && (await mailAllowed(request, user.id));
        if (sent && user) await sendLink(h, h.tenant, user, 'verify');
        return send(
          reply,
          403,
          messagePage(
            page(request),
            'Check your inbox',
            sent
              ? `Verify your e-mail address first: we sent a new link to ${email}.`
              : `Verify your e-mail address first, with the link we sent to ${email}.`,
          ),
        );
      }
      return again(403, 'This account is disabled.');
    }
  });

  scope.get('/sign-up', get, async (request, reply) => {
    const h = await hosted(request, reply);
    if (!h) return reply;
    if (!h.tenant.passwordEnabled) return passwordOff(request, reply);
    return send(
      reply,
      200,
      signUpPage({ ctx: page(request), query: hostedQuery(h), csrf: reply.generateCsrf() }),
      [h.redirectUrl.origin],
    );
  });

  scope.post('/sign-up', csrfCheck, async (request, reply) => {
    const h = await hosted(request, reply);
    if (!h) return reply;
    if (!h.tenant.passwordEnabled) return passwordOff(request, reply);
    const email = field(request.body, 'email').slice(0, 320);
    const password = field(request.body, 'password').slice(0, 2048);
    try {
      if (!(await signUpAllowed(request))) {
        return send(
          reply,
          429,
          messagePage(
            page(request),
            'Too many requests',
            'Too many sign-ups from this address; try again later.',
            undefined,
            'error',
          ),
        );
      }
      const { user } = await createUser({ db: ctx.database.db, hasher: ctx.hasher }, h.tenant, {
        email,
        password,
      });
      if (h.tenant.requireEmailVerification) {
        await sendLink(h, h.tenant, user, 'verify');
        return send(
          reply,
          201,
          messagePage(
            page(request),
            'Check your inbox',
            `We sent a link to ${user.email}. Open it to verify your address, then sign in.`,
          ),
        );
      }
      return await finish(request, reply, h, user);
    } catch (error) {
      if (!(error instanceof LatchkeyError)) throw error;
      const taken = error.code === 'email_taken';
      const details = taken ? [] : (error.errors ?? []).map((x) => x.message);
      const invalid = error.errors?.some((x) => x.path === '/email') ? 'email' : 'password';
      return send(
        reply,
        taken ? 409 : 422,
        signUpPage({
          ctx: page(request),
          query: hostedQuery(h),
          csrf: reply.generateCsrf(),
          email,
          invalid: taken ? 'email' : invalid,
          alert: {
            kind: 'error',
            message: taken
              ? 'An account with this e-mail address exists already. Sign in instead.'
              : 'Please correct the following:',
            details,
          },
        }),
        [h.redirectUrl.origin],
      );
    }
  });

  scope.get('/forgot-password', get, async (request, reply) => {
    const h = await hosted(request, reply);
    if (!h) return reply;
    return send(
      reply,
      200,
      forgotPage({ ctx: page(request), query: hostedQuery(h), csrf: reply.generateCsrf() }),
    );
  });

  scope.post('/forgot-password', csrfCheck, async (request, reply) => {
    const h = await hosted(request, reply);
    if (!h) return reply;
    if (!h.tenant.passwordEnabled) return passwordOff(request, reply);
    const email = field(request.body, 'email').trim().slice(0, 320);
    if (!(await addressAllowed(request))) {
      return send(
        reply,
        429,
        forgotPage({
          ctx: page(request),
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
    const user = email ? await findUserByEmail(ctx.database.db, h.tenant.id, email) : undefined;
    if (user && !user.disabled) {
      // Sent after the answer: its time (and any SMTP failure) never tells whether the
      // address has an account.
      void (async () => {
        if (await recipientAllowed(user.id)) await sendLink(h, h.tenant, user, 'reset');
      })().catch((error: unknown) =>
        request.log.error({ err: error }, 'password reset mail failed'),
      );
    }
    // The same answer whether or not the address has an account.
    return send(
      reply,
      200,
      messagePage(
        page(request),
        'Check your inbox',
        `If an account exists for ${email}, we sent it a link to choose a new password.`,
        { href: `/sign-in?${hostedQuery(h)}`, text: 'Back to sign in' },
      ),
    );
  });

  async function linkTenant(request: FastifyRequest, tenantId: string) {
    setTenant(request, await getTenant(ctx.database.db, tenantId));
  }

  const badLink = (request: FastifyRequest, reply: FastifyReply) =>
    send(
      reply,
      400,
      messagePage(
        page(request),
        'This link does not work',
        'It was already used, has expired, or was mistyped. Ask for a new one.',
        undefined,
        'error',
      ),
    );

  scope.get('/reset-password', get, async (request, reply) => {
    const token = field(request.query, 'token');
    const row = token ? await peekEmailToken(ctx.database.db, token, 'reset') : undefined;
    if (!row) return badLink(request, reply);
    await linkTenant(request, row.tenant_id);
    return send(reply, 200, resetPage({ ctx: page(request), token, csrf: reply.generateCsrf() }));
  });

  scope.post('/reset-password', csrfCheck, async (request, reply) => {
    const token = field(request.body, 'token');
    const password = field(request.body, 'password').slice(0, 2048);
    const peek = token ? await peekEmailToken(ctx.database.db, token, 'reset') : undefined;
    if (!peek) return badLink(request, reply);
    await linkTenant(request, peek.tenant_id);
    const problems = checkPassword(password);
    if (problems.length) {
      return send(
        reply,
        422,
        resetPage({
          ctx: page(request),
          token,
          csrf: reply.generateCsrf(),
          alert: { kind: 'error', message: problems[0]?.message ?? 'Choose another password.' },
        }),
      );
    }
    const row = await useEmailToken(ctx.database.db, token, 'reset');
    if (!row) return badLink(request, reply);
    await setPasswordHash(
      ctx.database.db,
      row.tenant_id,
      row.user_id,
      await ctx.hasher.hash(password),
    );
    // Whoever knew the old password is signed out everywhere; the mailbox owner proved it.
    await ctx.sessions.revoke(row.tenant_id, { userId: row.user_id }, 'password_reset');
    await endUserBrowserSessions(ctx.database.db, row.tenant_id, row.user_id);
    await voidEmailTokens(ctx.database.db, row.tenant_id, row.user_id, 'reset');
    await markEmailVerified(ctx.database.db, row.tenant_id, row.user_id);
    await dropUnprovenIdentities(ctx.database.db, row.tenant_id, row.user_id);
    await ctx.bus.publish(`user:${row.user_id}`);
    return send(
      reply,
      200,
      messagePage(
        page(request),
        'Your password is changed',
        'Sign in with your new password.',
        row.return_to ? { href: row.return_to, text: 'Sign in' } : undefined,
      ),
    );
  });

  scope.get('/verify-email', get, async (request, reply) => {
    const token = field(request.query, 'token');
    const row = token ? await peekEmailToken(ctx.database.db, token, 'verify') : undefined;
    if (!row) return badLink(request, reply);
    await linkTenant(request, row.tenant_id);
    const user = await getUser(ctx.database.db, row.tenant_id, row.user_id);
    // A button, not a side effect of GET: mail scanners that open links change nothing.
    return send(
      reply,
      200,
      buttonPage({
        ctx: page(request),
        title: 'Verify your e-mail',
        message: `Confirm that ${user.email} is your address.`,
        action: '/verify-email',
        csrf: reply.generateCsrf(),
        button: 'Verify my e-mail address',
        hidden: { token },
      }),
    );
  });

  scope.post('/verify-email', csrfCheck, async (request, reply) => {
    const row = await useEmailToken(ctx.database.db, field(request.body, 'token'), 'verify');
    if (!row) return badLink(request, reply);
    await linkTenant(request, row.tenant_id);
    await markEmailVerified(ctx.database.db, row.tenant_id, row.user_id);
    await dropUnprovenIdentities(ctx.database.db, row.tenant_id, row.user_id);
    return send(
      reply,
      200,
      messagePage(
        page(request),
        'Your e-mail address is verified',
        'You can sign in now.',
        row.return_to ? { href: row.return_to, text: 'Continue to sign in' } : undefined,
      ),
    );
  });

  // GET only asks (a link or an image cannot sign anyone out); the POST carries CSRF.
  scope.get('/sign-out', get, async (request, reply) => {
    const h = await hosted(request, reply);
    if (!h) return reply;
    return send(
      reply,
      200,
      buttonPage({
        ctx: page(request),
        title: 'Sign out',
        message: `Sign out of ${h.tenant.name} on this browser?`,
        action: `/sign-out?${hostedQuery(h)}`,
        csrf: reply.generateCsrf(),
        button: 'Sign out',
      }),
      [h.redirectUrl.origin],
    );
  });

  scope.post('/sign-out', csrfCheck, async (request, reply) => {
    const h = await hosted(request, reply);
    if (!h) return reply;
    const value = request.cookies[sessionCookie(h.tenant.id)];
    if (value) await endBrowserSession(ctx.database.db, value);
    reply.clearCookie(sessionCookie(h.tenant.id), {
      path: '/',
      secure,
      httpOnly: true,
      sameSite: 'lax',
    });
    return reply
      .code(303)
      .header('location', h.redirectUrl.href)
      .header('cache-control', 'no-store')
      .send();
  });
}
