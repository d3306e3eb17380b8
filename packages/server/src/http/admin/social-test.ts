import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  type FlowDeps,
  type Profile,
  type ProviderId,
  previewProfile,
  SocialRefusal,
  saveTestResult,
} from '../../modules/social/index.js';
import { getTenant, type Tenant } from '../../modules/tenants/index.js';
import { type TestResult, testFinishedPage } from '../../views/admin/social.js';
import type { AppContext } from '../context.js';
import { sendPage } from '../hosted/responses.js';

export const flowDepsOf = (ctx: AppContext): FlowDeps => ({
  db: ctx.database.db,
  bus: ctx.bus,
  limiter: ctx.limiter,
  box: ctx.box,
  authUrl: ctx.authUrl,
  providerEndpoints: ctx.config.providerEndpoints,
});

/**
 * The provider's answer to an admin's "Test sign-in" (called from the social callback, or
 * development mode's page): `finish` finishes the real flow (or takes the typed profile),
 * and what would happen is kept for the admin to read;
 * nothing is created. The browser then goes on by a same-site step (a refresh from this
 * page), since the admin's SameSite=Strict cookie does not ride a redirect from the provider.
 */
export async function finishTestSignIn(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  provider: ProviderId,
  flow: { state: string; tenant_id: string },
  finish: (tenant: Tenant) => Promise<Profile>,
) {
  const db = ctx.database.db;
  const tenant = await getTenant(db, flow.tenant_id);
  let result: TestResult;
  try {
    const profile = await finish(tenant);
    result = { ok: true, profile, outcome: await previewProfile(db, tenant, provider, profile) };
  } catch (error) {
    if (!(error instanceof SocialRefusal)) throw error;
    result = { ok: false, message: error.message };
  }
  await saveTestResult(db, flow.state, result);
  const next = `/admin/tenants/${tenant.id}/social/${provider}/test/${encodeURIComponent(flow.state)}`;
  return sendPage(reply, 200, testFinishedPage(request.cspNonce, next));
}
