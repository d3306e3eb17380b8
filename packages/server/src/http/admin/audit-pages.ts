import type { FastifyInstance } from 'fastify';
import { defaults } from '../../config/defaults.js';
import { tenantScope, visibleTenants } from '../../modules/admin/index.js';
import { queryAudit } from '../../modules/audit/index.js';
import { readOutbox } from '../../modules/email/index.js';
import { tenantNames } from '../../modules/tenants/index.js';
import { auditPage, outboxPage } from '../../views/admin/audit.js';
import type { AppContext } from '../context.js';
import { formField } from '../form-body.js';
import { PAGE } from '../pages/scope.js';
import { sendAdminPage, signedIn, viewer } from './responses.js';

/** The audit log (filter by tenant, actor, kind) and the dev outbox. */
export function auditPages(scope: FastifyInstance, ctx: AppContext) {
  const db = ctx.database.db;

  scope.get('/admin/audit', PAGE, async (request, reply) => {
    const { admin } = signedIn(request);
    // docs/design.md §21: a picker while the tenants fit on one page, else the id is typed.
    const page = await visibleTenants(db, admin, { limit: defaults.admin.pageSize });
    const filter = {
      tenant: formField(request.query, 'tenant', 64),
      actor: formField(request.query, 'actor', defaults.email.maxLength).trim(),
      kind: formField(request.query, 'kind', 64),
    };
    const events = await queryAudit(db, {
      visibleTenants: tenantScope(admin),
      tenantId: filter.tenant || undefined,
      actor: filter.actor || undefined,
      kind: filter.kind || undefined,
      limit: defaults.admin.pageSize,
    });
    return sendAdminPage(
      reply,
      200,
      auditPage({
        viewer: viewer(request, reply),
        picker: page.next ? null : page.data,
        names: await tenantNames(
          db,
          events.flatMap((e) => (e.tenantId ? [e.tenantId] : [])),
        ),
        filter,
        events,
      }),
    );
  });

  scope.get('/admin/outbox', PAGE, async (request, reply) => {
    const { admin } = signedIn(request);
    const rows = ctx.config.smtpUrl
      ? []
      : await readOutbox(db, { limit: defaults.admin.pageSize, tenantIds: tenantScope(admin) });
    const names = await tenantNames(
      db,
      rows.flatMap((m) => (m.tenant_id ? [m.tenant_id] : [])),
    );
    return sendAdminPage(
      reply,
      200,
      outboxPage({
        viewer: viewer(request, reply),
        smtp: !!ctx.config.smtpUrl,
        mails: rows.map((m) => ({
          id: m.id,
          recipient: m.recipient,
          subject: m.subject,
          body: m.body,
          createdAt: new Date(m.created_at).toISOString(),
          tenant: m.tenant_id ? (names.get(m.tenant_id) ?? m.tenant_id) : 'no tenant',
        })),
      }),
    );
  });
}
