import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import { type HostedRequest, hostedQuery } from '../../modules/hosted/index.js';
import { listPasskeys, relyingPartyOf } from '../../modules/mfa/index.js';
import { browserSessionBinding, browserSessionUser } from '../../modules/sessions/index.js';
import type { User } from '../../modules/users/index.js';
import { accountPage, passkeySection } from '../../views/hosted-account.js';
import type { Alert } from '../../views/kit.js';
import type { AppContext } from '../context.js';
import { formField } from '../form-body.js';
import { seeOther } from '../pages/respond.js';
import { PAGE } from '../pages/scope.js';
import { secondFactorSections } from './account-factor-pages.js';
import { pageContext, sendPage } from './responses.js';
import { currentBrowserCookie, resolveHosted } from './setup.js';

/** The browser signed in to the account page: its user, and whether it may change factors. */
export interface AccountBrowser {
  user: User;
  /** Signed in within defaults.mfa.stepUpMs: factors may be added or removed. */
  recent: boolean;
  /** When the hosted session began: this browser's last sign-in. */
  signedInAt: number;
  /** The hosted session's cookie value and its API session: kept by a password change. */
  cookie: string;
  sessionId: string | undefined;
}

/** The user of this browser's live hosted session on the request's tenant, if any. */
export async function accountBrowser(
  ctx: AppContext,
  request: FastifyRequest,
  h: HostedRequest,
): Promise<AccountBrowser | undefined> {
  const db = ctx.database.db;
  const cookie = currentBrowserCookie(ctx, request, h);
  if (!cookie) return undefined;
  const bound = await browserSessionBinding(db, h.tenant.id, cookie);
  const user = bound && (await browserSessionUser(db, h.tenant.id, cookie));
  if (!bound || !user) return undefined;
  // The hosted session starts at each sign-in (a new cookie), so its start is the last one.
  return {
    user,
    recent: Date.now() - bound.startedAt <= defaults.mfa.stepUpMs,
    signedInAt: bound.startedAt,
    cookie,
    sessionId: bound.sessionId,
  };
}

/** The sign-in page that brings the browser back to /account. */
export const accountSignIn = (h: HostedRequest) => `/sign-in?${hostedQuery(h)}&return_to=account`;

/** What the account page says after a change (`done` in its query). */
const DONE = new Map([
  ['passkey-added', 'Your passkey was added.'],
  ['passkey-renamed', 'The passkey was renamed.'],
  ['passkey-removed', 'The passkey was removed.'],
  ['totp-added', 'Your authenticator app is set up.'],
  ['factor-removed', 'The authenticator app was removed.'],
  [
    'password-changed',
    'Your password is changed, and every other browser and app signed in to your account is signed out.',
  ],
]);

/** The account page of a signed-in browser, one section per kind of factor. */
export async function showAccount(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  h: HostedRequest,
  browser: AccountBrowser,
  status = 200,
  alert?: Alert,
) {
  const query = hostedQuery(h);
  const csrf = reply.generateCsrf();
  const common = { query, csrf, recent: browser.recent };
  const passkeys = relyingPartyOf(ctx.authUrl, h.tenant) !== undefined;
  // The script runs the one ceremony here, adding a passkey: only a recent sign-in may.
  const script = passkeys && browser.recent;
  const sections = [];
  if (passkeys)
    sections.push(
      passkeySection(common, await listPasskeys(ctx.database.db, h.tenant.id, browser.user.id)),
    );
  sections.push(...(await secondFactorSections(ctx, h, browser, common)));
  return sendPage(
    reply,
    status,
    accountPage({
      ctx: pageContext(request),
      ...common,
      email: browser.user.email,
      back: h.redirectUrl.href,
      alert,
      sections,
      script,
    }),
    [],
    script,
  );
}

/** /account (docs/design.md §13): reached with the hosted page's own session. */
export function accountPages(scope: FastifyInstance, ctx: AppContext) {
  scope.get('/account', PAGE, async (request, reply) => {
    const h = await resolveHosted(ctx, request, reply);
    if (!h) return reply;
    const browser = await accountBrowser(ctx, request, h);
    if (!browser) return seeOther(reply, accountSignIn(h));
    const done = DONE.get(formField(request.query, 'done'));
    return showAccount(
      ctx,
      request,
      reply,
      h,
      browser,
      200,
      done ? { kind: 'notice', message: done } : undefined,
    );
  });
}
