import type { FastifyReply, FastifyRequest } from 'fastify';
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

/**
 * A sign-in waiting for its second factor (docs/design.md §13): the token of its pending
 * sign-in, sent only to /sign-in and the pages under it, for the 5 minutes it lives.
 * Not `__Host-` (which needs Path=/) but `__Secure-` under https: never over plain http.
 */
const challengeCookie = (authUrl: string, tenantId: string) =>
  `${isSecure(authUrl) ? '__Secure-' : ''}latchkey_mfa_${tenantId}`;
const CHALLENGE_PATH = '/sign-in';

export const challengeOf = (
  request: FastifyRequest,
  authUrl: string,
  tenantId: string,
): string | undefined => request.cookies[challengeCookie(authUrl, tenantId)];

export function setChallengeCookie(
  reply: FastifyReply,
  authUrl: string,
  tenantId: string,
  value: string,
) {
  reply.setCookie(challengeCookie(authUrl, tenantId), value, {
    path: CHALLENGE_PATH,
    httpOnly: true,
    sameSite: 'lax',
    secure: isSecure(authUrl),
    maxAge: defaults.mfa.challengeMs / 1000,
  });
}

export function clearChallengeCookie(reply: FastifyReply, authUrl: string, tenantId: string) {
  reply.clearCookie(challengeCookie(authUrl, tenantId), {
    path: CHALLENGE_PATH,
    httpOnly: true,
    sameSite: 'lax',
    secure: isSecure(authUrl),
  });
}
