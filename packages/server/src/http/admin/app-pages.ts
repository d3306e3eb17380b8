import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import { auditChange, needsReauth, tenantForAdmin } from '../../modules/admin/index.js';
import {
  type App,
  createApp,
  deleteApp,
  getApp,
  listApps,
  rotateAppSecret,
  updateApp,
} from '../../modules/oauth/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import type { AppType } from '../../storage/index.js';
import {
  type AppForm,
  appPage,
  appsPage,
  appsPath,
  deleteAppPage,
  GRACE_CHOICES,
  type ShownSecret,
} from '../../views/admin/apps.js';
import type { Alert } from '../../views/kit.js';
import type { AppContext } from '../context.js';
import { formField } from '../form-body.js';
import { seeOther } from '../pages/respond.js';
import { checkReauth } from './key-pages.js';
import { AppParams, TenantParams, typed, withParams } from './params.js';
import { alertFor, noticeOf, sendAdminPage, signedIn, viewer } from './responses.js';
import { changes } from './tenant-pages.js';

/** The form as typed. The body is bounded (16 KB), so the lists are never cut here. */
const appForm = (body: unknown): AppForm => ({
  name: formField(body, 'name', defaults.oauth.appNameMaxLength),
  type: formField(body, 'type', 20),
  redirectUris: formField(body, 'redirectUris'),
  postLogoutRedirectUris: formField(body, 'postLogoutRedirectUris'),
});

/** One URI a line (any white space parts them: a URI holds none). */
const uris = (text: string) => text.split(/\s+/).filter(Boolean);

const isConfidential = (type: string) => type === 'web' || type === 'm2m';

/** What an audit entry says of an app: never its secret (the service never hands it back). */
const described = (app: App) => ({
  appId: app.id,
  name: app.name,
  type: app.type,
  redirectUris: app.redirectUris,
  postLogoutRedirectUris: app.postLogoutRedirectUris,
});

/**
 * Applications (docs/design.md §14): a tenant's OAuth clients through the apps service,
 * under the CLI's rules. A client secret is shown in the answer that makes it (creation of
 * a web or m2m app, rotation), never in a URL or a later page, after the password again
 * when the sign-in is older than 10 minutes, as for secret keys.
 */
