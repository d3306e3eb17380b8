import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LatchkeyError } from '../../errors/index.js';
import { auditChange, needsReauth, tenantForAdmin } from '../../modules/admin/index.js';
import {
  authorizationOrigin,
  callbackUrl,
  DEVELOPMENT_ISSUER,
  findTestResult,
  isProviderId,
  listProviderSettings,
  PROVIDER_IDS,
  PROVIDERS,
  type ProviderId,
  type ProviderMode,
  type ProviderSettingsInput,
  setProvider,
  startFlow,
} from '../../modules/social/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import { socialPage, type TestResult, testResultPage } from '../../views/admin/social.js';
import type { Alert } from '../../views/kit.js';
import type { AppContext } from '../context.js';
import { formField } from '../form-body.js';
import { flowCookie } from '../hosted/cookies.js';
import { isSecure } from '../pages/cookies.js';
import { seeOther } from '../pages/respond.js';
import { checkReauth } from './key-pages.js';
import { ProviderParams, TenantParams, TestParams, typed, withParams } from './params.js';
import { alertFor, noticeOf, sendAdminPage, signedIn, viewer } from './responses.js';
import { flowDepsOf } from './social-test.js';

function providerOf(provider: string): ProviderId {
  if (!isProviderId(provider)) throw new LatchkeyError('not_found', 'No such provider');
  return provider;
}

/** The form as the social settings service's input: empty secrets keep the saved ones. */
function settingsInput(body: unknown, provider: ProviderId): ProviderSettingsInput {
  const text = (name: string, max = 512) => formField(body, name, max).trim();
  // The form's mode choice; a post without one (an older form) says live with `enabled=on`.
  // An unknown value is refused by the service (mode_invalid).
  const mode = formField(body, 'mode') || (formField(body, 'enabled') === 'on' ? 'live' : 'off');
  const input: ProviderSettingsInput = {
    mode: mode as ProviderMode,
    clientId: text('clientId'),
  };
  if (provider === 'apple') {
    input.teamId = text('teamId');
    input.keyId = text('keyId');
    const pem = text('privateKey', 8192);
    if (pem) input.privateKeyPem = pem;
  } else {
    const secret = formField(body, 'clientSecret', 4096);
    if (secret) input.clientSecret = secret;
  }
  if (provider === 'microsoft') input.audience = text('audience');
  return input;
}

/** Social Login: one panel per provider, write-only secrets, and "Test sign-in". */
export function socialPages(scope: FastifyInstance, ctx: AppContext) {
  const db = ctx.database.db;
  const flowDeps = flowDepsOf(ctx);

  async function render(
    request: FastifyRequest,
    reply: FastifyReply,
    tenant: Tenant,
    status: number,
    alerts: { page?: Alert; provider?: ProviderId; panel?: Alert } = {},
  ) {
    const settings = await listProviderSettings(db, tenant.id);
    // "Test sign-in" (of any saved provider, enabled or not) posts here and is sent on to
    // the provider: form-action must allow it.
    const testable = settings.filter((s) => s.hasSecret);
    const origins = await Promise.all(
      testable.map((s) =>
        authorizationOrigin(flowDeps, tenant, s.provider, true).catch(() => undefined),
      ),
    );
    return sendAdminPage(
      reply,
      status,
      socialPage({
        viewer: viewer(request, reply),
        tenant,
        reauth: needsReauth(signedIn(request)),
        alert: alerts.page,
        panels: PROVIDER_IDS.map((id) => ({
          id,
          name: PROVIDERS[id].name,
          callbackUrl: callbackUrl(ctx.authUrl, id),
          settings: settings.find((s) => s.provider === id),
          alert: alerts.provider === id ? alerts.panel : undefined,
        })),
      }),
      { formTo: origins.filter((o): o is string => o !== undefined) },
    );
  }

  const pages = typed(scope);

  pages.get('/admin/tenants/:tenantId/social', withParams(TenantParams), async (request, reply) => {
    const tenant = await tenantForAdmin(db, signedIn(request).admin, request.params.tenantId);
    return render(request, reply, tenant, 200, { page: noticeOf(request) });
  });

  const saveRoute = '/admin/tenants/:tenantId/social/:provider';
  pages.post(saveRoute, withParams(ProviderParams), async (request, reply) => {
    const session = signedIn(request);
    const tenant = await tenantForAdmin(db, session.admin, request.params.tenantId);
    const provider = providerOf(request.params.provider);
    const input = settingsInput(request.body, provider);
    const secretChanged = input.clientSecret !== undefined || input.privateKeyPem !== undefined;
    if (secretChanged) {
      const refused = await checkReauth(ctx, request, session);
      if (refused) return render(request, reply, tenant, 403, { provider, panel: refused });
    }
    try {
      const saved = await setProvider(db, ctx.box, tenant.id, provider, input);
      await ctx.bus.publish(`tenant:${tenant.id}`);
      await auditChange(db, session.admin, {
        tenantId: tenant.id,
        kind: 'provider_updated',
        // Never the secret: only that it was replaced.
        detail: {
          provider,
          enabled: saved.enabled,
          mode: saved.mode,
          clientId: saved.clientId,
          ...(secretChanged ? { secret: 'replaced' } : {}),
          ...(saved.teamId ? { teamId: saved.teamId, keyId: saved.keyId } : {}),
          ...(saved.audience ? { audience: saved.audience } : {}),
        },
      });
      return seeOther(reply, `/admin/tenants/${tenant.id}/social?done=saved#h-${provider}`);
    } catch (error) {
      return render(request, reply, tenant, 422, { provider, panel: alertFor(error) });
    }
  });

  pages.post(`${saveRoute}/test`, withParams(ProviderParams), async (request, reply) => {
    const { admin } = signedIn(request);
    const tenant = await tenantForAdmin(db, admin, request.params.tenantId);
    const provider = providerOf(request.params.provider);
    // Marked as this admin's test: the callback then creates nothing. The provider need not
    // be enabled yet; users' sign-in with it stays refused until it is.
    const { url, state } = await startFlow(flowDeps, tenant, provider, {
      hostedQuery: '',
      ip: request.ip,
      testBy: admin.id,
    }).catch((error) => {
      throw new LatchkeyError('invalid_request', (error as Error).message);
    });
    reply.setCookie(flowCookie(ctx.authUrl, provider), state, {
      path: '/',
      httpOnly: true,
      maxAge: 600,
      sameSite: provider === 'apple' ? 'none' : 'lax',
      secure: provider === 'apple' ? true : isSecure(ctx.authUrl),
    });
    return seeOther(reply, url);
  });

  pages.get(`${saveRoute}/test/:state`, withParams(TestParams), async (request, reply) => {
    const { admin } = signedIn(request);
    const tenant = await tenantForAdmin(db, admin, request.params.tenantId);
    const provider = providerOf(request.params.provider);
    const result = await findTestResult(db, {
      state: request.params.state,
      tenantId: tenant.id,
      provider,
      adminId: admin.id,
    });
    if (!result) throw new LatchkeyError('not_found', 'No such test');
    return sendAdminPage(
      reply,
      200,
      testResultPage({
        viewer: viewer(request, reply),
        tenant,
        providerName: PROVIDERS[provider].name,
        result: result as TestResult,
        development:
          (result as TestResult).ok &&
          (result as Extract<TestResult, { ok: true }>).profile.issuer === DEVELOPMENT_ISSUER,
      }),
    );
  });
}
