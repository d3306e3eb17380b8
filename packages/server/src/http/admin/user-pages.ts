import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import { type Admin, auditChange, needsReauth, tenantForAdmin } from '../../modules/admin/index.js';
import { sendAccountLink } from '../../modules/hosted/index.js';
import { deleteFactor, listFactors } from '../../modules/mfa/index.js';
import { exportUsers } from '../../modules/migration/index.js';
import { signOutEverywhere, updateUser } from '../../modules/sessions/index.js';
import { listIdentities } from '../../modules/social/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import { deleteUser, getUser, listUsers, type User } from '../../modules/users/index.js';
import { userPage, usersPage } from '../../views/admin/users.js';
import { type AppContext, accountDeps, hostedDeps } from '../context.js';
import { formField } from '../form-body.js';
import { seeOther } from '../pages/respond.js';
import { checkReauth } from './key-pages.js';
import {
  FactorParams,
  SessionParams,
  TenantParams,
  typed,
  UserParams,
  withParams,
} from './params.js';
import { alertFor, noticeOf, sendAdminPage, signedIn, viewer } from './responses.js';

/**
 * Users: search, one user's identities and sessions, and the actions of the REST API,
 * through the same service functions (updateUser, deleteUser, signOutEverywhere…).
 */
export function userPages(scope: FastifyInstance, ctx: AppContext) {
  const db = ctx.database.db;
  const deps = accountDeps(ctx);

  const listPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    tenant: Tenant,
    status: number,
    refusal?: ReturnType<typeof noticeOf>,
  ) => {
    const query = formField(request.query, 'q', defaults.email.maxLength).trim();
    let alert = refusal ?? noticeOf(request);
    let found: { data: User[]; nextCursor: string | null } = { data: [], nextCursor: null };
    try {
      found = await listUsers(db, tenant.id, {
        query: query || undefined,
        limit: defaults.admin.pageSize,
      });
    } catch (error) {
      alert = alertFor(error);
    }
    return sendAdminPage(
      reply,
      status,
      usersPage({
        viewer: viewer(request, reply),
        tenant,
        query,
        users: found.data,
        more: found.nextCursor !== null,
        reauth: needsReauth(signedIn(request)),
        alert,
      }),
    );
  };

  typed(scope).get(
    '/admin/tenants/:tenantId/users',
    withParams(TenantParams),
    async (request, reply) => {
      const tenant = await tenantForAdmin(db, signedIn(request).admin, request.params.tenantId);
      return listPage(request, reply, tenant, 200);
    },
  );

  // docs/design.md §16: the tenant's users as `latchkey export` writes them, streamed as a
  // download, after the password again (it holds every hash) and with an audit entry.
  typed(scope).post(
    '/admin/tenants/:tenantId/users/export',
    withParams(TenantParams),
    async (request, reply) => {
      const session = signedIn(request);
      const tenant = await tenantForAdmin(db, session.admin, request.params.tenantId);
      const refused = await checkReauth(ctx, request, session);
      if (refused) return listPage(request, reply, tenant, 403, refused);
      await auditChange(db, session.admin, {
        tenantId: tenant.id,
        kind: 'users_exported',
        detail: { format: 'jsonl' },
      });
      const lines = async function* () {
        for await (const user of exportUsers(db, tenant.id)) yield `${JSON.stringify(user)}\n`;
      };
      return reply
        .status(200)
        .header('content-type', 'application/x-ndjson; charset=utf-8')
        .header('content-disposition', `attachment; filename="latchkey-users-${tenant.id}.jsonl"`)
        .header('cache-control', 'no-store')
        .send(Readable.from(lines()));
    },
  );

  typed(scope).get(
    '/admin/tenants/:tenantId/users/:userId',
    withParams(UserParams),
    async (request, reply) => {
      const { tenantId, userId } = request.params;
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
          factors: await listFactors(db, tenant.id, user.id),
          sessions: await ctx.sessions.list(tenant.id, user.id),
          alert: noticeOf(request),
        }),
      );
    },
  );

  /** One user action: the service call, its audit entry, and back to the user's page. */
  const action = (
    path: string,
    kind: string,
    act: (tenant: Tenant, user: User, sessionId: string | undefined) => Promise<string>,
  ) =>
    typed(scope).post(
      `/admin/tenants/:tenantId/users/:userId${path}`,
      withParams(path.includes(':sessionId') ? SessionParams : UserParams),
      async (request, reply) => {
        const { admin } = signedIn(request);
        const { tenantId, userId } = request.params;
        const sessionId =
          'sessionId' in request.params ? String(request.params.sessionId) : undefined;
        const tenant = await tenantForAdmin(db, admin, tenantId);
        const user = await getUser(db, tenant.id, userId);
        const done = await act(tenant, user, sessionId);
        await audit(admin, tenant, user, kind, sessionId);
        const usersPath = `/admin/tenants/${tenant.id}/users`;
        return seeOther(
          reply,
          `${done === 'deleted' ? usersPath : `${usersPath}/${user.id}`}?done=${done}`,
        );
      },
    );

  /**
   * An operator's reset of one second factor (docs/design.md §13): allowed even for the last
   * one under `required`, where the user sets up a new one at the next sign-in.
   */
  typed(scope).post(
    '/admin/tenants/:tenantId/users/:userId/factors/:factorId/reset',
    withParams(FactorParams),
    async (request, reply) => {
      const { admin } = signedIn(request);
      const { tenantId, userId, factorId } = request.params;
      const tenant = await tenantForAdmin(db, admin, tenantId);
      const user = await getUser(db, tenant.id, userId);
      // The factor, its audit entry and its webhook event: one transaction.
      await db.transaction().execute(async (trx) => {
        const factor = await deleteFactor(trx, tenant, user.id, factorId, { reset: true });
        await auditChange(trx, admin, {
          tenantId: tenant.id,
          userId: user.id,
          kind: 'factor_reset',
          detail: { email: user.email, type: factor.type, factorId: factor.id },
        });
      });
      return seeOther(reply, `/admin/tenants/${tenant.id}/users/${user.id}?done=factor-reset`);
    },
  );

  const audit = (
    admin: Admin,
    tenant: Tenant,
    user: User,
    kind: string,
    sessionId: string | undefined,
  ) =>
    auditChange(db, admin, {
      tenantId: tenant.id,
      userId: user.id,
      kind,
      detail: { email: user.email, ...(sessionId ? { sessionId } : {}) },
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
  action('/sessions/:sessionId/revoke', 'session_revoked', async (t, u, sessionId = '') => {
    const session = await ctx.sessions.get(t.id, sessionId);
    if (session.userId !== u.id) throw new LatchkeyError('not_found', 'No such session');
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