export function appPages(scope: FastifyInstance, ctx: AppContext) {
  const db = ctx.database.db;
  const deps = { db, bus: ctx.bus };

  const renderList = async (
    request: FastifyRequest,
    reply: FastifyReply,
    tenant: Tenant,
    status: number,
    extra: { form?: AppForm; alert?: Alert } = {},
  ) =>
    sendAdminPage(
      reply,
      status,
      appsPage({
        viewer: viewer(request, reply),
        tenant,
        apps: await listApps(db, tenant.id),
        authUrl: ctx.authUrl,
        reauth: needsReauth(signedIn(request)),
        ...extra,
      }),
    );

  const renderApp = (
    request: FastifyRequest,
    reply: FastifyReply,
    tenant: Tenant,
    app: App,
    status: number,
    extra: { form?: AppForm; alert?: Alert; shown?: ShownSecret } = {},
  ) =>
    sendAdminPage(
      reply,
      status,
      appPage({
        viewer: viewer(request, reply),
        tenant,
        app,
        authUrl: ctx.authUrl,
        reauth: needsReauth(signedIn(request)),
        ...extra,
      }),
    );

  typed(scope).get(
    '/admin/tenants/:tenantId/apps',
    withParams(TenantParams),
    async (request, reply) => {
      const tenant = await tenantForAdmin(db, signedIn(request).admin, request.params.tenantId);
      return renderList(request, reply, tenant, 200, { alert: noticeOf(request) });
    },
  );

  typed(scope).post(
    '/admin/tenants/:tenantId/apps',
    withParams(TenantParams),
    async (request, reply) => {
      const session = signedIn(request);
      const tenant = await tenantForAdmin(db, session.admin, request.params.tenantId);
      const form = appForm(request.body);
      if (isConfidential(form.type)) {
        const refused = await checkReauth(ctx, request, session);
        if (refused) return renderList(request, reply, tenant, 403, { form, alert: refused });
      }
      try {
        const { app, clientSecret } = await createApp(db, tenant.id, {
          name: form.name,
          type: form.type as AppType,
          redirectUris: uris(form.redirectUris),
          postLogoutRedirectUris: uris(form.postLogoutRedirectUris),
        });
        await auditChange(db, session.admin, {
          tenantId: tenant.id,
          kind: 'app_created',
          detail: described(app),
        });
        if (clientSecret === null)
          return seeOther(reply, `${appsPath(tenant.id, app.id)}?done=app-created`);
        // Shown in this answer only: no redirect, so the secret is in no URL and no later page.
        return renderApp(request, reply, tenant, app, 201, {
          shown: { secret: clientSecret, rotated: false },
        });
      } catch (error) {
        return renderList(request, reply, tenant, 422, { form, alert: alertFor(error) });
      }
    },
  );

  typed(scope).get(
    '/admin/tenants/:tenantId/apps/:appId',
    withParams(AppParams),
    async (request, reply) => {
      const tenant = await tenantForAdmin(db, signedIn(request).admin, request.params.tenantId);
      const app = await getApp(db, tenant.id, request.params.appId);
      return renderApp(request, reply, tenant, app, 200, { alert: noticeOf(request) });
    },
  );

  typed(scope).post(
    '/admin/tenants/:tenantId/apps/:appId',
    withParams(AppParams),
    async (request, reply) => {
      const { admin } = signedIn(request);
      const tenant = await tenantForAdmin(db, admin, request.params.tenantId);
      const before = await getApp(db, tenant.id, request.params.appId);
      const form = { ...appForm(request.body), type: before.type };
      try {
        const after = await updateApp(deps, tenant.id, before.id, {
          name: form.name,
          // An m2m app's page has no URI fields: its (empty) lists stay as they are.
          ...(before.type !== 'm2m' && {
            redirectUris: uris(form.redirectUris),
            postLogoutRedirectUris: uris(form.postLogoutRedirectUris),
          }),
        });
        await auditChange(db, admin, {
          tenantId: tenant.id,
          kind: 'app_updated',
          detail: { appId: after.id, name: after.name, ...changes(before, after) },
        });
        return seeOther(reply, `${appsPath(tenant.id, after.id)}?done=saved`);
      } catch (error) {
        return renderApp(request, reply, tenant, before, 422, { form, alert: alertFor(error) });
      }
    },
  );

  typed(scope).post(
    '/admin/tenants/:tenantId/apps/:appId/rotate-secret',
    withParams(AppParams),
    async (request, reply) => {
      const session = signedIn(request);
      const tenant = await tenantForAdmin(db, session.admin, request.params.tenantId);
      const app = await getApp(db, tenant.id, request.params.appId);
      const refused = await checkReauth(ctx, request, session);
      if (refused) return renderApp(request, reply, tenant, app, 403, { alert: refused });
      const choice = formField(request.body, 'grace', 10);
      const grace = GRACE_CHOICES.find(([value]) => value === choice);
      if (!grace)
        return renderApp(request, reply, tenant, app, 422, {
          alert: {
            kind: 'error',
            message: 'Choose how long the old secret keeps working; nothing was changed.',
          },
        });
      try {
        const rotated = await rotateAppSecret(deps, tenant.id, app.id, grace[2]);
        await auditChange(db, session.admin, {
          tenantId: tenant.id,
          kind: 'app_secret_rotated',
          detail: {
            appId: app.id,
            name: app.name,
            oldSecretUntil: rotated.app.previousSecretExpiresAt ?? 'now',
          },
        });
        return renderApp(request, reply, tenant, rotated.app, 200, {
          shown: { secret: rotated.clientSecret, rotated: true },
        });
      } catch (error) {
        return renderApp(request, reply, tenant, app, 409, { alert: alertFor(error) });
      }
    },
  );

  typed(scope).get(
    '/admin/tenants/:tenantId/apps/:appId/delete',
    withParams(AppParams),
    async (request, reply) => {
      const tenant = await tenantForAdmin(db, signedIn(request).admin, request.params.tenantId);
      const app = await getApp(db, tenant.id, request.params.appId);
      return sendAdminPage(
        reply,
        200,
        deleteAppPage({ viewer: viewer(request, reply), tenant, app }),
      );
    },
  );

  typed(scope).post(
    '/admin/tenants/:tenantId/apps/:appId/delete',
    withParams(AppParams),
    async (request, reply) => {
      const { admin } = signedIn(request);
      const tenant = await tenantForAdmin(db, admin, request.params.tenantId);
      const app = await deleteApp(deps, tenant.id, request.params.appId);
      await auditChange(db, admin, {
        tenantId: tenant.id,
        kind: 'app_deleted',
        detail: { appId: app.id, name: app.name, type: app.type },
      });
      return seeOther(reply, `${appsPath(tenant.id)}?done=app-deleted`);
    },
  );
}
