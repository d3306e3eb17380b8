import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  checkHostedRequest,
  type HostedRequest,
  messagePage,
  Refusal,
  signInBrowser,
} from '../../modules/hosted/index.js';
import type { User } from '../../modules/users/index.js';
import { type AppContext, hostedDeps } from '../context.js';
import { isRecord } from '../form-body.js';
import { pageErrorOf, registerFormScope } from '../form-scope.js';
import { browserCookie, csrfCookie, setBrowserCookie } from './cookies.js';
import { errorPage, pageContext, seeOther, sendPage } from './responses.js';

/** Cookies, CSRF, form bodies, the CSP nonce and error pages for the hosted pages' scope. */
export async function setUpHostedScope(scope: FastifyInstance, ctx: AppContext) {
  await registerFormScope(scope, ctx, { name: csrfCookie(ctx.authUrl), sameSite: 'lax' });
  scope.decorateRequest('pageTenant', undefined);
  scope.setErrorHandler((error, request, reply) => {
    const { formExpired, status } = pageErrorOf(error);
    if (formExpired)
      return errorPage(
        request,
        reply,
        403,
        'This form has expired',
        'Go back, reload the page and try again.',
      );
    if (status && status >= 400 && status < 500)
      return errorPage(
        request,
        reply,
        status,
        'Something is wrong with this request',
        'Go back and try again.',
      );
    request.log.error({ err: error }, 'hosted page failed');
    return errorPage(request, reply, 500, 'Something went wrong', 'Please try again in a moment.');
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
    sendPage(
      reply,
      400,
      messagePage(
        pageContext(request),
        'This sign-in link does not work',
        error.message,
        undefined,
        'error',
      ),
    );
    return undefined;
  }
}

/** The browser's current hosted-session cookie for the request's tenant. */
export const currentBrowserCookie = (ctx: AppContext, request: FastifyRequest, h: HostedRequest) =>
  request.cookies[browserCookie(ctx.authUrl, h.tenant.id)];

/** Sends a signed-in browser back to the caller with its new hosted-session cookie. */
export function redirectSignedIn(
  ctx: AppContext,
  reply: FastifyReply,
  h: HostedRequest,
  signedIn: { location: string; cookie: string },
) {
  setBrowserCookie(reply, ctx.authUrl, h.tenant.id, signedIn.cookie);
  return seeOther(reply, signedIn.location);
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
  const signedIn = await signInBrowser(hostedDeps(ctx), h, user, {
    ip: request.ip,
    previousCookie: currentBrowserCookie(ctx, request, h),
    returning,
  });
  return redirectSignedIn(ctx, reply, h, signedIn);
}
