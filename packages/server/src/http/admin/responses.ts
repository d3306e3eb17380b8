import type { FastifyReply, FastifyRequest } from 'fastify';
import { LatchkeyError } from '../../errors/index.js';
import type { AdminSession } from '../../modules/admin/index.js';
import type { Alert, Viewer } from '../../modules/admin/views/kit.js';

export const signedIn = (request: FastifyRequest): AdminSession => {
  if (!request.admin) throw new LatchkeyError('unauthorized', 'Sign in first');
  return request.admin;
};

/** HTML that is never cached nor sniffed, under `csp`, with `headers`. */
const sendHtml = (
  reply: FastifyReply,
  status: number,
  html: string,
  csp: string[],
  headers: Record<string, string>,
) =>
  reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', csp.join('; '))
    .headers(headers)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
    .send(html);

/** An admin page with a strict CSP: scripts and styles by nonce only; `img` for logos, `frames` for previews. */
export function sendAdminPage(
  reply: FastifyReply,
  status: number,
  html: string,
  options: { img?: string; formTo?: string[]; frames?: string } = {},
) {
  const nonce = reply.request.cspNonce;
  return sendHtml(
    reply,
    status,
    html,
    [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src 'nonce-${nonce}'`,
      `img-src ${options.img ?? "'none'"}`,
      `frame-src ${options.frames ?? "'none'"}`,
      // Chrome applies form-action to the redirect after a POST too.
      `form-action 'self' ${(options.formTo ?? []).join(' ')}`.trim(),
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ],
    {
      'referrer-policy': 'same-origin',
      'x-frame-options': 'DENY',
      'cross-origin-opener-policy': 'same-origin',
    },
  );
}

/**
 * A preview shown in a frame of an admin page: framed by the admin area only
 * (`frame-ancestors 'self'`: the admin area is this origin), and sandboxed (no script
 * runs, no form is sent, an opaque origin) even if the frame's `sandbox` attribute were dropped.
 */
export function sendPreview(reply: FastifyReply, status: number, html: string, img?: string) {
  return sendHtml(
    reply,
    status,
    html,
    [
      "default-src 'none'",
      `style-src 'nonce-${reply.request.cspNonce}'`,
      `img-src ${img ?? "'none'"}`,
      "form-action 'none'",
      "frame-ancestors 'self'",
      "base-uri 'none'",
      'sandbox',
    ],
    { 'referrer-policy': 'no-referrer', 'x-frame-options': 'SAMEORIGIN' },
  );
}

/** What every signed-in page's layout needs. */
export const viewer = (request: FastifyRequest, reply: FastifyReply): Viewer => {
  const { admin } = signedIn(request);
  return {
    email: admin.email,
    superuser: admin.superuser,
    nonce: request.cspNonce,
    csrf: reply.generateCsrf(),
  };
};

/** A 303 back to a page after a change (POST, redirect, GET). */
export const seeOther = (reply: FastifyReply, location: string) =>
  reply.code(303).header('location', location).header('cache-control', 'no-store').send();

/** Field errors of a service's validation_failed, as an alert; anything else is thrown on. */
export function alertFor(error: unknown): Alert {
  if (
    error instanceof LatchkeyError &&
    (error.status === 422 || error.status === 409 || error.status === 400)
  ) {
    return {
      kind: 'error',
      message: error.errors?.length ? 'Please correct the following:' : error.message,
      details: error.errors?.map((f) => f.message),
    };
  }
  throw error;
}

/** The fixed notices a change may lead back with (`?done=…`); nothing else is echoed. */
const NOTICES: Record<string, string> = {
  saved: 'Saved.',
  created: 'Created.',
  revoked: 'The key is revoked.',
  disabled: 'The user is disabled and signed out everywhere.',
  enabled: 'The user is enabled.',
  deleted: 'The user is deleted.',
  'signed-out': 'The user is signed out everywhere.',
  'session-revoked': 'The session is revoked.',
  'verification-sent': 'A verification link was sent.',
  'reset-sent': 'A password-reset link was sent.',
};

export const noticeOf = (request: FastifyRequest): Alert | undefined => {
  const done = (request.query as { done?: string }).done;
  const message = done ? NOTICES[done] : undefined;
  return message ? { kind: 'notice', message } : undefined;
};
