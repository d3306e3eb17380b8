import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LatchkeyError } from '../../errors/index.js';
import {
  confirmSetupInBrowser,
  type HostedRequest,
  pendingSecondStep,
  startSetupInBrowser,
  verifyInBrowser,
} from '../../modules/hosted/index.js';
import type { FactorType } from '../../modules/mfa/index.js';
import type { Alert } from '../../views/kit.js';
import { qrCode, recoveryCodesPage, setupPage, verifyPage } from '../../views/mfa.js';
import { type AppContext, hostedDeps } from '../context.js';
import { formField } from '../form-body.js';
import { seeOther } from '../pages/respond.js';
import { PAGE } from '../pages/scope.js';
import { challengeOf, clearChallengeCookie, setBrowserCookie } from './cookies.js';
import { passkeysOn } from './passkey-routes.js';
import { errorPage, pageContext, sendPage } from './responses.js';
import { currentBrowserCookie, redirectSignedIn, resolveHosted, signInQuery } from './setup.js';

/**
 * The second step of a hosted sign-in (docs/design.md §13): `/sign-in/verify` takes a code
 * of the user's authenticator app or a recovery code; `/sign-in/setup` walks a user without
 * a factor through setting an app up where the tenant requires one. Both work from the
 * pending sign-in's cookie that the first factor left (http/hosted/cookies.ts), and keep
 * the sign-in's `return_to` (a sign-in that /account asked for goes back there).
 */
