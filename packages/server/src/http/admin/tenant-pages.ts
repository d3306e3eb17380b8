import type { FastifyInstance, FastifyRequest } from 'fastify';
import { defaults, type Environment, type Plan } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import { auditChange, tenantForAdmin, visibleTenants } from '../../modules/admin/index.js';
import { listKeys } from '../../modules/keys/index.js';
import { openTenant } from '../../modules/provisioning/index.js';
import { type Tenant, type TenantInput, updateTenant } from '../../modules/tenants/index.js';
import { listEndpoints } from '../../modules/webhooks/index.js';
import { tenantPage, tenantsPage } from '../../views/admin/tenants.js';
import type { AppContext } from '../context.js';
import { formField } from '../form-body.js';
import { seeOther } from '../pages/respond.js';
import { PAGE } from '../pages/scope.js';
import { TenantParams, typed, withParams } from './params.js';
import { alertFor, noticeOf, sendAdminPage, signedIn, viewer } from './responses.js';

/** A form number: undefined when empty, NaN (refused by the rules) when not a number. */
const numberField = (body: unknown, name: string) => {
  const raw = formField(body, name, 20).trim();
  return raw === '' ? undefined : /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
};

/**
 * The settings form as the tenants service's input (the same rules as the CLI). Custom
 * limits are an enterprise plan's: a form that carries them for a tenant on another plan
 * is passed on, and the service refuses it (limits_need_enterprise), rather than dropped.
 */
function settingsInput(
  body: unknown,
  superuser: boolean,
  tenant: Tenant,
): Omit<TenantInput, 'environment'> {
  const plan = formField(body, 'plan', 20) as Plan;
  const input: Omit<TenantInput, 'environment'> = {
    name: formField(body, 'name', 200),
    allowedOrigins: formField(body, 'allowedOrigins', 8000).split(/\s+/).filter(Boolean),
    accessTokenTtl: numberField(body, 'accessTokenTtl'),
    requireEmailVerification: formField(body, 'requireEmailVerification') === 'on',
    passwordEnabled: formField(body, 'passwordEnabled') === 'on',
  };
  const limits = { rps: numberField(body, 'rps'), rpm: numberField(body, 'rpm') };
  const sent = limits.rps !== undefined || limits.rpm !== undefined;
  // Plans and limits are the operator's: a tenant-bound admin cannot change them.
  if (superuser) input.plan = plan;
  // Limits count on an enterprise tenant (a superuser's form), and are refused by the
  // service for a tenant that is not one; an enterprise tenant moved to another plan
  // drops its custom limits (its old form still carries them).
  if ((superuser && plan === 'enterprise') || (sent && tenant.plan !== 'enterprise'))
    Object.assign(input, limits);
  return input;
}

/** Tenants: the list, creation, and one tenant's settings and snippets. */
export function tenantPages(scope: FastifyInstance, ctx: AppContext) {
  const db = ctx.database.db;
  const publishableKeyOf = async (tenantId: string) =>
    (await listKeys(db, tenantId)).find((k) => k.kind === 'publishable' && !k.revokedAt)
      ?.publishableKey ?? undefined;

  /** docs/design.md §21: one page of the tenants, searched by name or id (`?q=&after=`). */
  const listed = async (request: FastifyRequest) => {
    const search = {
      query: formField(request.query, 'q', defaults.tenants.nameMaxLength).trim(),
      after: formField(request.query, 'after', 64).trim(),
    };
    const { admin } = signedIn(request);
    try {
      const page = await visibleTenants(db, admin, {
        query: search.query || undefined,
        after: search.after || undefined,
        limit: defaults.admin.pageSize,
      });
      return { search, tenants: page.data, next: page.next };
    } catch (error) {
      return { search, tenants: [], next: null, alert: alertFor(error) };
    }
  };

  scope.get('/admin/tenants', PAGE, async (request, reply) => {
    const list = await listed(request);
    return sendAdminPage(
      reply,
      list.alert ? 422 : 200,
      tenantsPage({
        viewer: viewer(request, reply),
        ...list,
        alert: list.alert ?? noticeOf(request),
      }),
    );
  });

  scope.post('/admin/tenants', PAGE, async (request, reply) => {
    const { admin } = signedIn(request);
    if (!admin.superuser) throw new LatchkeyError('not_found', 'No such page');
    const form = {
      name: formField(request.body, 'name', 200),
      environment: formField(request.body, 'environment', 20),
      plan: formField(request.body, 'plan', 20),
    };
    try {
      // The publishable key is public; a secret key is made (and shown once) in API Keys.
      const { tenant } = await openTenant(
        { db, signingKeys: ctx.signingKeys },
        { name: form.name, environment: form.environment as Environment, plan: form.plan as Plan },
        'default',
      );
      await auditChange(db, admin, {
        tenantId: tenant.id,
        kind: 'tenant_created',
        detail: { name: tenant.name, environment: tenant.environment, plan: tenant.plan },
      });
      return seeOther(reply, `/admin/tenants/${tenant.id}?done=created`);
    } catch (error) {
      return sendAdminPage(
        reply,
        422,
        tenantsPage({
          viewer: viewer(request, reply),
          ...(await listed(request)),
          alert: alertFor(error),
          form,
        }),
      );
    }
  });

  typed(scope).get('/admin/tenants/:tenantId', withParams(TenantParams), async (request, reply) => {
    const tenant = await tenantForAdmin(db, signedIn(request).admin, request.params.tenantId);
    return sendAdminPage(
      reply,
      200,
      tenantPage({
        viewer: viewer(request, reply),
        tenant,
        publishableKey: await publishableKeyOf(tenant.id),
        endpoints: await listEndpoints(db, tenant.id),
        authUrl: ctx.authUrl,
        alert: noticeOf(request),
      }),
    );
  });

  typed(scope).post(
    '/admin/tenants/:tenantId',
    withParams(TenantParams),
    async (request, reply) => {
      const { admin } = signedIn(request);
      const tenant = await tenantForAdmin(db, admin, request.params.tenantId);
      const input = settingsInput(request.body, admin.superuser, tenant);
      try {
        const updated = await updateTenant({ db, bus: ctx.bus }, tenant.id, input);
        await auditChange(db, admin, {
          tenantId: tenant.id,
          kind: 'tenant_updated',
          detail: changes(tenant, updated),
        });
        return seeOther(reply, `/admin/tenants/${tenant.id}?done=saved`);
      } catch (error) {
        return sendAdminPage(
          reply,
          422,
          tenantPage({
            viewer: viewer(request, reply),
            tenant: { ...tenant, ...(input as object) } as typeof tenant,
            publishableKey: await publishableKeyOf(tenant.id),
            endpoints: await listEndpoints(db, tenant.id),
            authUrl: ctx.authUrl,
            alert: alertFor(error),
          }),
        );
      }
    },
  );
}

/** What changed, field by field (tenant settings hold no secrets). */
export function changes<T extends object>(before: T, after: T): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(after) as (keyof T)[]) {
    if (key === 'updatedAt') continue;
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key]))
      out[key as string] = { from: before[key], to: after[key] };
  }
  return out;
}
