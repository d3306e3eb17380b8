import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { LatchkeyError } from '../../errors/index.js';
import { auditChange, needsReauth, tenantForAdmin } from '../../modules/admin/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import {
  createEndpoint,
  deleteEndpoint,
  getDelivery,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  resendDelivery,
  rotateEndpointSecret,
  updateEndpoint,
  type WebhookEndpoint,
} from '../../modules/webhooks/index.js';
import { GRACE_CHOICES } from '../../views/admin/apps.js';
import {
  deleteEndpointPage,
  type EndpointForm,
  endpointPage,
  type ShownSecret,
  webhooksPage,
  webhooksPath,
} from '../../views/admin/webhooks.js';
import type { Alert } from '../../views/kit.js';
import type { AppContext } from '../context.js';
import { formField, isRecord } from '../form-body.js';
import { seeOther } from '../pages/respond.js';
import { checkReauth } from './key-pages.js';
import { DeliveryParams, EndpointParams, TenantParams, typed, withParams } from './params.js';
import { alertFor, noticeOf, sendAdminPage, signedIn, viewer } from './responses.js';
import { changes } from './tenant-pages.js';

/** The deliveries an endpoint's page shows, newest first, each with its attempts. */
const DELIVERIES_SHOWN = 20;
/** A URL longer than this is cut here and refused by the service's rule. */
const URL_FIELD_MAX = 4096;

/**
 * The form as typed: the URL, and the event types whose `event_{type}` box is ticked.
 * Every ticked name is passed on, so a forged one is refused by the service (/events/i),
 * not dropped; none ticked means every event.
 */
function endpointForm(body: unknown): EndpointForm {
  const events = isRecord(body)
    ? Object.keys(body)
        .filter((name) => name.startsWith('event_') && body[name] === 'on')
        .map((name) => name.slice('event_'.length))
    : [];
  return { url: formField(body, 'url', URL_FIELD_MAX).trim(), events };
}

/** The refused form again, with the fields the service named marked invalid. */
function refusedForm(form: EndpointForm, error: unknown): EndpointForm {
  const paths = error instanceof LatchkeyError ? (error.errors ?? []).map((e) => e.path) : [];
  return {
    ...form,
    invalid: [
      ...(paths.some((p) => p === '/url') ? ['url'] : []),
      ...(paths.some((p) => p.startsWith('/events')) ? ['events'] : []),
    ],
  };
}

/** What an audit entry says of an endpoint: never its secret (the service never hands it back). */
const described = (e: WebhookEndpoint) => ({ endpointId: e.id, url: e.url, events: e.events });

/**
 * Webhooks (docs/design.md §12.2, §17): a tenant's endpoints through the endpoints
 * service, under the CLI's rules. A signing secret is shown in the answer that makes it
 * (adding, rotation), never in a URL or a later page, after the password again when the
 * sign-in is older than 10 minutes, as for secret keys and client secrets.
 */
