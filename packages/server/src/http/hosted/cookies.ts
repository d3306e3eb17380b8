import { hkdfSync } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { defaults } from '../../config/defaults.js';

/** Whether `{auth_url}` is https: the cookies are then Secure and `__Host-` prefixed. */
export const isSecure = (authUrl: string) => authUrl.startsWith('https:');

// __Host- (RFC 6265bis section 4.1.3.2): Secure, Path=/, no Domain; only possible over https.
const prefix = (authUrl: string) => (isSecure(authUrl) ? '__Host-' : '');

/**
 * The hosted page's own session: one cookie per tenant, so that signing in to one
 * application never signs the browser out of another.
 */
export const browserCookie = (authUrl: string, tenantId: string) =>
  `${prefix(authUrl)}latchkey_session_${tenantId}`;

/** The state of a social sign-in flow, bound to the browser that started it. */
export const flowCookie = (authUrl: string, provider: string) =>
  `${prefix(authUrl)}latchkey_oauth_${provider}`;

export const csrfCookie = (authUrl: string) => `${prefix(authUrl)}latchkey_csrf`;

/** The key that signs the hosted pages' cookies, derived from the master secret. */
export const cookieSecret = (secret: string) =>
  Buffer.from(hkdfSync('sha256', secret, 'latchkey', 'latchkey cookies v1', 32)).toString('base64');

export function setBrowserCookie(
  reply: FastifyReply,
  authUrl: string,
  tenantId: string,
  value: string,
) {
  reply.setCookie(browserCookie(authUrl, tenantId), value, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: isSecure(authUrl),
    maxAge: defaults.hosted.browserSessionMs / 1000,
  });
}

export function clearBrowserCookie(reply: FastifyReply, authUrl: string, tenantId: string) {
  reply.clearCookie(browserCookie(authUrl, tenantId), {
    path: '/',
    secure: isSecure(authUrl),
    httpOnly: true,
    sameSite: 'lax',
  });
}
