import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import {
  type AccountHolder,
  accountFactors,
  changeAccountPassword,
  confirmAccountApp,
  type HostedRequest,
  hostedQuery,
  removeAccountFactor,
  replaceAccountRecoveryCodes,
  startAccountApp,
} from '../../modules/hosted/index.js';
import type { Html } from '../../views/html.js';
import type { Alert } from '../../views/kit.js';
import { qrCode } from '../../views/mfa.js';
import {
  accountAppPage,
  accountCodesPage,
  passwordSection,
  recoveryCodesSection,
  totpSection,
} from '../../views/mfa-account.js';
import { type AppContext, hostedDeps } from '../context.js';
import { formField } from '../form-body.js';
import { seeOther } from '../pages/respond.js';
import { PAGE } from '../pages/scope.js';
import {
  type AccountBrowser,
  accountBrowser,
  accountSignIn,
  showAccount,
} from './account-pages.js';
import { pageContext, sendPage } from './responses.js';
import { resolveHosted } from './setup.js';

/**
 * /account's authenticator apps, recovery codes and password (docs/design.md §13). Every
 * change is a form POST with CSRF; a browser whose sign-in is older than the step-up time
 * gets the account page again with `reauthentication_required`'s message (403).
 */

/** The sections these routes serve, for the account page. */
export async function secondFactorSections(
  ctx: AppContext,
  h: HostedRequest,
  browser: AccountBrowser,
  common: { query: string; csrf: string; recent: boolean },
): Promise<Html[]> {
  const { factors, hasPassword } = await accountFactors(hostedDeps(ctx), h.tenant, browser.user);
  return [
    totpSection(common, factors),
    recoveryCodesSection(common, factors),
    passwordSection(common, hasPassword),
  ];
}

export function accountFactorPages(scope: FastifyInstance, ctx: AppContext) {
  const deps = hostedDeps(ctx);
  const PASSWORD_MAX = defaults.password.maxLength;

  /** The form's hosted request and signed-in browser; else already answered. */
  async function holderOf(request: FastifyRequest, reply: FastifyReply) {
    const h = await resolveHosted(ctx, request, reply);
    if (!h) return undefined;
    const browser = await accountBrowser(ctx, request, h);
    if (!browser) {
      seeOther(reply, accountSignIn(h));
      return undefined;
    }
    const holder: AccountHolder = browser;
    return { h, browser, holder };
  }

  /** Runs a change; a refusal the owner can act on is the account page with its message. */
  async function change(
    request: FastifyRequest,
    reply: FastifyReply,
    act: (a: NonNullable<Awaited<ReturnType<typeof holderOf>>>) => Promise<unknown>,
  ) {
    const a = await holderOf(request, reply);
    if (!a) return reply;
    try {
      return await act(a);
    } catch (error) {
      if (!(error instanceof LatchkeyError)) throw error;
      const shown: Partial<Record<string, number>> = {
        reauthentication_required: 403,
        conflict: 409,
        not_found: 404,
        validation_failed: 422,
        invalid_code: 401,
        rate_limited: 429,
        confirmation_required: 403,
      };
      const status = shown[error.code];
      if (status === undefined) throw error;
      const alert: Alert = { kind: 'error', message: error.message };
      return showAccount(ctx, request, reply, a.h, a.browser, status, alert);
    }
  }

  const appPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    h: HostedRequest,
    holder: AccountHolder,
    status: number,
    factorId?: string,
    alert?: Alert,
  ) => {
    const enrolment = await startAccountApp(deps, h.tenant, holder, factorId);
    const query = hostedQuery(h);
    return sendPage(
      reply,
      status,
      accountAppPage({
        ctx: pageContext(request),
        query,
        enrolment: {
          qr: await qrCode(enrolment.otpauthUri),
          secret: enrolment.secret,
          factorId: enrolment.id,
          action: `/account/totp/confirm?${query}`,
          csrf: reply.generateCsrf(),
          alert,
          button: 'Turn on',
        },
      }),
    );
  };

  const codesPage = (
    request: FastifyRequest,
    reply: FastifyReply,
    h: HostedRequest,
    codes: string[],
    alert?: Alert,
  ) =>
    sendPage(
      reply,
      200,
      accountCodesPage({ ctx: pageContext(request), query: hostedQuery(h), codes, alert }),
    );

  scope.post('/account/totp', PAGE, (request, reply) =>
    change(request, reply, ({ h, holder }) => appPage(request, reply, h, holder, 200)),
  );

  scope.post('/account/totp/confirm', PAGE, (request, reply) =>
    change(request, reply, async ({ h, holder }) => {
      const factorId = formField(request.body, 'factor', 64);
      const code = formField(request.body, 'code', 64);
      try {
        const { codes } = await confirmAccountApp(deps, h.tenant, holder, { factorId, code });
        if (!codes) return seeOther(reply, `/account?${hostedQuery(h)}&done=totp-added`);
        return codesPage(request, reply, h, codes, {
          kind: 'notice',
          message: 'Your authenticator app is set up.',
        });
      } catch (error) {
        if (!(error instanceof LatchkeyError && error.code === 'invalid_code')) throw error;
        return appPage(request, reply, h, holder, 401, factorId, {
          kind: 'error',
          message: error.message,
        });
      }
    }),
  );

  scope.post<{ Params: { id: string } }>('/account/factors/:id/remove', PAGE, (request, reply) =>
    change(request, reply, async ({ h, holder }) => {
      await removeAccountFactor(deps, h.tenant, holder, request.params.id);
      return seeOther(reply, `/account?${hostedQuery(h)}&done=factor-removed`);
    }),
  );

  scope.post('/account/recovery-codes', PAGE, (request, reply) =>
    change(request, reply, async ({ h, holder }) =>
      codesPage(request, reply, h, await replaceAccountRecoveryCodes(deps, h.tenant, holder)),
    ),
  );

  scope.post('/account/password', PAGE, (request, reply) =>
    change(request, reply, async ({ h, holder }) => {
      await changeAccountPassword(deps, h.tenant, holder, {
        current: formField(request.body, 'current', PASSWORD_MAX),
        password: formField(request.body, 'password', PASSWORD_MAX),
        confirm: formField(request.body, 'confirm', PASSWORD_MAX),
        ip: request.ip,
      });
      return seeOther(reply, `/account?${hostedQuery(h)}&done=password-changed`);
    }),
  );
}