export function webhookPages(scope: FastifyInstance, ctx: AppContext) {
  const db = ctx.database.db;
  const deps = { db, box: ctx.box };

  const renderList = async (
    request: FastifyRequest,
    reply: FastifyReply,
    tenant: Tenant,
    status: number,
    extra: { form?: EndpointForm; alert?: Alert } = {},
  ) =>
    sendAdminPage(
      reply,
      status,
      webhooksPage({
        viewer: viewer(request, reply),
        tenant,
        endpoints: await listEndpoints(db, tenant.id),
        reauth: needsReauth(signedIn(request)),
        ...extra,
      }),
    );

  const renderEndpoint = async (
    request: FastifyRequest,
    reply: FastifyReply,
    tenant: Tenant,
    endpoint: WebhookEndpoint,
    status: number,
    extra: { form?: EndpointForm; alert?: Alert; shown?: ShownSecret } = {},
  ) => {
    const recent = await listDeliveries(db, tenant.id, endpoint.id, { limit: DELIVERIES_SHOWN });
    const deliveries = [];
    for (const d of recent) deliveries.push(await getDelivery(db, tenant.id, d.id));
    return sendAdminPage(
      reply,
      status,
      endpointPage({
        viewer: viewer(request, reply),
        tenant,
        endpoint,
        deliveries,
        reauth: needsReauth(signedIn(request)),
        ...extra,
      }),
    );
  };

  /** The tenant (as this admin may see it) and its endpoint; 404 for anything else. */
  const endpointOf = async (request: FastifyRequest<{ Params: Static<typeof EndpointParams> }>) => {
    const session = signedIn(request);
    const tenant = await tenantForAdmin(db, session.admin, request.params.tenantId);
    const endpoint = await getEndpoint(db, tenant.id, request.params.endpointId);
    return { session, tenant, endpoint };
  };

  typed(scope).get(
    '/admin/tenants/:tenantId/webhooks',
    withParams(TenantParams),
    async (request, reply) => {
      const tenant = await tenantForAdmin(db, signedIn(request).admin, request.params.tenantId);
      return renderList(request, reply, tenant, 200, { alert: noticeOf(request) });
    },
  );

  typed(scope).post(
    '/admin/tenants/:tenantId/webhooks',
    withParams(TenantParams),
    async (request, reply) => {
      const session = signedIn(request);
      const tenant = await tenantForAdmin(db, session.admin, request.params.tenantId);
      const form = endpointForm(request.body);
      const refused = await checkReauth(ctx, request, session);
      if (refused) return renderList(request, reply, tenant, 403, { form, alert: refused });
      try {
        const { endpoint, secret } = await createEndpoint(deps, tenant, {
          url: form.url,
          events: form.events,
        });
        await auditChange(db, session.admin, {
          tenantId: tenant.id,
          kind: 'webhook.endpoint_created',
          detail: described(endpoint),
        });
        // Shown in this answer only: no redirect, so the secret is in no URL and no later page.
        return renderEndpoint(request, reply, tenant, endpoint, 201, {
          shown: { secret, rotated: false },
        });
      } catch (error) {
        const alert = alertFor(error);
        return renderList(request, reply, tenant, 422, { form: refusedForm(form, error), alert });
      }
    },
  );

  typed(scope).get(
    '/admin/tenants/:tenantId/webhooks/:endpointId',
    withParams(EndpointParams),
    async (request, reply) => {
      const { tenant, endpoint } = await endpointOf(request);
      return renderEndpoint(request, reply, tenant, endpoint, 200, { alert: noticeOf(request) });
    },
  );

  typed(scope).post(
    '/admin/tenants/:tenantId/webhooks/:endpointId',
    withParams(EndpointParams),
    async (request, reply) => {
      const { session, tenant, endpoint: before } = await endpointOf(request);
      const form = endpointForm(request.body);
      try {
        const after = await updateEndpoint(db, tenant, before.id, {
          url: form.url,
          events: form.events,
        });
        await auditChange(db, session.admin, {
          tenantId: tenant.id,
          kind: 'webhook.endpoint_updated',
          detail: { endpointId: after.id, url: after.url, ...changes(before, after) },
        });
        return seeOther(reply, `${webhooksPath(tenant.id, after.id)}?done=saved`);
      } catch (error) {
        const alert = alertFor(error);
        return renderEndpoint(request, reply, tenant, before, 422, {
          form: refusedForm(form, error),
          alert,
        });
      }
    },
  );

  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const)
    typed(scope).post(
      `/admin/tenants/:tenantId/webhooks/:endpointId/${action}`,
      withParams(EndpointParams),
      async (request, reply) => {
        const { session, tenant, endpoint: before } = await endpointOf(request);
        const after = await updateEndpoint(db, tenant, before.id, { disabled });
        await auditChange(db, session.admin, {
          tenantId: tenant.id,
          kind: disabled ? 'webhook.endpoint_disabled' : 'webhook.endpoint_enabled',
          detail: {
            endpointId: after.id,
            url: after.url,
            ...(disabled ? { reason: 'operator' } : { wasDisabled: before.disabledReason }),
          },
        });
        return seeOther(reply, `${webhooksPath(tenant.id, after.id)}?done=endpoint-${action}d`);
      },
    );

  typed(scope).post(
    '/admin/tenants/:tenantId/webhooks/:endpointId/rotate-secret',
    withParams(EndpointParams),
    async (request, reply) => {
      const { session, tenant, endpoint } = await endpointOf(request);
      const refused = await checkReauth(ctx, request, session);
      if (refused) return renderEndpoint(request, reply, tenant, endpoint, 403, { alert: refused });
      const choice = formField(request.body, 'grace', 10);
      const grace = GRACE_CHOICES.find(([value]) => value === choice);
      if (!grace)
        return renderEndpoint(request, reply, tenant, endpoint, 422, {
          alert: {
            kind: 'error',
            message: 'Choose how long the old secret keeps signing; nothing was changed.',
          },
        });
      const rotated = await rotateEndpointSecret(deps, tenant.id, endpoint.id, grace[2]);
      await auditChange(db, session.admin, {
        tenantId: tenant.id,
        kind: 'webhook.secret_rotated',
        detail: {
          endpointId: endpoint.id,
          url: endpoint.url,
          oldSecretUntil: rotated.endpoint.previousSecretExpiresAt ?? 'now',
        },
      });
      return renderEndpoint(request, reply, tenant, rotated.endpoint, 200, {
        shown: { secret: rotated.secret, rotated: true },
      });
    },
  );

  typed(scope).get(
    '/admin/tenants/:tenantId/webhooks/:endpointId/delete',
    withParams(EndpointParams),
    async (request, reply) => {
      const { tenant, endpoint } = await endpointOf(request);
      return sendAdminPage(
        reply,
        200,
        deleteEndpointPage({ viewer: viewer(request, reply), tenant, endpoint }),
      );
    },
  );

  typed(scope).post(
    '/admin/tenants/:tenantId/webhooks/:endpointId/delete',
    withParams(EndpointParams),
    async (request, reply) => {
      const { session, tenant, endpoint } = await endpointOf(request);
      await deleteEndpoint(db, tenant.id, endpoint.id);
      await auditChange(db, session.admin, {
        tenantId: tenant.id,
        kind: 'webhook.endpoint_deleted',
        detail: described(endpoint),
      });
      return seeOther(reply, `${webhooksPath(tenant.id)}?done=endpoint-deleted`);
    },
  );

  typed(scope).post(
    '/admin/tenants/:tenantId/webhooks/:endpointId/deliveries/:deliveryId/resend',
    withParams(DeliveryParams),
    async (request, reply) => {
      const { session, tenant, endpoint } = await endpointOf(request);
      const original = await getDelivery(db, tenant.id, request.params.deliveryId);
      if (original.endpointId !== endpoint.id)
        throw new LatchkeyError('not_found', `No webhook delivery ${original.id}`);
      const resent = await resendDelivery(db, tenant.id, original.id);
      await auditChange(db, session.admin, {
        tenantId: tenant.id,
        kind: 'webhook.delivery_resent',
        detail: {
          endpointId: endpoint.id,
          url: endpoint.url,
          type: resent.type,
          messageId: resent.messageId,
          deliveryId: resent.id,
          resentFrom: original.id,
        },
      });
      return seeOther(reply, `${webhooksPath(tenant.id, endpoint.id)}?done=delivery-resent`);
    },
  );
}
