import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { socialDefaults } from '../../config/defaults.js';
import {
  buttonPage,
  type HostedRequest,
  hostedQuery,
  messagePage,
} from '../../modules/hosted/index.js';
import { addressBucket } from '../../modules/rate-limit/index.js';
import {
  authorizationOrigin,
  claimFlow,
  finishFlow,
  isProviderId,
  PROVIDERS,
  SocialRefusal,
  startFlow,
  userForProfile,
} from '../../modules/social/index.js';
import type { User } from '../../modules/users/index.js';
import type { AppContext } from '../context.js';
import { formField as field } from '../form-body.js';
import { isSecure } from './cookies.js';
import { formRoute, PAGE, pageContext, sendPage } from './responses.js';
import { finishSignIn, resolveHosted } from './setup.js';

/** Only the string fields of a form body (anything else is not an OAuth answer). */
function stringFields(body: unknown): URLSearchParams {
  const params = new URLSearchParams();
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    for (const [k, v] of Object.entries(body)) if (typeof v === 'string') params.set(k, v);
  }
  return params;
}

/** Social sign-in (reference section 1): the provider buttons lead here, and the answers come back here. */
export function socialPages(scope: FastifyInstance, ctx: AppContext) {
  const secure = isSecure(ctx.authUrl);
  const [send, page, get, csrfCheck] = [sendPage, pageContext, PAGE, formRoute(scope)];
  const hosted = (request: FastifyRequest, reply: FastifyReply, query?: Record<string, unknown>) =>
    resolveHosted(ctx, request, reply, query);
  const finish = (request: FastifyRequest, reply: FastifyReply, h: HostedRequest, user: User) =>
    finishSignIn(ctx, request, reply, h, user);

  // ----- Social sign-in (reference section 1): start, and the provider's answer -----
  const flowDeps = {
    db: ctx.database.db,
    bus: ctx.bus,
    box: ctx.box,
    authUrl: ctx.authUrl,
    providerEndpoints: ctx.config.providerEndpoints,
  };
  // __Host- under https (RFC 6265bis): no subdomain or plain-http page can plant one.
  const flowCookie = (provider: string) => `${secure ? '__Host-' : ''}latchkey_oauth_${provider}`;
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
   * silently.
   */
  async function begin(request: FastifyRequest, reply: FastifyReply, clicked: boolean) {
    const { provider } = request.params as { provider: string };
    const q = field(clicked ? request.body : request.query, 'q') || field(request.query, 'q');
    const h = await hosted(request, reply, Object.fromEntries(new URLSearchParams(q)));
    if (!h) return reply;
    const back = `/sign-in?${hostedQuery(h)}`;
    if (!isProviderId(provider))
      return socialRefusal(request, reply, 'There is no such sign-in provider.', back);
    const { quota, windowSeconds } = socialDefaults.startsPerAddress;
    const allowed = await ctx.limiter.consume(`oauth-start:${addressBucket(request.ip)}`, [
      { name: 'oauth-start', quota, seconds: windowSeconds },
    ]);
    if (!allowed.allowed) {
      return socialRefusal(
        request,
        reply,
        'Too many sign-in attempts from this address; try again later.',
        back,
      );
    }
    if (h.codeChallenge && !clicked) {
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
      const { url, state } = await startFlow(flowDeps, h.tenant, provider, hostedQuery(h));
      // The state is bound to this browser: an answer arriving in another browser is
      // refused (login CSRF). An answer sent as a cross-site POST (form_post) only
      // carries a SameSite=None cookie, which browsers accept only when Secure.
      const crossSitePost = PROVIDERS[provider].responseMode === 'form_post';
      reply.setCookie(flowCookie(provider), state, {
        path: '/',
        httpOnly: true,
        maxAge: socialDefaults.flowLifetimeSeconds,
        sameSite: crossSitePost ? 'none' : 'lax',
        secure: crossSitePost || secure,
      });
      return reply.code(303).header('location', url).header('cache-control', 'no-store').send();
    } catch (error) {
      if (error instanceof SocialRefusal) return socialRefusal(request, reply, error.message, back);
      throw error;
    }
  }

  scope.get('/oauth/:provider/start', get, (request, reply) => begin(request, reply, false));
  scope.post('/oauth/:provider/start', csrfCheck, (request, reply) => begin(request, reply, true));

  async function callback(request: FastifyRequest, reply: FastifyReply, params: URLSearchParams) {
    const { provider } = request.params as { provider: string };
    if (!isProviderId(provider))
      return socialRefusal(request, reply, 'There is no such sign-in provider.');
    const bound = request.cookies[flowCookie(provider)];
    reply.clearCookie(flowCookie(provider), { path: '/' });
    let flow: Awaited<ReturnType<typeof claimFlow>>;
    try {
      flow = await claimFlow(flowDeps, provider, params.get('state'), bound);
    } catch (error) {
      if (!(error instanceof SocialRefusal)) throw error;
      if (error.hostedQuery === undefined) return socialRefusal(request, reply, error.message);
      // The attempt is known: brand the page and lead back to where it started.
      const from = await hosted(
        request,
        reply,
        Object.fromEntries(new URLSearchParams(error.hostedQuery)),
      );
      if (!from) return reply;
      return socialRefusal(request, reply, error.message, `/sign-in?${hostedQuery(from)}`);
    }
    const h = await hosted(
      request,
      reply,
      Object.fromEntries(new URLSearchParams(flow.hosted_query)),
    );
    if (!h) return reply;
    const back = `/sign-in?${hostedQuery(h)}`;
    try {
      const profile = await finishFlow(flowDeps, h.tenant, provider, flow, params, (error) =>
        request.log.warn({ err: error, provider }, 'social sign-in failed at the provider'),
      );
      const user = await userForProfile(flowDeps, h.tenant, provider, profile);
      return await finish(request, reply, h, user);
    } catch (error) {
      if (error instanceof SocialRefusal) return socialRefusal(request, reply, error.message, back);
      throw error;
    }
  }

  scope.get('/oauth/:provider/callback', get, (request, reply) =>
    callback(request, reply, new URLSearchParams(request.url.split('?')[1] ?? '')),
  );
  // response_mode=form_post (Apple; no CSRF token: the state cookie binds it instead).
  scope.post('/oauth/:provider/callback', get, (request, reply) =>
    callback(request, reply, stringFields(request.body)),
  );
}
