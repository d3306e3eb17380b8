import type { FastifyInstance } from 'fastify';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError, validationFailed } from '../../errors/index.js';
import { auditChange, tenantForAdmin } from '../../modules/admin/index.js';
import { listKeys } from '../../modules/keys/index.js';
import { enabledProviders } from '../../modules/social/index.js';
import {
  checkTenantUpdate,
  logoProblem,
  type Tenant,
  updateTenant,
} from '../../modules/tenants/index.js';
import { brandingPage } from '../../views/admin/branding.js';
import { messagePage, signInPage } from '../../views/hosted.js';
import type { AppContext } from '../context.js';
import { formField, isRecord } from '../form-body.js';
import { seeOther } from '../pages/respond.js';
import { TenantParams, typed, withParams } from './params.js';
import { alertFor, noticeOf, sendAdminPage, sendPreview, signedIn, viewer } from './responses.js';
import { changes } from './tenant-pages.js';

type BrandingForm = { name: string; logoUrl: string; primaryColor: string };

/** The Branding form's fields, from a form body or the preview's query. */
const brandingForm = (source: unknown): BrandingForm => ({
  name: formField(source, 'name', defaults.tenants.nameMaxLength + 1),
  logoUrl: formField(source, 'logoUrl', defaults.tenants.logoUrlMaxLength + 1).trim(),
  primaryColor: formField(source, 'primaryColor', 8).trim(),
});

const asInput = (form: BrandingForm) => ({
  name: form.name,
  logoUrl: form.logoUrl || null,
  primaryColor: form.primaryColor || null,
});

/**
 * The rules of a save, the tenant's own: a logo is https, or on a development tenant also
 * http://localhost or http://127.0.0.1 (a logo served by the developer's machine).
 */
function checkBranding(tenant: Tenant, form: BrandingForm): void {
  if (form.logoUrl && logoProblem(form.logoUrl, tenant.environment))
    throw validationFailed([
      {
        path: '/logoUrl',
        code: 'logo_url_invalid',
        message:
          tenant.environment === 'development'
            ? 'The Logo URL must start with https:// (or http://localhost or http://127.0.0.1 on this development tenant)'
            : 'The Logo URL must start with https:// (a production tenant shows no http logo)',
      },
    ]);
  checkTenantUpdate(tenant, asInput(form));
}

/** Where the Branding page's own preview of the buttons may load a typed logo from. */
export const logoSources = (tenant: Tenant) =>
  tenant.environment === 'development' ? 'https: http://localhost:* http://127.0.0.1:*' : 'https:';

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
        providers: await enabledProviders(db, tenant),
        hostedUrl: await hostedUrl(tenant),
        ...extra,
      }),
      // The buttons' preview shows any logo a save allows as it is typed; the hosted one is a frame.
      { img: logoSources(tenant), frames: "'self'" },
    );

  typed(scope).get(
    '/admin/tenants/:tenantId/branding',
    withParams(TenantParams),
    async (request, reply) => {
      const { tenantId } = request.params;
      const tenant = await tenantForAdmin(db, signedIn(request).admin, tenantId);
      return render(request, reply, tenant, 200, { alert: noticeOf(request) });
    },
  );

  /**
   * The hosted sign-in page as it would look with these (unsaved) values: the hosted
   * page's own view, with the tenant's enabled providers. A value left out is the saved one.
   */
  typed(scope).get(
    '/admin/tenants/:tenantId/branding/preview',
    withParams(TenantParams),
    async (request, reply) => {
      const { tenantId } = request.params;
      const tenant = await tenantForAdmin(db, signedIn(request).admin, tenantId);
      const query = isRecord(request.query) ? request.query : {};
      const typed = brandingForm(query);
      const form: BrandingForm = {
        name: 'name' in query ? typed.name : tenant.name,
        logoUrl: 'logoUrl' in query ? typed.logoUrl : (tenant.branding.logoUrl ?? ''),
        primaryColor:
          'primaryColor' in query ? typed.primaryColor : (tenant.branding.primaryColor ?? ''),
      };
      const nonce = request.cspNonce;
      try {
        checkBranding(tenant, form);
      } catch (error) {
        if (!(error instanceof LatchkeyError) || error.status !== 422) throw error;
        const problems = error.errors?.map((f) => f.message).join('; ') ?? error.message;
        const html = messagePage(
          { tenant: undefined, nonce },
          'No preview yet',
          `Saving these values would be refused: ${problems}.`,
          undefined,
          'error',
        );
        return sendPreview(reply, 422, html);
      }
      const shown: Tenant = {
        ...tenant,
        name: form.name.trim(),
        branding: { logoUrl: form.logoUrl || null, primaryColor: form.primaryColor || null },
      };
      const html = signInPage({
        ctx: { tenant: shown, nonce },
        query: '',
        csrf: '',
        providers: await enabledProviders(db, tenant),
        passwordEnabled: tenant.passwordEnabled,
      });
      const logo = shown.branding.logoUrl;
      return sendPreview(reply, 200, html, logo ? new URL(logo).origin : undefined);
    },
  );

  typed(scope).post(
    '/admin/tenants/:tenantId/branding',
    withParams(TenantParams),
    async (request, reply) => {
      const { admin } = signedIn(request);
      const { tenantId } = request.params;
      const tenant = await tenantForAdmin(db, admin, tenantId);
      const form = brandingForm(request.body);
      try {
        checkBranding(tenant, form);
        const updated = await updateTenant({ db, bus: ctx.bus }, tenant.id, asInput(form));
        await auditChange(db, admin, {
          tenantId: tenant.id,
          kind: 'branding_updated',
          detail: changes(tenant, updated),
        });
        return seeOther(reply, `/admin/tenants/${tenant.id}/branding?done=saved`);
      } catch (error) {
        return render(request, reply, tenant, 422, { alert: alertFor(error), form });
      }
    },
  );
}
