import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { defaults } from '../../config/defaults.js';
import { LatchkeyError } from '../../errors/index.js';
import {
  type AdminSession,
  auditChange,
  needsReauth,
  reauthenticate,
  tenantForAdmin,
} from '../../modules/admin/index.js';
import { createKey, listKeys, revokeKey, SCOPES } from '../../modules/keys/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import { keysPage, revokeLastPublishablePage } from '../../views/admin/keys.js';
import type { AppContext } from '../context.js';
import { formField } from '../form-body.js';
import { seeOther } from '../pages/respond.js';
import { KeyParams, TenantParams, typed, withParams } from './params.js';
import { alertFor, noticeOf, sendAdminPage, signedIn, viewer } from './responses.js';
import { adminSignInDeps } from './session-pages.js';

/**
 * A sensitive step asks for the password again when the last one is older than
 * defaults.admin.reauthAfterMs. Undefined when the session is fresh (again); an alert otherwise.
 */
export async function checkReauth(ctx: AppContext, request: FastifyRequest, session: AdminSession) {
  if (!needsReauth(session)) return undefined;
  const password = formField(request.body, 'reauth_password', defaults.password.maxLength);
  if (!password) return { kind: 'error' as const, message: 'Type your password again to do this.' };
  try {
    await reauthenticate(adminSignInDeps(ctx), session, password, request.ip);
    return undefined;
  } catch (error) {
    if (!(error instanceof LatchkeyError)) throw error;
    return {
      kind: 'error' as const,
      message:
        error.code === 'rate_limited' ? error.message : 'That password is wrong; nothing was done.',
    };
  }
}

/**
 * API Keys: publishable and secret keys in groups; create either (a secret shown once),
 * revoke (the last live publishable key only after a page that says what stops working).
 */
export function keyPages(scope: FastifyInstance, ctx: AppContext) {
  const db = ctx.database.db;
  const render = async (
    request: FastifyRequest,
    reply: FastifyReply,
    tenant: Tenant,
    status: number,
    extra: { created?: string; alert?: ReturnType<typeof noticeOf> } = {},
  ) =>
    sendAdminPage(
      reply,
      status,
      keysPage({
        viewer: viewer(request, reply),
        tenant,
        keys: await listKeys(db, tenant.id),
        scopes: SCOPES,
        reauth: needsReauth(signedIn(request)),
        ...extra,
      }),
    );

  typed(scope).get(
    '/admin/tenants/:tenantId/keys',
    withParams(TenantParams),
    async (request, reply) => {
      const tenant = await tenantForAdmin(db, signedIn(request).admin, request.params.tenantId);
      return render(request, reply, tenant, 200, { alert: noticeOf(request) });
    },
  );

  typed(scope).post(
    '/admin/tenants/:tenantId/keys',
    withParams(TenantParams),
    async (request, reply) => {
      const session = signedIn(request);
      const tenant = await tenantForAdmin(db, session.admin, request.params.tenantId);
      const kind = formField(request.body, 'kind', 20) === 'publishable' ? 'publishable' : 'secret';
      // A secret key is shown in this answer: the password again if the sign-in is old.
      // A publishable key is public (listed in full), so it needs no more than the session.
      if (kind === 'secret') {
        const refused = await checkReauth(ctx, request, session);
        if (refused) return render(request, reply, tenant, 403, { alert: refused });
      }
      const scopes = SCOPES.filter((s) => formField(request.body, `scope_${s}`) === 'on');
      try {
        const { key, plaintext } = await createKey(db, tenant.id, {
          kind,
          scopes: kind === 'secret' ? scopes : undefined,
          name: formField(request.body, 'keyName', 100) || undefined,
        });
        await auditChange(db, session.admin, {
          tenantId: tenant.id,
          kind: 'key_created',
          detail:
            kind === 'secret'
              ? { keyId: key.id, key: key.display, scopes: key.scopes }
              : { keyId: key.id, key: key.publishableKey, kind },
        });
        if (kind === 'publishable')
          return seeOther(reply, `/admin/tenants/${tenant.id}/keys?done=publishable-created`);
        // Shown in this answer only: no redirect, so the key is in no URL and no later page.
        return render(request, reply, tenant, 201, { created: plaintext });
      } catch (error) {
        return render(request, reply, tenant, 422, { alert: alertFor(error) });
      }
    },
  );

  typed(scope).post(
    '/admin/tenants/:tenantId/keys/:keyId/revoke',
    withParams(KeyParams),
    async (request, reply) => {
      const { admin } = signedIn(request);
      const { tenantId, keyId } = request.params;
      const tenant = await tenantForAdmin(db, admin, tenantId);
      // The last live publishable key: first a page that says what stops working.
      const keys = await listKeys(db, tenant.id);
      const target = keys.find((k) => k.id === keyId);
      const livePublishable = keys.filter((k) => k.kind === 'publishable' && !k.revokedAt);
      if (
        target?.kind === 'publishable' &&
        !target.revokedAt &&
        livePublishable.length === 1 &&
        formField(request.body, 'confirm', 40) !== 'last-publishable'
      ) {
        return sendAdminPage(
          reply,
          200,
          revokeLastPublishablePage({ viewer: viewer(request, reply), tenant, key: target }),
        );
      }
      const key = await revokeKey({ db, bus: ctx.bus }, tenant.id, keyId);
      await auditChange(db, admin, {
        tenantId: tenant.id,
        kind: 'key_revoked',
        detail: { keyId: key.id, key: key.publishableKey ?? key.display },
      });
      return seeOther(reply, `/admin/tenants/${tenant.id}/keys?done=revoked`);
    },
  );
}
