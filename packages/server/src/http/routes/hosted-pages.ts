import { hkdfSync, randomBytes } from 'node:crypto';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LatchkeyError } from '../../errors/index.js';
import {
  BROWSER_SESSION_MS,
  browserSessionUser,
  buttonPage,
  checkHostedRequest,
  completeSignIn,
  confirmPage,
  createEmailToken,
  endBrowserSession,
  endUserBrowserSessions,
  forgotPage,
  type HostedRequest,
  hostedQuery,
  messagePage,
  type PageContext,
  peekEmailToken,
  Refusal,
  resetPage,
  signInPage,
  signUpPage,
  startBrowserSession,
  useEmailToken,
  voidEmailTokens,
} from '../../modules/hosted/index.js';
import {
  claimFlow,
  enabledProviders,
  finishFlow,
  isProviderId,
  SocialRefusal,
  startFlow,
  userForProfile,
} from '../../modules/social/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import {
  checkPassword,
  createUser,
  findUserByEmail,
  getUser,
  markEmailVerified,
  setPasswordHash,
  type User,
  verifyCredentials,
} from '../../modules/users/index.js';
import type { AppContext } from '../context.js';
import { parseForm } from '../form-body.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The CSP nonce of this page. */
    cspNonce: string;
  }
}

type Form = Record<string, string | undefined>;

const field = (body: unknown, name: string): string =>
  typeof (body as Form | undefined)?.[name] === 'string' ? ((body as Form)[name] as string) : '';

/**
 * The hosted pages of reference section 4.3: sign-in, sign-up, password reset, e-mail
 * verification. They work without JavaScript (there is none), so the CSP forbids scripts.
 */
