import type { FastifyInstance, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import { type Admin, auditChange, tenantForAdmin } from '../../modules/admin/index.js';
import { userPage, usersPage } from '../../modules/admin/views/users.js';
import { sendAccountLink } from '../../modules/hosted/index.js';
import { signOutEverywhere, updateUser } from '../../modules/sessions/index.js';
import { listIdentities } from '../../modules/social/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import { deleteUser, getUser, listUsers, type User } from '../../modules/users/index.js';
import { type AppContext, accountDeps, hostedDeps } from '../context.js';
import { formField } from '../form-body.js';
import { PAGE } from '../hosted/responses.js';
import { alertFor, noticeOf, seeOther, sendAdminPage, signedIn, viewer } from './responses.js';

type Params = { tenantId: string; userId: string; sessionId?: string };

/**
 * Users: search, one user's identities and sessions, and the actions of the REST API,
 * through the same service functions (updateUser, deleteUser, signOutEverywhere…).
 */
export function userPages(scope: FastifyInstance, ctx: AppContext) {
  const db = ctx.database.db;
  const deps = accountDeps(ctx);

  scope.get('/admin/tenants/:tenantId/users', PAGE, async (request, reply) => {
    const tenant = await tenantForAdmin(
      db,
      signedIn(request).admin,
      (request.params as Params).tenantId,
    );
    const email = formField(request.query, 'email', defaults.email.maxLength).trim();
    let alert = noticeOf(request);
    let found: { data: User[]; nextCursor: string | null } = { data: [], nextCursor: null };
    try {
      found = await listUsers(db, tenant.id, {
        email: email || undefined,
        limit: defaults.admin.pageSize,
      });
    } catch (error) {
      alert = alertFor(error);
    }
    return sendAdminPage(
      reply,
      200,
      usersPage({
        viewer: viewer(request, reply),
        tenant,
        email,
        users: found.data,
        more: found.nextCursor !== null,
        alert,
      }),
    );
  });

  scope.get('/admin/tenants/:tenantId/users/:userId', PAGE, async (request, reply) => {
    const { tenantId, userId } = request.params as Params;
    const tenant = await tenantForAdmin(db, signedIn(request).admin, tenantId);
    const user = await getUser(db, tenant.id, userId);
    return sendAdminPage(
      reply,
      200,
      userPage({
        viewer: viewer(request, reply),
        tenant,
        user,
        identities: await listIdentities(db, tenant.id, user.id),
        sessions: await ctx.sessions.list(tenant.id, user.id),
        alert: noticeOf(request),
      }),
    );
  });

  /** One user action: the service call, its audit entry, and back to the user's page. */
  const action = (
    path: string,
    kind: string,
    act: (tenant: Tenant, user: User, request: FastifyRequest) => Promise<string>,
  ) =>
    scope.post(`/admin/tenants/:tenantId/users/:userId${path}`, PAGE, async (request, reply) => {
      const { admin } = signedIn(request);
      const { tenantId, userId } = request.params as Params;
      const tenant = await tenantForAdmin(db, admin, tenantId);
      const user = await getUser(db, tenant.id, userId);
      const done = await act(tenant, user, request);
      await audit(admin, tenant, user, kind, request);
      const usersPath = `/admin/tenants/${tenant.id}/users`;
      return seeOther(
        reply,
        `${done === 'deleted' ? usersPath : `${usersPath}/${user.id}`}?done=${done}`,
      );
    });

  const audit = (admin: Admin, tenant: Tenant, user: User, kind: string, request: FastifyRequest) =>
    auditChange(db, admin, {
      tenantId: tenant.id,
      userId: user.id,
      kind,
      detail: {
        email: user.email,
        ...((request.params as Params).sessionId
          ? { sessionId: (request.params as Params).sessionId }
          : {}),
      },
    });

  action('/disable', 'user_disabled', async (t, u) => {
    await updateUser(deps, t.id, u.id, { disabled: true });
    return 'disabled';
  });
  action('/enable', 'user_enabled', async (t, u) => {
    await updateUser(deps, t.id, u.id, { disabled: false });
    return 'enabled';
  });
  action('/delete', 'user_deleted', async (t, u) => {
    await deleteUser(deps, t.id, u.id);
    return 'deleted';
  });
  action('/sign-out-everywhere', 'user_signed_out_everywhere', async (t, u) => {
    await signOutEverywhere(deps, t.id, u.id);
    return 'signed-out';
  });
  action('/sessions/:sessionId/revoke', 'session_revoked', async (t, _u, request) => {
    const sessionId = String((request.params as Params).sessionId);
    const session = await ctx.sessions.get(t.id, sessionId);
    if (session.userId !== (request.params as Params).userId)
      throw new LatchkeyError('not_found', 'No such session');
    await ctx.sessions.revokeSession(t.id, sessionId);
    return 'session-revoked';
  });
  for (const [path, kind, purpose, done] of [
    ['/resend-verification', 'verification_sent', 'verify', 'verification-sent'],
    ['/send-password-reset', 'password_reset_sent', 'reset', 'reset-sent'],
  ] as const) {
    action(path, kind, async (t, u) => {
      if (!(await sendAccountLink(hostedDeps(ctx), t, u, purpose)))
        throw new LatchkeyError('rate_limited', 'Too many mails to this user; try again later');
      return done;
    });
  }
}
