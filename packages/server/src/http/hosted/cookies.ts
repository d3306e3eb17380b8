import type { FastifyReply } from 'fastify';
import { defaults } from '../../config/defaults.js';
import { cookieName, isSecure } from '../pages/cookies.js';

/**
 * The hosted page's own session: one cookie per tenant, so that signing in to one
 * application never signs the browser out of another.
 */
export const browserCookie = (authUrl: string, tenantId: string) =>
  cookieName(authUrl, `latchkey_session_${tenantId}`);

/** The state of a social sign-in flow, bound to the browser that started it. */
export const flowCookie = (authUrl: string, provider: string) =>
  cookieName(authUrl, `latchkey_oauth_${provider}`);

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