export function secondFactorPages(scope: FastifyInstance, ctx: AppContext) {
  const deps = hostedDeps(ctx);
  const CODE_MAX = 64;

  const challenge = (request: FastifyRequest, h: HostedRequest) =>
    challengeOf(request, ctx.authUrl, h.tenant.id);

  /** The pending sign-in is gone (expired, finished, ended): back to /sign-in, which says so. */
  const expired = (reply: FastifyReply, h: HostedRequest) => {
    clearChallengeCookie(reply, ctx.authUrl, h.tenant.id);
    return seeOther(reply, `/sign-in?${signInQuery(reply.request, h)}&notice=expired`);
  };

  const meta = (request: FastifyRequest, h: HostedRequest) => ({
    ip: request.ip,
    userAgent: request.headers['user-agent'],
    previousCookie: currentBrowserCookie(ctx, request, h),
  });

  const showVerify = (
    request: FastifyRequest,
    reply: FastifyReply,
    h: HostedRequest,
    status: number,
    p: { recovery: boolean; factors: FactorType[]; alert?: Alert },
  ) => {
    // The passkey button (and its script) where the user has one, unless a code is typed.
    const passkey = !p.recovery && p.factors.includes('passkey') && passkeysOn(ctx, h.tenant);
    return sendPage(
      reply,
      status,
      verifyPage({
        ctx: pageContext(request),
        query: signInQuery(request, h),
        csrf: reply.generateCsrf(),
        recovery: p.recovery,
        app: p.factors.includes('totp'),
        passkey,
        recoveryOffered: p.factors.includes('recovery_code'),
        alert: p.alert,
      }),
      h.formTo,
      passkey,
    );
  };

  scope.get('/sign-in/verify', PAGE, async (request, reply) => {
    const h = await resolveHosted(ctx, request, reply);
    if (!h) return reply;
    const pending = await pendingSecondStep(deps, h, challenge(request, h));
    if (!pending) return expired(reply, h);
    if (pending.next === 'setup')
      return seeOther(reply, `/sign-in/setup?${signInQuery(request, h)}`);
    const recoveryOffered = pending.factors.includes('recovery_code');
    return showVerify(request, reply, h, 200, {
      recovery: recoveryOffered && formField(request.query, 'method') === 'recovery',
      factors: pending.factors,
    });
  });

  scope.post('/sign-in/verify', PAGE, async (request, reply) => {
    const h = await resolveHosted(ctx, request, reply);
    if (!h) return reply;
    const token = challenge(request, h);
    const code = formField(request.body, 'code', CODE_MAX).trim();
    const recovery = formField(request.body, 'method') === 'recovery';
    const again = async (status: number, message: string) => {
      const pending = await pendingSecondStep(deps, h, token);
      if (pending?.next !== 'verify') return expired(reply, h);
      return showVerify(request, reply, h, status, {
        recovery: recovery && pending.factors.includes('recovery_code'),
        factors: pending.factors,
        alert: { kind: 'error', message },
      });
    };
    if (!token) return expired(reply, h);
    // A pending sign-in that must set a factor up is finished only by the setup: a
    // leftover recovery code does not skip it.
    const pending = await pendingSecondStep(deps, h, token);
    if (!pending) return expired(reply, h);
    if (pending.next === 'setup')
      return seeOther(reply, `/sign-in/setup?${signInQuery(request, h)}`);
    if (!code)
      return again(
        422,
        recovery
          ? 'Enter one of your recovery codes.'
          : 'Enter the code your authenticator app shows.',
      );
    try {
      const signedIn = await verifyInBrowser(deps, h, { token, code, ...meta(request, h) });
      clearChallengeCookie(reply, ctx.authUrl, h.tenant.id);
      return redirectSignedIn(ctx, reply, h, signedIn);
    } catch (error) {
      if (!(error instanceof LatchkeyError)) throw error;
      if (error.code === 'invalid_code')
        return again(
          401,
          recovery
            ? 'That recovery code is wrong or was used already.'
            : 'That code is wrong or was used already. Enter the code your app shows now.',
        );
      if (error.code === 'invalid_mfa_token') return expired(reply, h);
      clearChallengeCookie(reply, ctx.authUrl, h.tenant.id);
      const back = { href: `/sign-in?${signInQuery(request, h)}`, text: 'Sign in again' };
      if (error.code === 'rate_limited')
        return errorPage(
          request,
          reply,
          429,
          'Too many wrong codes',
          'For your safety this sign-in has ended. Wait a few minutes, then sign in again.',
          back,
        );
      if (error.code === 'forbidden')
        return errorPage(request, reply, 403, 'This account is disabled', error.message, back);
      throw error;
    }
  });

  const showSetup = async (
    request: FastifyRequest,
    reply: FastifyReply,
    h: HostedRequest,
    status: number,
    factorId?: string,
    alert?: Alert,
  ) => {
    const enrolment = await startSetupInBrowser(deps, h, challenge(request, h), factorId);
    if (!enrolment) return undefined;
    return sendPage(
      reply,
      status,
      setupPage({
        ctx: pageContext(request),
        query: signInQuery(request, h),
        enrolment: {
          qr: await qrCode(enrolment.otpauthUri),
          secret: enrolment.secret,
          factorId: enrolment.id,
          action: `/sign-in/setup?${signInQuery(request, h)}`,
          csrf: reply.generateCsrf(),
          alert,
        },
      }),
    );
  };

  scope.get('/sign-in/setup', PAGE, async (request, reply) => {
    const h = await resolveHosted(ctx, request, reply);
    if (!h) return reply;
    const pending = await pendingSecondStep(deps, h, challenge(request, h));
    if (!pending) return expired(reply, h);
    if (pending.next === 'verify')
      return seeOther(reply, `/sign-in/verify?${signInQuery(request, h)}`);
    return (await showSetup(request, reply, h, 200)) ?? expired(reply, h);
  });

  scope.post('/sign-in/setup', PAGE, async (request, reply) => {
    const h = await resolveHosted(ctx, request, reply);
    if (!h) return reply;
    const token = challenge(request, h);
    const factorId = formField(request.body, 'factor', 64);
    const code = formField(request.body, 'code', CODE_MAX).trim();
    const again = async (status: number, message: string) =>
      (await showSetup(request, reply, h, status, factorId, { kind: 'error', message })) ??
      expired(reply, h);
    if (!token) return expired(reply, h);
    if (!code) return again(422, 'Enter the code your authenticator app shows.');
    try {
      const done = await confirmSetupInBrowser(deps, h, {
        token,
        factorId,
        code,
        ...meta(request, h),
      });
      clearChallengeCookie(reply, ctx.authUrl, h.tenant.id);
      // Signed in now (the app is confirmed); the tokens come with "Continue", as a
      // returning browser's do, so that a PKCE code is fresh when it leaves.
      setBrowserCookie(reply, ctx.authUrl, h.tenant.id, done.cookie);
      return sendPage(
        reply,
        200,
        recoveryCodesPage({
          ctx: pageContext(request),
          codes: done.codes,
          action: `/sign-in/continue?${signInQuery(request, h)}`,
          csrf: reply.generateCsrf(),
        }),
        h.formTo,
      );
    } catch (error) {
      if (!(error instanceof LatchkeyError)) throw error;
      if (error.code === 'invalid_code')
        return again(
          401,
          'That code is wrong. Check the key in the app and enter the code it shows now.',
        );
      if (error.code === 'invalid_mfa_token') return expired(reply, h);
      throw error;
    }
  });
}
