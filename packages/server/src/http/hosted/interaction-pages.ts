import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from 'oidc-provider';
import { defaults } from '../../config/defaults.js';
import {
  checkHostedRequest,
  type HostedRequest,
  hostedQuery,
  returningUserOf,
} from '../../modules/hosted/index.js';
import { interactionStartedAt } from '../../modules/oauth/index.js';
import { browserSessionBinding } from '../../modules/sessions/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import { getUser } from '../../modules/users/index.js';
import { consentPage } from '../../views/hosted.js';
import type { AppContext } from '../context.js';
import { formField } from '../form-body.js';
import { seeOther } from '../pages/respond.js';
import { PAGE } from '../pages/scope.js';
import { asIssuerRequest } from '../routes/oauth.js';
import { tenantOfPath } from '../routes/well-known.js';
import { errorPage, pageContext, sendPage } from './responses.js';
import { currentBrowserCookie } from './setup.js';

interface Params {
  tenantId: string;
  uid: string;
}

/**
 * Login reasons that the browser's live hosted session may answer (max_age: if recent
 * enough); any other (prompt=login, id_token_hint of another user…) asks for a new sign-in.
 */
const SESSION_REASONS = new Set(['no_session', 'hosted_session', 'max_age']);

/**
 * The OpenID Provider's interactions (docs/design.md §14): the hand-over between a
 * tenant's node-oidc-provider and the hosted pages. The provider sends the browser here
 * (its own cookie binds the interaction to that browser); the browser's hosted sign-in is
 * handed back as the login, or, when there is none (or the app asks for a new one), the
 * hosted sign-in page takes over with every method the tenant offers and returns here.
 * Apps that are not first-party get a consent page.
 */
