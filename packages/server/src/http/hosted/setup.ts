import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import {
  type BrowserOutcome,
  checkHostedRequest,
  type HostedRequest,
  hostedQuery,
  Refusal,
  signInBrowser,
} from '../../modules/hosted/index.js';
import type { User } from '../../modules/users/index.js';
import { refusedLinkPage } from '../../views/hosted.js';
import { type AppContext, hostedDeps } from '../context.js';
import { formField, isRecord } from '../form-body.js';
import { seeOther } from '../pages/respond.js';
import { registerPageScope } from '../pages/scope.js';
import { browserCookie, setBrowserCookie, setChallengeCookie } from './cookies.js';
import { errorPage, pageContext, passwordOff, sendPage } from './responses.js';

/** The hosted pages' scope: the page scope (cookies, CSRF, forms, nonce, error pages) in the tenant's look. */
export async function setUpHostedScope(scope: FastifyInstance, ctx: AppContext) {
  scope.decorateRequest('pageTenant', undefined);
  await registerPageScope(scope, ctx, {
    csrfCookie: 'latchkey_csrf',
    sameSite: 'lax',
    area: 'hosted',
    errorPage: (request, reply, status, title, message) =>
      errorPage(request, reply, status, title, message),
  });
}

/** Resolves the hosted request, or answers with a refusal page (never a redirect). */
export async function resolveHosted(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  query: Record<string, unknown> = isRecord(request.query) ? request.query : {},
): Promise<HostedRequest | undefined> {
  try {
    const h = await checkHostedRequest(ctx, query);
    request.pageTenant = h.tenant;
    return h;
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    request.pageTenant = error.tenant;
    const tenantId = error.tenant?.id ?? '';
    sendPage(
      reply,
      400,
      refusedLinkPage(pageContext(request), {
        message: error.message,
        back: referringOrigin(request.headers.referer, ctx.authUrl),
        allow:
          error.originToAllow && error.tenant?.environment === 'development'
            ? {
                origin: error.originToAllow,
                tenantId,
                adminUrl: `${ctx.authUrl}/admin/tenants/${tenantId}`,
              }
            : undefined,
      }),
    );
    return undefined;
  }
}

/** The page the browser came from (its origin, as browsers send it), unless it is ours. */
function referringOrigin(referer: string | undefined, authUrl: string): string | undefined {
  if (!referer || !URL.canParse(referer)) return undefined;
  const url = new URL(referer);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  return url.origin === new URL(authUrl).origin ? undefined : `${url.origin}/`;
}

/**
 * The post of a password form (sign-in, sign-up): its hosted request and the sign-in input,
 * or undefined once answered (a refused request, or a tenant without password sign-in).
 */
export async function passwordPost(ctx: AppContext, request: FastifyRequest, reply: FastifyReply) {
  const h = await resolveHosted(ctx, request, reply);
  if (!h) return undefined;
  if (!h.tenant.passwordEnabled) {
    await passwordOff(request, reply);
    return undefined;
  }
  const input = {
    email: formField(request.body, 'email', defaults.email.maxLength),
    password: formField(request.body, 'password', defaults.password.maxLength),
    ip: request.ip,
    userAgent: request.headers['user-agent'],
    previousCookie: currentBrowserCookie(ctx, request, h),
  };
  return { h, input };
}

/** The browser's current hosted-session cookie for the request's tenant. */
export const currentBrowserCookie = (ctx: AppContext, request: FastifyRequest, h: HostedRequest) =>
  request.cookies[browserCookie(ctx.authUrl, h.tenant.id)];

/**
 * `return_to=account`: a sign-in that /account asked for (none, or one too old to change
 * factors) goes back there instead of to the caller. Only that one path: no open redirect.
 */
const returnsToAccount = (request: FastifyRequest) =>
  formField(request.query, 'return_to') === 'account';

/** The query of the sign-in pages and their forms: the hosted request, and `return_to`. */
export const signInQuery = (request: FastifyRequest, h: HostedRequest) =>
  returnsToAccount(request) ? `${hostedQuery(h)}&return_to=account` : hostedQuery(h);

/** Where a browser signed in by this request goes: the caller (with tokens), or /account. */
export const signedInLocation = (request: FastifyRequest, h: HostedRequest, location: string) =>
  returnsToAccount(request) ? `/account?${hostedQuery(h)}` : location;

/**
 * Sends a signed-in browser back to the caller with its new hosted-session cookie; or, when
 * a second step is due (docs/design.md §13), to that step's page with only the pending
 * sign-in's cookie.
 */
export function redirectSignedIn(
  ctx: AppContext,
  reply: FastifyReply,
  h: HostedRequest,
  outcome: BrowserOutcome,
) {
  if ('next' in outcome) {
    setChallengeCookie(reply, ctx.authUrl, h.tenant.id, outcome.challenge);
    return seeOther(reply, `/sign-in/${outcome.next}?${signInQuery(reply.request, h)}`);
  }
  setBrowserCookie(reply, ctx.authUrl, h.tenant.id, outcome.cookie);
  return seeOther(reply, signedInLocation(reply.request, h, outcome.location));
}

/**
 * Signs the browser in for a user who proved who they are (or, `returning`, whose live
 * hosted session did), and sends it back.
 */
export async function finishSignIn(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  h: HostedRequest,
  user: User,
  returning = false,
) {
  const signedIn = await signInBrowser(
    hostedDeps(ctx),
    h,
    user,
    {
      ip: request.ip,
      userAgent: request.headers['user-agent'],
      previousCookie: currentBrowserCookie(ctx, request, h),
      returning,
    },
    // No authentication happens here: a returning browser's session keeps its own `amr`.
    undefined,
  );
  return redirectSignedIn(ctx, reply, h, signedIn);
}
