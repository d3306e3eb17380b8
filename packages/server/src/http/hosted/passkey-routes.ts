import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import {
  type HostedRequest,
  hostedQuery,
  removeAccountFactor,
  signInBrowser,
  verifyPasskeyInBrowser,
  withinLimit,
} from '../../modules/hosted/index.js';
import {
  listPasskeys,
  passkeyRegistrationOptions,
  passkeySignInOptions,
  type RelyingParty,
  registerPasskey,
  relyingPartyOf,
  renamePasskey,
  verifyPasskeySignIn,
} from '../../modules/mfa/index.js';
import { addressBucket } from '../../modules/rate-limit/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import { PASSKEY_SCRIPT, PASSKEY_SCRIPT_PATH } from '../../views/passkey-script.js';
import { type AppContext, hostedDeps } from '../context.js';
import { formField } from '../form-body.js';
import { seeOther } from '../pages/respond.js';
import { PAGE } from '../pages/scope.js';
import { accountBrowser, accountSignIn, showAccount } from './account-pages.js';
import { challengeOf, clearChallengeCookie, setBrowserCookie } from './cookies.js';
import { currentBrowserCookie, resolveHosted, signedInLocation } from './setup.js';

/** Passkeys offered to this tenant's users on the hosted pages. */
export const passkeysOn = (ctx: AppContext, tenant: Tenant) =>
  relyingPartyOf(ctx.authUrl, tenant) !== undefined;

const SCRIPT_VERSION = new URL(PASSKEY_SCRIPT_PATH, 'http://x').searchParams.get('v');

/** A JSON answer to the passkey script; never cached. */
const answer = (reply: FastifyReply, body: unknown) =>
  reply.header('cache-control', 'no-store').send(body);

/** A refusal the script shows (its `detail`), as problem+json. */
const refuse = (reply: FastifyReply, error: LatchkeyError) =>
  reply
    .code(error.status)
    .header('content-type', 'application/problem+json')
    .header('cache-control', 'no-store')
    .send(error.toProblem());

/**
 * The passkey ceremonies of the hosted pages (docs/design.md §13): JSON endpoints the page's
 * script calls, under the pages' CSRF rules (this origin, the page's token in
 * `x-csrf-token`), and the account page's rename and remove forms.
 */
