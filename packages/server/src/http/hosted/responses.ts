import type { FastifyReply, FastifyRequest } from 'fastify';
import { shownLogo, type Tenant } from '../../modules/tenants/index.js';
import { messagePage, type PageContext } from '../../views/hosted.js';
import type { Html } from '../../views/html.js';
import { sendHtml } from '../pages/respond.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant whose branding this page shows, once known. */
    pageTenant: Tenant | undefined;
  }
}

export const pageContext = (request: FastifyRequest): PageContext => ({
  tenant: request.pageTenant,
  nonce: request.cspNonce,
});

/**
 * A hosted page: the tenant's logo, forms that may lead to `formTo`, and no script, or
 * (`passkeys`) the passkey script, which calls this origin.
 */
export function sendPage(
  reply: FastifyReply,
  status: number,
  page: Html,
  formTo: string[] = [],
  passkeys = false,
) {
  // Only a logo its environment allows (an http://localhost one on development tenants only).
  const tenant = reply.request.pageTenant;
  const logo = tenant && shownLogo(tenant);
  return sendHtml(reply, status, page, {
    img: logo ? new URL(logo).origin : undefined,
    formTo,
    scripts: passkeys,
    connect: passkeys,
    referrer: 'no-referrer',
  });
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
