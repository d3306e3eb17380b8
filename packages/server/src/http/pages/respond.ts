import type { FastifyReply } from 'fastify';
import type { Html } from '../../views/html.js';

/** What a page may load or do; everything else is refused (`default-src 'none'`). */
export interface PagePolicy {
  /** Scripts run by nonce (the admin area's one script, the hosted pages' passkey script). */
  scripts?: boolean;
  /** The page's script may call this origin (`connect-src 'self'`: the passkey ceremony). */
  connect?: boolean;
  /** Where images may come from (a tenant's logo): a source expression, or none. */
  img?: string;
  /** Which frames the page may show (the Branding preview), or none. */
  frames?: string;
  /** Origins forms may lead to besides this one (Chrome applies form-action to the redirect after a POST). */
  formTo?: string[];
  /** A preview shown in a frame of the admin area: no forms, framed by this origin only, sandboxed. */
  preview?: boolean;
  /** The Referrer-Policy: the hosted pages leak nothing of the caller's request (`no-referrer`). */
  referrer: 'no-referrer' | 'same-origin';
}

/** The Content-Security-Policy of a page, from what it may do. */
export function contentSecurityPolicy(nonce: string, policy: PagePolicy): string {
  return [
    "default-src 'none'",
    policy.scripts && `script-src 'nonce-${nonce}'`,
    policy.connect && "connect-src 'self'",
    `style-src 'nonce-${nonce}'`,
    `img-src ${policy.img ?? "'none'"}`,
    policy.frames && `frame-src ${policy.frames}`,
    policy.preview
      ? "form-action 'none'"
      : `form-action 'self' ${(policy.formTo ?? []).join(' ')}`.trim(),
    `frame-ancestors ${policy.preview ? "'self'" : "'none'"}`,
    "base-uri 'none'",
    policy.preview && 'sandbox',
  ]
    .filter(Boolean)
    .join('; ');
}

/** An HTML page under its CSP: never cached, never framed by others, in its own browsing context group. */
export function sendHtml(reply: FastifyReply, status: number, page: Html, policy: PagePolicy) {
  reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', contentSecurityPolicy(reply.request.cspNonce, policy))
    .header('referrer-policy', policy.referrer)
    .header('x-frame-options', policy.preview ? 'SAMEORIGIN' : 'DENY');
  if (!policy.preview) reply.header('cross-origin-opener-policy', 'same-origin');
  return reply
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
    .send(page.toString());
}

/** A 303 to `location` after a form (POST, redirect, GET) that leaks nothing through Referer and is never cached. */
export const seeOther = (reply: FastifyReply, location: string) =>
  reply
    .code(303)
    .header('location', location)
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .send();