export function hostedPageRoutes(app: FastifyInstance, ctx: AppContext) {
  const secure = ctx.authUrl.startsWith('https:');
  // __Host- (RFC 6265bis section 4.1.3.2): Secure, Path=/, no Domain; only possible over https.
  // One cookie per tenant: signing in to one application never signs the browser out of another.
  const sessionCookie = (tenantId: string) =>
    `${secure ? '__Host-' : ''}latchkey_session_${tenantId}`;
  const csrfCookie = secure ? '__Host-latchkey_csrf' : 'latchkey_csrf';
  const cookieSecret = Buffer.from(
    hkdfSync('sha256', ctx.config.secret, 'latchkey', 'latchkey cookies v1', 32),
  );
  const hostedDeps = { db: ctx.database.db, keys: ctx.keys, sessions: ctx.sessions };
  const signInDeps = {
    db: ctx.database.db,
    hasher: ctx.hasher,
    limiter: ctx.limiter,
    policy: ctx.signInPolicy,
  };

  app.register(async (scope) => {
    await scope.register(cookie, { secret: cookieSecret.toString('base64') });
    await scope.register(csrf, {
      sessionPlugin: '@fastify/cookie',
      cookieKey: csrfCookie,
      cookieOpts: { path: '/', sameSite: 'lax', httpOnly: true, secure, signed: true },
    });
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 16 * 1024 },
      parseForm,
    );
    scope.decorateRequest('cspNonce', '');
    scope.addHook('onRequest', async (request) => {
      request.cspNonce = randomBytes(16).toString('base64');
    });

    /** Security headers of every hosted page; `formTo` is where forms may lead. */
    function send(reply: FastifyReply, status: number, html: string, formTo: string[] = []) {
      const nonce = reply.request.cspNonce;
      const logo = ctxTenant(reply.request)?.branding.logoUrl;
      const imgSrc = logo ? new URL(logo).origin : "'none'";
      return reply
        .code(status)
        .header('content-type', 'text/html; charset=utf-8')
        .header(
          'content-security-policy',
          [
            "default-src 'none'",
            `style-src 'nonce-${nonce}'`,
            `img-src ${imgSrc}`,
            // Chrome applies form-action to the redirect after a POST too.
            `form-action 'self' ${formTo.join(' ')}`.trim(),
            "frame-ancestors 'none'",
            "base-uri 'none'",
          ].join('; '),
        )
        .header('referrer-policy', 'no-referrer')
        .header('x-content-type-options', 'nosniff')
        .header('x-frame-options', 'DENY')
        .header('cross-origin-opener-policy', 'same-origin')
        .header('cache-control', 'no-store')
        .send(html);
    }

    const tenants = new WeakMap<FastifyRequest, Tenant>();
    const ctxTenant = (request: FastifyRequest) => tenants.get(request);
    const page = (request: FastifyRequest): PageContext => ({
      tenant: ctxTenant(request),
      nonce: request.cspNonce,
    });

    /** Resolves the hosted request, or answers with a refusal page (never a redirect). */
    async function hosted(
      request: FastifyRequest,
      reply: FastifyReply,
      query: Record<string, unknown> = request.query as Record<string, unknown>,
    ): Promise<HostedRequest | undefined> {
      try {
        const h = await checkHostedRequest(hostedDeps, query);
        tenants.set(request, h.tenant);
        return h;
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        send(
          reply,
          400,
          messagePage(
            page(request),
            'This sign-in link does not work',
            error.message,
            undefined,
            'error',
          ),
        );
        return undefined;
      }
    }

    function redirectSignedIn(
      reply: FastifyReply,
      h: HostedRequest,
      location: string,
      cookieValue: string,
    ) {
      reply.setCookie(sessionCookie(h.tenant.id), cookieValue, {
        path: '/',
        httpOnly: true,
        sameSite: 'lax',
        secure,
        maxAge: BROWSER_SESSION_MS / 1000,
      });
      return reply
        .code(303)
        .header('location', location)
        .header('referrer-policy', 'no-referrer')
        .header('cache-control', 'no-store')
        .send();
    }

    /** Signs the browser in anew (a fresh cookie: no fixation) and sends it back to the caller. */
    async function finish(
      request: FastifyRequest,
      reply: FastifyReply,
      h: HostedRequest,
      user: User,
    ) {
      const old = request.cookies[sessionCookie(h.tenant.id)];
      if (old) await endBrowserSession(ctx.database.db, old);
      const value = await startBrowserSession(ctx.database.db, h.tenant.id, user.id);
      return redirectSignedIn(
        reply,
        h,
        await completeSignIn(hostedDeps, h, user, request.ip),
        value,
      );
    }

    async function sendLink(
      h: HostedRequest | undefined,
      tenant: Tenant,
      user: User,
      purpose: 'verify' | 'reset',
    ) {
      const returnTo = h ? `/sign-in?${hostedQuery(h)}` : null;
      const token = await createEmailToken(ctx.database.db, tenant.id, user.id, purpose, returnTo);
      const path = purpose === 'verify' ? 'verify-email' : 'reset-password';
      const link = `${ctx.authUrl}/${path}?token=${token}`;
      await ctx.mailer.send({
        tenantId: tenant.id,
        to: user.email,
        subject:
          purpose === 'verify'
            ? `Verify your e-mail for ${tenant.name}`
            : `Reset your ${tenant.name} password`,
        text:
          purpose === 'verify'
            ? `Verify your e-mail address for ${tenant.name}:\n\n${link}\n\nThe link works once, for 24 hours.`
            : `Someone asked to reset the password of your ${tenant.name} account. To choose a new one:\n\n${link}\n\nThe link works once, for one hour. If it was not you, ignore this mail.`,
      });
    }

    /** Mail is limited per client address and per recipient (no flooding one mailbox). */
    async function addressAllowed(request: FastifyRequest): Promise<boolean> {
      const decision = await ctx.limiter.consume(`mail:${request.ip}`, [
        { name: 'mail', quota: 10, seconds: 15 * 60 },
      ]);
      return decision.allowed;
    }
    async function recipientAllowed(userId: string): Promise<boolean> {
      const decision = await ctx.limiter.consume(`mail-user:${userId}`, [
        { name: 'mail-user', quota: 3, seconds: 15 * 60 },
      ]);
      return decision.allowed;
    }
    async function mailAllowed(request: FastifyRequest, userId: string): Promise<boolean> {
      return (await addressAllowed(request)) && (await recipientAllowed(userId));
    }

    /** Each sign-up costs an argon2 hash: at most 20 per client address per 15 minutes. */
    async function signUpAllowed(request: FastifyRequest): Promise<boolean> {
      const decision = await ctx.limiter.consume(`sign-up:${request.ip}`, [
        { name: 'sign-up', quota: 20, seconds: 15 * 60 },
      ]);
      return decision.allowed;
    }

    scope.setErrorHandler((error, request, reply) => {
      const code = (error as { code?: string }).code ?? '';
      if (code.startsWith('FST_CSRF')) {
        return send(
          reply,
          403,
          messagePage(
            page(request),
            'This form has expired',
            'Go back, reload the page and try again.',
            undefined,
            'error',
          ),
        );
      }
      const status =
        error instanceof LatchkeyError
          ? error.status
          : (error as { statusCode?: number }).statusCode;
      if (status && status >= 400 && status < 500) {
        return send(
          reply,
          status,
          messagePage(
            page(request),
            'Something is wrong with this request',
            'Go back and try again.',
            undefined,
            'error',
          ),
        );
      }
      request.log.error({ err: error }, 'hosted page failed');
      return send(
        reply,
        500,
        messagePage(
          page(request),
          'Something went wrong',
          'Please try again in a moment.',
          undefined,
          'error',
        ),
      );
    });

    /** The password forms of a tenant that turned password sign-in off. */
    const passwordOff = (request: FastifyRequest, reply: FastifyReply) =>
      send(
        reply,
        403,
        messagePage(
          page(request),
          'Password sign-in is off',
          'This application signs users in with another method.',
          undefined,
          'error',
        ),
      );

    const csrfCheck = { preHandler: scope.csrfProtection, schema: { hide: true } };
    const get = { schema: { hide: true } };

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
        if (error.code === 'rate_limited')
          return again(429, `Too many attempts. ${error.message}.`);
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
      const { getTenant } = await import('../../modules/tenants/index.js');
      tenants.set(request, await getTenant(ctx.database.db, tenantId));
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
        confirmPage({
          ctx: page(request),
          title: 'Verify your e-mail',
          message: `Confirm that ${user.email} is your address.`,
          action: '/verify-email',
          token,
          csrf: reply.generateCsrf(),
          button: 'Verify my e-mail address',
        }),
      );
    });

    scope.post('/verify-email', csrfCheck, async (request, reply) => {
      const row = await useEmailToken(ctx.database.db, field(request.body, 'token'), 'verify');
      if (!row) return badLink(request, reply);
      await linkTenant(request, row.tenant_id);
      await markEmailVerified(ctx.database.db, row.tenant_id, row.user_id);
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

    // ----- Social sign-in (reference section 1): start, and the provider's answer -----
    const flowDeps = {
      db: ctx.database.db,
      box: ctx.box,
      authUrl: ctx.authUrl,
      providerEndpoints: ctx.config.providerEndpoints,
    };
    const flowCookie = (provider: string) => `latchkey_oauth_${provider}`;
    const socialRefusal = (
      request: FastifyRequest,
      reply: FastifyReply,
      message: string,
      back?: string,
    ) =>
      send(
        reply,
        400,
        messagePage(
          page(request),
          'Sign-in did not work',
          message,
          back ? { href: back, text: 'Back to sign in' } : undefined,
          'error',
        ),
      );

    scope.get('/oauth/:provider/start', get, async (request, reply) => {
      const { provider } = request.params as { provider: string };
      const q = field(request.query, 'q');
      const h = await hosted(request, reply, Object.fromEntries(new URLSearchParams(q)));
      if (!h) return reply;
      const back = `/sign-in?${hostedQuery(h)}`;
      if (!isProviderId(provider))
        return socialRefusal(request, reply, 'There is no such sign-in provider.', back);
      try {
        const { url, state } = await startFlow(flowDeps, h.tenant, provider, hostedQuery(h));
        // The state is bound to this browser: an answer arriving in another browser is
        // refused (login CSRF). Apple answers with a cross-site POST, which only carries a
        // SameSite=None cookie.
        reply.setCookie(flowCookie(provider), state, {
          path: `/oauth/${provider}/callback`,
          httpOnly: true,
          maxAge: 600,
          sameSite: provider === 'apple' ? 'none' : 'lax',
          secure: provider === 'apple' ? true : secure,
        });
        return reply.code(303).header('location', url).header('cache-control', 'no-store').send();
      } catch (error) {
        if (error instanceof SocialRefusal)
          return socialRefusal(request, reply, error.message, back);
        throw error;
      }
    });

    async function callback(request: FastifyRequest, reply: FastifyReply, params: URLSearchParams) {
      const { provider } = request.params as { provider: string };
      if (!isProviderId(provider))
        return socialRefusal(request, reply, 'There is no such sign-in provider.');
      const bound = request.cookies[flowCookie(provider)];
      reply.clearCookie(flowCookie(provider), { path: `/oauth/${provider}/callback` });
      let flow: Awaited<ReturnType<typeof claimFlow>>;
      try {
        flow = await claimFlow(flowDeps, provider, params.get('state'), bound);
      } catch (error) {
        if (error instanceof SocialRefusal) return socialRefusal(request, reply, error.message);
        throw error;
      }
      const h = await hosted(
        request,
        reply,
        Object.fromEntries(new URLSearchParams(flow.hosted_query)),
      );
      if (!h) return reply;
      const back = `/sign-in?${hostedQuery(h)}`;
      try {
        const profile = await finishFlow(flowDeps, h.tenant, provider, flow, params, (error) =>
          request.log.warn({ err: error, provider }, 'social sign-in failed at the provider'),
        );
        const user = await userForProfile(ctx.database.db, h.tenant, provider, profile);
        return await finish(request, reply, h, user);
      } catch (error) {
        if (error instanceof SocialRefusal)
          return socialRefusal(request, reply, error.message, back);
        throw error;
      }
    }

    scope.get('/oauth/:provider/callback', get, (request, reply) =>
      callback(request, reply, new URLSearchParams(request.url.split('?')[1] ?? '')),
    );
    // Apple's response_mode=form_post (no CSRF token: the state cookie binds it instead).
    scope.post('/oauth/:provider/callback', get, (request, reply) =>
      callback(request, reply, new URLSearchParams((request.body ?? {}) as Record<string, string>)),
    );

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
  });
}
