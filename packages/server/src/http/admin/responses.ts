import type { FastifyReply, FastifyRequest } from 'fastify';
import { LatchkeyError } from '../../errors/index.js';
import type { AdminSession } from '../../modules/admin/index.js';
import type { Viewer } from '../../views/admin/layout.js';
import type { Html } from '../../views/html.js';
import type { Alert } from '../../views/kit.js';
import { formField } from '../form-body.js';
import { sendHtml } from '../pages/respond.js';

export const signedIn = (request: FastifyRequest): AdminSession => {
  if (!request.admin) throw new LatchkeyError('unauthorized', 'Sign in first');
  return request.admin;
};

/** An admin page: scripts and styles by nonce only; `img` for logos, `frames` for previews. */
export const sendAdminPage = (
  reply: FastifyReply,
  status: number,
  page: Html,
  options: { img?: string; formTo?: string[]; frames?: string } = {},
) => sendHtml(reply, status, page, { ...options, scripts: true, referrer: 'same-origin' });

/**
 * A preview shown in a frame of an admin page: framed by the admin area only
 * (`frame-ancestors 'self'`: the admin area is this origin), and sandboxed (no script
 * runs, no form is sent, an opaque origin) even if the frame's `sandbox` attribute were dropped.
 */
export const sendPreview = (reply: FastifyReply, status: number, page: Html, img?: string) =>
  sendHtml(reply, status, page, { img, preview: true, referrer: 'no-referrer' });

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
  'app-created': 'The application is created.',
  'app-deleted': 'The application is deleted: its client ID no longer works.',
  'endpoint-deleted': 'The endpoint is deleted: no more events are sent to it.',
  'endpoint-disabled': 'The endpoint is disabled: no events are sent to it until it is enabled.',
  'endpoint-enabled': 'The endpoint is enabled: events from now on are sent to it.',
  'delivery-resent': 'The event is sent again, with the same webhook-id: see the newest delivery.',
  'publishable-created': 'A new publishable key is created: it is listed under Publishable keys.',
  disabled: 'The user is disabled and signed out everywhere.',
  enabled: 'The user is enabled.',
  deleted: 'The user is deleted.',
  'signed-out': 'The user is signed out everywhere.',
  'session-revoked': 'The session is revoked.',
  'verification-sent': 'A verification link was sent.',
  'reset-sent': 'A password-reset link was sent.',
  'factor-reset':
    'The factor is removed. Under a Required policy the user sets up a new one at their next sign-in.',
};

export const noticeOf = (request: FastifyRequest): Alert | undefined => {
  const done = formField(request.query, 'done', 40);
  const message = done ? NOTICES[done] : undefined;
  return message ? { kind: 'notice', message } : undefined;
};
