import { hkdfSync, randomBytes } from 'node:crypto';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LatchkeyError } from '../../errors/index.js';
import {
  BROWSER_SESSION_MS,
  checkHostedRequest,
  completeSignIn,
  createEmailToken,
  endBrowserSession,
  type HostedRequest,
  hostedQuery,
  messagePage,
  type PageContext,
  Refusal,
  startBrowserSession,
} from '../../modules/hosted/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import type { User } from '../../modules/users/index.js';
import type { AppContext } from '../context.js';
import { parseForm } from '../form-body.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The CSP nonce of this page. */
    cspNonce: string;
  }
}

export type Form = Record<string, string | undefined>;

export const field = (body: unknown, name: string): string =>
  typeof (body as Form | undefined)?.[name] === 'string' ? ((body as Form)[name] as string) : '';

/**
 * What the hosted pages share: cookies, CSRF, security headers, the page context, the
 * hosted request, signing a browser in, mail, and limits. Built once per app.
 */
export async function createKit(scope: FastifyInstance, ctx: AppContext) {
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
    return redirectSignedIn(reply, h, await completeSignIn(hostedDeps, h, user, request.ip), value);
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
      error instanceof LatchkeyError ? error.status : (error as { statusCode?: number }).statusCode;
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

  const setTenant = (request: FastifyRequest, tenant: Tenant) => tenants.set(request, tenant);
  return {
    secure,
    sessionCookie,
    hostedDeps,
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
  };
}

export type Kit = Awaited<ReturnType<typeof createKit>>;
