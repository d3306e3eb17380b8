import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { messagePage, type PageContext } from '../../modules/hosted/index.js';
import type { Tenant } from '../../modules/tenants/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The CSP nonce of this page. */
    cspNonce: string;
    /** The tenant whose branding this page shows, once known. */
    pageTenant: Tenant | undefined;
  }
}

/** Route options of a page (no CSRF check: it changes nothing). Pages stay out of the API document. */
export const PAGE = { schema: { hide: true } } as const;

/** Route options of a form post: the CSRF token is checked first. */
export const formRoute = (scope: FastifyInstance) => ({
  preHandler: scope.csrfProtection,
  schema: { hide: true },
});

export const pageContext = (request: FastifyRequest): PageContext => ({
  tenant: request.pageTenant,
  nonce: request.cspNonce,
});

/** An HTML page with the security headers of every hosted page; `formTo` is where forms may lead. */
export function sendPage(reply: FastifyReply, status: number, html: string, formTo: string[] = []) {
  const nonce = reply.request.cspNonce;
  const logo = reply.request.pageTenant?.branding.logoUrl;
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

/** A page that says something went wrong, and what to do. */
export const errorPage = (
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  title: string,
  message: string,
  back?: { href: string; text: string },
) => sendPage(reply, status, messagePage(pageContext(request), title, message, back, 'error'));

/** The password forms of a tenant that turned password sign-in off. */
export const passwordOff = (request: FastifyRequest, reply: FastifyReply) =>
  errorPage(
    request,
    reply,
    403,
    'Password sign-in is off',
    'This application signs users in with another method.',
  );

/** A 303 to `location` that leaks nothing through Referer and is never cached. */
export const seeOther = (reply: FastifyReply, location: string) =>
  reply
    .code(303)
    .header('location', location)
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .send();
