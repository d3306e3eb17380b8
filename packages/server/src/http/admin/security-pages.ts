import type { FastifyInstance } from 'fastify';
import { MFA_POLICIES, type MfaPolicy } from '../../config/defaults.js';
import { auditChange, tenantForAdmin } from '../../modules/admin/index.js';
import { updateTenant } from '../../modules/tenants/index.js';
import { type SecurityForm, securityPage } from '../../views/admin/security.js';
import type { AppContext } from '../context.js';
import { formField } from '../form-body.js';
import { seeOther } from '../pages/respond.js';
import { TenantParams, typed, withParams } from './params.js';
import { alertFor, noticeOf, sendAdminPage, signedIn, viewer } from './responses.js';
import { changes } from './tenant-pages.js';

/**
 * Security (docs/design.md §13): the tenant's second-factor policy and its passkey switch,
 * saved through the tenants service (the CLI's `--mfa` / `--passkeys` rules): a policy
 * other than off, optional or required is refused there, and nothing is written.
 */
export function securityPages(scope: FastifyInstance, ctx: AppContext) {
  const db = ctx.database.db;

  typed(scope).get(
    '/admin/tenants/:tenantId/security',
    withParams(TenantParams),
    async (request, reply) => {
      const tenant = await tenantForAdmin(db, signedIn(request).admin, request.params.tenantId);
      return sendAdminPage(
        reply,
        200,
        securityPage({ viewer: viewer(request, reply), tenant, alert: noticeOf(request) }),
      );
    },
  );

  typed(scope).post(
    '/admin/tenants/:tenantId/security',
    withParams(TenantParams),
    async (request, reply) => {
      const { admin } = signedIn(request);
      const tenant = await tenantForAdmin(db, admin, request.params.tenantId);
      const form: SecurityForm = {
        mfaPolicy: formField(request.body, 'mfaPolicy', 20),
        passkeysEnabled: formField(request.body, 'passkeysEnabled') === 'on',
      };
      // Said in the page's words (the service's message names the CLI's --mfa); it refuses too.
      if (!(MFA_POLICIES as readonly string[]).includes(form.mfaPolicy))
        return sendAdminPage(
          reply,
          422,
          securityPage({
            viewer: viewer(request, reply),
            tenant,
            form,
            alert: {
              kind: 'error',
              message: 'Choose Off, Optional or Required for Second factors.',
            },
          }),
        );
      try {
        const updated = await updateTenant({ db, bus: ctx.bus }, tenant.id, {
          mfaPolicy: form.mfaPolicy as MfaPolicy,
          passkeysEnabled: form.passkeysEnabled,
        });
        await auditChange(db, admin, {
          tenantId: tenant.id,
          kind: 'security_updated',
          detail: changes(tenant, updated),
        });
        return seeOther(reply, `/admin/tenants/${tenant.id}/security?done=saved`);
      } catch (error) {
        return sendAdminPage(
          reply,
          422,
          securityPage({ viewer: viewer(request, reply), tenant, form, alert: alertFor(error) }),
        );
      }
    },
  );
}
