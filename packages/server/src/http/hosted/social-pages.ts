import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { socialDefaults } from '../../config/defaults.js';
import {
  hostedQuery,
  signInWithProvider,
  startedOnCallerPage,
} from '../../modules/hosted/index.js';
import {
  authorizationOrigin,
  claimFlow,
  developmentProfile,
  finishFlow,
  inDevelopmentMode,
  isProviderId,
  PROVIDERS,
  type Profile,
  type ProviderId,
  pendingDevelopmentFlow,
  SocialRefusal,
  startFlow,
} from '../../modules/social/index.js';
import { getTenant, type Tenant } from '../../modules/tenants/index.js';
import { buttonPage, developmentProviderPage, messagePage } from '../../views/hosted.js';
import { finishTestSignIn } from '../admin/social-test.js';
import { type AppContext, hostedDeps } from '../context.js';
import { formField as field } from '../form-body.js';
import { isSecure } from '../pages/cookies.js';
import { seeOther } from '../pages/respond.js';
import { CROSS_SITE_POST, PAGE } from '../pages/scope.js';
import { flowCookie as stateCookie } from './cookies.js';
import { pageContext, sendPage } from './responses.js';
import { currentBrowserCookie, redirectSignedIn, resolveHosted } from './setup.js';

/** The provider routes' path parameter (checked with isProviderId: an unknown one gets a page). */
type Route = { Params: { provider: string } };
type WithProvider = FastifyRequest<Route>;

/** Only the string fields of a form body (anything else is not an OAuth answer). */
function stringFields(body: unknown): URLSearchParams {
  const params = new URLSearchParams();
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    for (const [k, v] of Object.entries(body)) if (typeof v === 'string') params.set(k, v);
  }
  return params;
}