export function passkeyRoutes(scope: FastifyInstance, ctx: AppContext) {
  const db = ctx.database.db;
  const deps = hostedDeps(ctx);

  scope.get('/passkeys.js', PAGE, async (request, reply) =>
    reply
      .header('content-type', 'text/javascript; charset=utf-8')
      .header('x-content-type-options', 'nosniff')
      .header(
        'cache-control',
        formField(request.query, 'v') === SCRIPT_VERSION
          ? 'public, max-age=31536000, immutable'
          : 'no-cache',
      )
      .send(PASSKEY_SCRIPT),
  );

  /**
   * The hosted request and relying party of a ceremony call, within the per-address limit
   * of ceremonies started; undefined once answered.
   */
  async function ceremony(
    request: FastifyRequest,
    reply: FastifyReply,
    start: boolean,
  ): Promise<{ h: HostedRequest; rp: RelyingParty } | undefined> {
    const h = await resolveHosted(ctx, request, reply);
    if (!h) return undefined;
    const rp = relyingPartyOf(ctx.authUrl, h.tenant);
    if (!rp) {
      refuse(reply, new LatchkeyError('forbidden', 'Passkeys are off for this application.'));
      return undefined;
    }
    if (start && !(await withinLimit(deps, 'passkeyStart', addressBucket(request.ip)))) {
      refuse(reply, new LatchkeyError('rate_limited', 'Too many attempts; try again later.'));
      return undefined;
    }
    return { h, rp };
  }

  /**
   * Runs a ceremony step; the refusals it meets go to the script as problem+json, and why
   * (SimpleWebAuthn's reason: the origin, the RP id, a flag…) to the log.
   */
  async function step(reply: FastifyReply, work: () => Promise<unknown>) {
    try {
      return answer(reply, await work());
    } catch (error) {
      if (!(error instanceof LatchkeyError)) throw error;
      if (error.cause instanceof Error)
        reply.request.log.info({ reason: error.cause.message }, 'passkey ceremony refused');
      return refuse(reply, error);
    }
  }

  scope.post('/sign-in/passkey/options', PAGE, async (request, reply) => {
    const c = await ceremony(request, reply, true);
    if (!c) return reply;
    return step(reply, () => passkeySignInOptions(db, c.rp, c.h.tenant));
  });

  // A passkey sign-in ends as a password one does (signInBrowser), its location as JSON.
  scope.post('/sign-in/passkey', PAGE, async (request, reply) => {
    const c = await ceremony(request, reply, false);
    if (!c) return reply;
    const { h, rp } = c;
    return step(reply, async () => {
      const { user, amr } = await verifyPasskeySignIn(db, rp, h.tenant, request.body);
      const signedIn = await signInBrowser(
        deps,
        h,
        user,
        {
          ip: request.ip,
          userAgent: request.headers['user-agent'],
          previousCookie: currentBrowserCookie(ctx, request, h),
        },
        amr,
      );
      setBrowserCookie(reply, ctx.authUrl, h.tenant.id, signedIn.cookie);
      return { location: signedInLocation(request, h, signedIn.location) };
    });
  });

  // The second step of a sign-in with a passkey of the same user (docs/design.md §13): the
  // first factor's pending sign-in, in its cookie, is finished instead of a new sign-in.
  scope.post('/sign-in/verify/passkey/options', PAGE, async (request, reply) => {
    const c = await ceremony(request, reply, true);
    if (!c) return reply;
    return step(reply, () => passkeySignInOptions(db, c.rp, c.h.tenant));
  });

  scope.post('/sign-in/verify/passkey', PAGE, async (request, reply) => {
    const c = await ceremony(request, reply, false);
    if (!c) return reply;
    const { h, rp } = c;
    const token = challengeOf(request, ctx.authUrl, h.tenant.id);
    return step(reply, async () => {
      if (!token)
        throw new LatchkeyError('invalid_mfa_token', 'This sign-in has ended: sign in again.');
      const signedIn = await verifyPasskeyInBrowser(deps, h, rp, {
        token,
        response: request.body,
        ip: request.ip,
        userAgent: request.headers['user-agent'],
        previousCookie: currentBrowserCookie(ctx, request, h),
      });
      clearChallengeCookie(reply, ctx.authUrl, h.tenant.id);
      setBrowserCookie(reply, ctx.authUrl, h.tenant.id, signedIn.cookie);
      return { location: signedInLocation(request, h, signedIn.location) };
    });
  });

  /** The signed-in browser of an account ceremony, allowed to add a factor; else refused. */
  async function adding(request: FastifyRequest, reply: FastifyReply, start: boolean) {
    const c = await ceremony(request, reply, start);
    if (!c) return undefined;
    const browser = await accountBrowser(ctx, request, c.h);
    if (!browser) {
      refuse(reply, new LatchkeyError('unauthorized', 'You are signed out: reload the page.'));
      return undefined;
    }
    if (!browser.recent) {
      refuse(reply, new LatchkeyError('forbidden', staleMessage('add a passkey')));
      return undefined;
    }
    return { ...c, user: browser.user };
  }

  scope.post('/account/passkeys/options', PAGE, async (request, reply) => {
    const a = await adding(request, reply, true);
    if (!a) return reply;
    return step(reply, () => passkeyRegistrationOptions(db, a.rp, a.h.tenant, a.user));
  });

  scope.post('/account/passkeys', PAGE, async (request, reply) => {
    const a = await adding(request, reply, false);
    if (!a) return reply;
    return step(reply, async () => {
      await registerPasskey(
        db,
        a.rp,
        a.h.tenant,
        a.user,
        request.body,
        request.headers['user-agent'],
      );
      return { location: `/account?${hostedQuery(a.h)}&done=passkey-added` };
    });
  });

  /** A rename or remove form of the account page: its browser, or a redirect to sign in. */
  async function changing(request: FastifyRequest, reply: FastifyReply) {
    const h = await resolveHosted(ctx, request, reply);
    if (!h) return undefined;
    const browser = await accountBrowser(ctx, request, h);
    if (!browser) {
      seeOther(reply, accountSignIn(h));
      return undefined;
    }
    const { id } = request.params as { id: string };
    return { h, browser, id };
  }

  const gone = 'This passkey is no longer on your account.';

  scope.post('/account/passkeys/:id/rename', PAGE, async (request, reply) => {
    const c = await changing(request, reply);
    if (!c) return reply;
    const { h, browser, id } = c;
    const name = formField(request.body, 'name', defaults.passkeys.nameMaxLength);
    try {
      if (!(await renamePasskey(db, h.tenant.id, browser.user.id, id, name)))
        return showAccount(ctx, request, reply, h, browser, 404, { kind: 'error', message: gone });
    } catch (error) {
      if (!(error instanceof LatchkeyError)) throw error;
      return showAccount(ctx, request, reply, h, browser, 422, {
        kind: 'error',
        message: error.message,
      });
    }
    return seeOther(reply, `/account?${hostedQuery(h)}&done=passkey-renamed`);
  });

  // Removed as any factor is: the last one under `required` is refused, and audited.
  scope.post('/account/passkeys/:id/remove', PAGE, async (request, reply) => {
    const c = await changing(request, reply);
    if (!c) return reply;
    const { h, browser, id } = c;
    if (!browser.recent)
      return showAccount(ctx, request, reply, h, browser, 403, {
        kind: 'error',
        message: staleMessage('remove a passkey'),
      });
    const passkeys = await listPasskeys(db, h.tenant.id, browser.user.id);
    if (!passkeys.some((k) => k.id === id))
      return showAccount(ctx, request, reply, h, browser, 404, { kind: 'error', message: gone });
    try {
      await removeAccountFactor(deps, h.tenant, browser, id);
    } catch (error) {
      if (!(error instanceof LatchkeyError)) throw error;
      return showAccount(ctx, request, reply, h, browser, error.status, {
        kind: 'error',
        message: error.code === 'not_found' ? gone : error.message,
      });
    }
    return seeOther(reply, `/account?${hostedQuery(h)}&done=passkey-removed`);
  });
}

/** Why a change of factors is refused to a browser whose sign-in is too old. */
const staleMessage = (what: string) =>
  `To ${what}, sign in again: your last sign-in on this browser was over ${defaults.mfa.stepUpMs / 60_000} minutes ago.`;