export function interactionPages(scope: FastifyInstance, ctx: AppContext) {
  const db = ctx.database.db;

  async function tenantOf(request: FastifyRequest<{ Params: Params }>): Promise<Tenant> {
    const tenant = await tenantOfPath(db, request.params.tenantId);
    request.pageTenant = tenant;
    return tenant;
  }

  /** The interaction, or undefined once an error page says it is gone. */
  async function detailsOf(
    request: FastifyRequest<{ Params: Params }>,
    reply: FastifyReply,
    tenant: Tenant,
  ) {
    const provider = await ctx.oauthProviders.get(tenant);
    try {
      const details = await provider.interactionDetails(
        asIssuerRequest(request, ctx.config.publicUrl),
        reply.raw,
      );
      if (details.uid !== request.params.uid)
        throw new errors.SessionNotFound('another interaction');
      return { provider, details };
    } catch (error) {
      if (!(error instanceof errors.SessionNotFound)) throw error;
      await errorPage(
        request,
        reply,
        400,
        'This sign-in has expired',
        'It took too long, was finished already, or was started in another browser. Go back to the application and sign in again.',
      );
      return undefined;
    }
  }

  const hostedOf = (tenant: Tenant, uid: string): Promise<HostedRequest> =>
    checkHostedRequest(ctx, { tenant_id: tenant.id, interaction: uid });

  scope.get<{ Params: Params }>('/t/:tenantId/interaction/:uid', PAGE, async (request, reply) => {
    const tenant = await tenantOf(request);
    const found = await detailsOf(request, reply, tenant);
    if (!found) return reply;
    const { provider, details } = found;
    const h = await hostedOf(tenant, details.uid);
    const cookie = currentBrowserCookie(ctx, request, h);
    const user = await returningUserOf({ db }, tenant, cookie);
    const bound = user && cookie ? await browserSessionBinding(db, tenant.id, cookie) : undefined;
    const { prompt, params } = details;
    const signIn = (fresh: boolean) => {
      const query = new URLSearchParams(hostedQuery(h));
      if (fresh) query.set('prompt', 'login');
      if (
        typeof params.login_hint === 'string' &&
        params.login_hint.length <= defaults.email.maxLength
      )
        query.set('login_hint', params.login_hint);
      return seeOther(reply, `/sign-in?${query.toString()}`);
    };
    const finishLogin = async () => {
      if (!user || !bound) throw new Error('no hosted session to hand over');
      const to = await provider.interactionResult(
        asIssuerRequest(request, ctx.config.publicUrl),
        reply.raw,
        {
          login: {
            accountId: user.id,
            ts: Math.floor(bound.startedAt / 1_000),
            ...(bound.amr ? { amr: bound.amr } : {}),
            remember: true,
          },
        },
        { mergeWithLastSubmission: false },
      );
      return seeOther(reply, to);
    };

    if (prompt.name === 'login') {
      // A reason beyond "not signed in" (prompt=login, max_age, id_token_hint…) asks for a
      // sign-in made after this interaction began; anything else takes the live one.
      // A sign-in made since this interaction began answers every reason.
      const fresh = prompt.reasons.some((reason: string) => !SESSION_REASONS.has(reason));
      const began = (await interactionStartedAt(db, tenant.id, details.uid)) ?? Date.now();
      const maxAge = params.max_age === undefined ? Number.NaN : Number(params.max_age);
      if (!bound) return signIn(fresh);
      if (bound.startedAt >= began) return finishLogin();
      if (fresh) return signIn(true);
      if (Number.isFinite(maxAge) && Date.now() - bound.startedAt > maxAge * 1_000)
        return signIn(true);
      return finishLogin();
    }
    // Another account signed in on the hosted pages ("Use another account"): hand it over.
    if (user && bound && user.id !== details.session?.accountId) return finishLogin();
    if (prompt.name === 'consent' && details.session) {
      const client = await provider.Client.find(String(params.client_id));
      const account = await getUser(db, tenant.id, details.session.accountId);
      const asked = String(params.scope ?? '')
        .split(' ')
        .filter(Boolean);
      const redirect = URL.parse(String(params.redirect_uri));
      const apis = Object.keys(
        (prompt.details as { missingResourceScopes?: Record<string, string[]> })
          .missingResourceScopes ?? {},
      );
      return sendPage(
        reply,
        200,
        consentPage({
          ctx: pageContext(request),
          app: client?.clientName ?? String(params.client_id),
          email: account.email,
          scopes: asked,
          returnsTo: redirect?.origin ?? String(params.redirect_uri),
          action: `/t/${tenant.id}/interaction/${details.uid}/consent`,
          csrf: reply.generateCsrf(),
          switchTo: `/sign-in?${hostedQuery(h)}&prompt=login`,
          apis,
          registered: client?.latchkey_first_party !== true,
        }),
        h.formTo,
      );
    }
    return signIn(true);
  });

  scope.post<{ Params: Params }>(
    '/t/:tenantId/interaction/:uid/consent',
    PAGE,
    async (request, reply) => {
      const tenant = await tenantOf(request);
      const found = await detailsOf(request, reply, tenant);
      if (!found) return reply;
      const { provider, details } = found;
      const accountId = details.session?.accountId;
      if (details.prompt.name !== 'consent' || !accountId)
        return seeOther(reply, `/t/${tenant.id}/interaction/${details.uid}`);
      const decision = formField(request.body, 'decision');
      if (decision !== 'allow') {
        const to = await provider.interactionResult(
          asIssuerRequest(request, ctx.config.publicUrl),
          reply.raw,
          { error: 'access_denied', error_description: 'The user denied the request' },
          { mergeWithLastSubmission: false },
        );
        return seeOther(reply, to);
      }
      const clientId = String(details.params.client_id);
      const grant =
        (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ??
        new provider.Grant({ accountId, clientId });
      const missing = details.prompt.details as {
        missingOIDCScope?: string[];
        missingOIDCClaims?: string[];
        missingResourceScopes?: Record<string, string[]>;
      };
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
        grant.addResourceScope(indicator, scopes.join(' '));
      const grantId = await grant.save();
      const to = await provider.interactionResult(
        asIssuerRequest(request, ctx.config.publicUrl),
        reply.raw,
        { consent: { grantId } },
        { mergeWithLastSubmission: true },
      );
      return seeOther(reply, to);
    },
  );
}