/** Social sign-in (docs/design.md §20): the provider buttons lead here, and the answers come back here. */
export function socialPages(scope: FastifyInstance, ctx: AppContext) {
  const secure = isSecure(ctx.authUrl);
  const [send, page] = [sendPage, pageContext];
  const hosted = (request: FastifyRequest, reply: FastifyReply, query?: Record<string, unknown>) =>
    resolveHosted(ctx, request, reply, query);

  // ----- Social sign-in (docs/design.md §20): start, and the provider's answer -----
  const flowDeps = {
    db: ctx.database.db,
    bus: ctx.bus,
    box: ctx.box,
    limiter: ctx.limiter,
    authUrl: ctx.authUrl,
    providerEndpoints: ctx.config.providerEndpoints,
  };
  // __Host- under https (RFC 6265bis): no subdomain or plain-http page can plant one.
  const flowCookie = (provider: string) => stateCookie(ctx.authUrl, provider);
  // An answer sent as a cross-site POST (form_post) only carries a SameSite=None cookie,
  // which browsers accept only when Secure. Clearing needs the same attributes: a browser
  // ignores a __Host- cookie (set or cleared) without Secure.
  const flowCookieAttributes = (provider: ProviderId) => {
    const crossSitePost = PROVIDERS[provider].responseMode === 'form_post';
    return {
      path: '/',
      httpOnly: true,
      sameSite: crossSitePost ? ('none' as const) : ('lax' as const),
      secure: crossSitePost || secure,
    };
  };
  const socialRefusal = (
    request: FastifyRequest,
    reply: FastifyReply,
    message: string,
    back?: string,
  ) =>
    send(
      reply,
      400,
      messagePage(
        page(request),
        'Sign-in did not work',
        message,
        back ? { href: back, text: 'Back to sign in' } : undefined,
        'error',
      ),
    );

  /**
   * Starts a provider sign-in. A request that asks for a PKCE code (which yields a
   * long-lived refresh token) takes one click on our page first, as a returning browser
   * does on /sign-in: a crafted link cannot mint a code through a provider that approves
   * silently. A click on the caller's own page (the browser library's buttons) counts.
   */
  async function begin(request: WithProvider, reply: FastifyReply, clicked: boolean) {
    const { provider } = request.params;
    const q = field(clicked ? request.body : request.query, 'q') || field(request.query, 'q');
    const h = await hosted(request, reply, Object.fromEntries(new URLSearchParams(q)));
    if (!h) return reply;
    const back = `/sign-in?${hostedQuery(h)}`;
    if (!isProviderId(provider))
      return socialRefusal(request, reply, 'There is no such sign-in provider.', back);
    if (h.codeChallenge && !clicked && !startedOnCallerPage(h, request.headers.referer)) {
      try {
        const origin = await authorizationOrigin(flowDeps, h.tenant, provider);
        return send(
          reply,
          200,
          buttonPage({
            ctx: page(request),
            title: `Continue with ${PROVIDERS[provider].name}`,
            message: `You will sign in to ${h.tenant.name} with your ${PROVIDERS[provider].name} account.`,
            action: `/oauth/${provider}/start?q=${encodeURIComponent(q)}`,
            csrf: reply.generateCsrf(),
            button: `Continue with ${PROVIDERS[provider].name}`,
            link: { href: back, text: 'Back to sign in' },
          }),
          // Chrome applies form-action to the redirect to the provider as well.
          [origin],
        );
      } catch (error) {
        if (error instanceof SocialRefusal)
          return socialRefusal(request, reply, error.message, back);
        throw error;
      }
    }
    try {
      const { url, state } = await startFlow(flowDeps, h.tenant, provider, {
        hostedQuery: hostedQuery(h),
        ip: request.ip,
      });
      // The state is bound to this browser: an answer arriving in another browser is
      // refused (login CSRF).
      reply.setCookie(flowCookie(provider), state, {
        ...flowCookieAttributes(provider),
        maxAge: socialDefaults.flowLifetimeSeconds,
      });
      return seeOther(reply, url);
    } catch (error) {
      if (error instanceof SocialRefusal) return socialRefusal(request, reply, error.message, back);
      throw error;
    }
  }

  scope.get<Route>('/oauth/:provider/start', PAGE, (request, reply) =>
    begin(request, reply, false),
  );
  scope.post<Route>('/oauth/:provider/start', PAGE, (request, reply) =>
    begin(request, reply, true),
  );

  /**
   * A provider's answer (or development mode's typed one): the flow is claimed once (state
   * bound to this browser), then `finish` gives the profile, which signs in through the
   * linking policy and comes back to the app, or an admin's test shows it.
   */
  async function answer(
    request: FastifyRequest,
    reply: FastifyReply,
    provider: ProviderId,
    state: string | null,
    finish: (tenant: Tenant, flow: Awaited<ReturnType<typeof claimFlow>>) => Promise<Profile>,
  ) {
    const bound = request.cookies[flowCookie(provider)];
    reply.clearCookie(flowCookie(provider), flowCookieAttributes(provider));
    let flow: Awaited<ReturnType<typeof claimFlow>>;
    try {
      flow = await claimFlow(flowDeps, provider, state, bound);
    } catch (error) {
      if (!(error instanceof SocialRefusal)) throw error;
      return refusedFlow(request, reply, error);
    }
    // An admin's "Test sign-in": the profile is shown to the admin, and nothing is created.
    if (flow.admin_id)
      return finishTestSignIn(ctx, request, reply, provider, flow, (tenant) =>
        finish(tenant, flow),
      );
    const h = await hosted(
      request,
      reply,
      Object.fromEntries(new URLSearchParams(flow.hosted_query)),
    );
    if (!h) return reply;
    const back = `/sign-in?${hostedQuery(h)}`;
    try {
      const profile = await finish(h.tenant, flow);
      const signedIn = await signInWithProvider(hostedDeps(ctx), h, provider, profile, {
        ip: request.ip,
        userAgent: request.headers['user-agent'],
        previousCookie: currentBrowserCookie(ctx, request, h),
      });
      return redirectSignedIn(ctx, reply, h, signedIn);
    } catch (error) {
      if (error instanceof SocialRefusal) return socialRefusal(request, reply, error.message, back);
      throw error;
    }
  }

  async function callback(request: WithProvider, reply: FastifyReply, params: URLSearchParams) {
    const { provider } = request.params;
    if (!isProviderId(provider))
      return socialRefusal(request, reply, 'There is no such sign-in provider.');
    return answer(request, reply, provider, params.get('state'), (tenant, flow) =>
      finishFlow(flowDeps, tenant, provider, flow, params, (error) =>
        request.log.warn({ err: error, provider }, 'social sign-in failed at the provider'),
      ),
    );
  }

  scope.get<Route>('/oauth/:provider/callback', PAGE, (request, reply) =>
    callback(request, reply, new URLSearchParams(request.url.split('?')[1] ?? '')),
  );
  // response_mode=form_post (Apple; no CSRF token: the state cookie binds it instead).
  scope.post<Route>('/oauth/:provider/callback', CROSS_SITE_POST, (request, reply) =>
    callback(request, reply, stringFields(request.body)),
  );

  // ----- Development mode (docs/design.md §20): our page stands in for the provider -----
  const notDevelopment = (name: string) =>
    `${name} sign-in is not in development mode here: development mode is only for development tenants.`;

  /**
   * The development flow a request names, with its tenant; refused unless the flow is
   * pending and the provider is in development mode on a development tenant (whatever a
   * row says, never on a production one). The page is branded like the flow's start.
   */
  async function developmentFlow(
    request: FastifyRequest,
    reply: FastifyReply,
    provider: ProviderId,
    state: string,
  ) {
    const flow = await pendingDevelopmentFlow(ctx.database.db, provider, state);
    let tenant: Tenant;
    let back: string | undefined;
    // The answer's redirect back to the app: Chrome applies form-action to it.
    let formTo: string[] = [];
    if (flow.hosted_query) {
      const h = await hosted(
        request,
        reply,
        Object.fromEntries(new URLSearchParams(flow.hosted_query)),
      );
      if (!h) return undefined;
      tenant = h.tenant;
      back = `/sign-in?${hostedQuery(h)}`;
      formTo = h.formTo;
    } else {
      // An admin's "Test sign-in".
      tenant = await getTenant(ctx.database.db, flow.tenant_id);
      request.pageTenant = tenant;
    }
    if (!(await inDevelopmentMode(ctx.database.db, tenant, provider)))
      throw new SocialRefusal(
        notDevelopment(PROVIDERS[provider].name),
        flow.hosted_query || undefined,
      );
    return { tenant, back, formTo };
  }

  /** A refused attempt; when it is known, the page is branded and leads back to its start. */
  async function refusedFlow(request: FastifyRequest, reply: FastifyReply, error: SocialRefusal) {
    if (error.hostedQuery === undefined) return socialRefusal(request, reply, error.message);
    const from = await hosted(
      request,
      reply,
      Object.fromEntries(new URLSearchParams(error.hostedQuery)),
    );
    if (!from) return reply;
    return socialRefusal(request, reply, error.message, `/sign-in?${hostedQuery(from)}`);
  }

  type DevelopmentRoute = { Params: { provider: string } };
  /** The development page of a pending flow: blank, or again with what was typed and why not. */
  const developmentPage = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    flow: { provider: ProviderId; state: string; back?: string; formTo: string[] },
    typed: Omit<
      Parameters<typeof developmentProviderPage>[0],
      'ctx' | 'csrf' | 'provider' | 'state' | 'link'
    >,
  ) =>
    send(
      reply,
      status,
      developmentProviderPage({
        ...typed,
        provider: { id: flow.provider, name: PROVIDERS[flow.provider].name },
        state: flow.state,
        link: flow.back ? { href: flow.back, text: 'Back to sign in' } : undefined,
        ctx: page(request),
        csrf: reply.generateCsrf(),
      }),
      flow.formTo,
    );

  scope.get<DevelopmentRoute>('/oauth/:provider/development', PAGE, async (request, reply) => {
    const { provider } = request.params;
    if (!isProviderId(provider))
      return socialRefusal(request, reply, 'There is no such sign-in provider.');
    const state = field(request.query, 'state');
    try {
      if (request.cookies[flowCookie(provider)] !== state)
        throw new SocialRefusal(
          'This sign-in attempt was started in another browser. Start again.',
        );
      const found = await developmentFlow(request, reply, provider, state);
      if (!found) return reply;
      return developmentPage(
        request,
        reply,
        200,
        { provider, state, ...found },
        { emailVerified: true },
      );
    } catch (error) {
      if (error instanceof SocialRefusal) return refusedFlow(request, reply, error);
      throw error;
    }
  });

  scope.post<DevelopmentRoute>('/oauth/:provider/development', PAGE, async (request, reply) => {
    const { provider } = request.params;
    if (!isProviderId(provider))
      return socialRefusal(request, reply, 'There is no such sign-in provider.');
    const state = field(request.body, 'state');
    const typed = {
      email: field(request.body, 'email', 512),
      name: field(request.body, 'name', 512),
      emailVerified: field(request.body, 'emailVerified') === 'on',
    };
    try {
      const found = await developmentFlow(request, reply, provider, state);
      if (!found) return reply;
      const result = developmentProfile(provider, typed);
      if ('errors' in result) {
        // The form again, with what was typed; nothing changed (the flow is still pending).
        const first = result.errors[0];
        return developmentPage(
          request,
          reply,
          422,
          { provider, state, ...found },
          {
            ...typed,
            alert: { kind: 'error', message: result.errors.map((e) => e.message).join(' ') },
            invalid: first?.path === '/name' ? 'name' : 'email',
          },
        );
      }
      return answer(request, reply, provider, state, async (tenant) => {
        // Checked again at the end: the mode or the tenant may have changed meanwhile.
        if (!(await inDevelopmentMode(ctx.database.db, tenant, provider)))
          throw new SocialRefusal(notDevelopment(PROVIDERS[provider].name));
        return result.profile;
      });
    } catch (error) {
      if (error instanceof SocialRefusal) return refusedFlow(request, reply, error);
      throw error;
    }
  });
}
