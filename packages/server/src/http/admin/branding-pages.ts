import type { FastifyInstance } from 'fastify';
import { defaults } from '../../config/defaults.js';
import { validationFailed } from '../../errors/index.js';
import { auditChange, tenantForAdmin } from '../../modules/admin/index.js';
import { brandingPage } from '../../modules/admin/views/branding.js';
import { listKeys } from '../../modules/keys/index.js';
import { enabledProviders } from '../../modules/social/index.js';
import { type Tenant, updateTenant } from '../../modules/tenants/index.js';
import type { AppContext } from '../context.js';
import { formField } from '../form-body.js';
import { PAGE } from '../hosted/responses.js';
import { alertFor, noticeOf, seeOther, sendAdminPage, signedIn, viewer } from './responses.js';
import { changes } from './tenant-pages.js';

/** Branding: name, logo and colour, with a live preview of the hosted page and the buttons. */
export function brandingPages(scope: FastifyInstance, ctx: AppContext) {
  const db = ctx.database.db;
  const hostedUrl = async (tenant: Tenant) => {
    const pk = (await listKeys(db, tenant.id)).find(
      (k) => k.kind === 'publishable' && !k.revokedAt,
    );
    const origin = tenant.allowedOrigins[0];
    if (!pk?.publishableKey || !origin) return undefined;
    return `${ctx.authUrl}/sign-in?${new URLSearchParams({ pk: pk.publishableKey, redirect_url: `${origin}/` })}`;
  };
  const render = async (
    request: Parameters<typeof viewer>[0],
    reply: Parameters<typeof viewer>[1],
    tenant: Tenant,
    status: number,
    extra: Pick<Parameters<typeof brandingPage>[0], 'alert' | 'form'> = {},
  ) =>
    sendAdminPage(
      reply,
      status,
      brandingPage({
        viewer: viewer(request, reply),
        tenant,
        providers: await enabledProviders(db, tenant.id),
        hostedUrl: await hostedUrl(tenant),
        ...extra,
      }),
      // The preview shows any https logo as it is typed.
      { img: 'https:' },
    );

  scope.get('/admin/tenants/:tenantId/branding', PAGE, async (request, reply) => {
    const { tenantId } = request.params as { tenantId: string };
    const tenant = await tenantForAdmin(db, signedIn(request).admin, tenantId);
    return render(request, reply, tenant, 200, { alert: noticeOf(request) });
  });

  scope.post('/admin/tenants/:tenantId/branding', PAGE, async (request, reply) => {
    const { admin } = signedIn(request);
    const { tenantId } = request.params as { tenantId: string };
    const tenant = await tenantForAdmin(db, admin, tenantId);
    const form = {
      name: formField(request.body, 'name', defaults.tenants.nameMaxLength + 1),
      logoUrl: formField(request.body, 'logoUrl', defaults.tenants.logoUrlMaxLength + 1).trim(),
      primaryColor: formField(request.body, 'primaryColor', 8).trim(),
    };
    try {
      // The admin area asks for https even on development tenants: a logo is public.
      if (form.logoUrl && !form.logoUrl.startsWith('https://'))
        throw validationFailed([
          {
            path: '/logoUrl',
            code: 'logo_url_invalid',
            message: 'The Logo URL must start with https://',
          },
        ]);
      const updated = await updateTenant({ db, bus: ctx.bus }, tenant.id, {
        name: form.name,
        logoUrl: form.logoUrl || null,
        primaryColor: form.primaryColor || null,
      });
      await auditChange(db, admin, {
        tenantId: tenant.id,
        kind: 'branding_updated',
        detail: changes(tenant, updated),
      });
      return seeOther(reply, `/admin/tenants/${tenant.id}/branding?done=saved`);
    } catch (error) {
      return render(request, reply, tenant, 422, { alert: alertFor(error), form });
    }
  });
}
