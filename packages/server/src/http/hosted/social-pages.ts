import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hostedQuery, messagePage } from '../../modules/hosted/index.js';
import {
  claimFlow,
  finishFlow,
  isProviderId,
  SocialRefusal,
  startFlow,
  userForProfile,
} from '../../modules/social/index.js';
import type { AppContext } from '../context.js';

import { field, type Kit } from './kit.js';

/** Social sign-in (reference section 1): the provider buttons lead here, and the answers come back here. */
export function socialPages(scope: FastifyInstance, ctx: AppContext, kit: Kit) {
  const { secure, send, page, hosted, finish, get } = kit;

  // ----- Social sign-in (reference section 1): start, and the provider's answer -----
  const flowDeps = {
    db: ctx.database.db,
    box: ctx.box,
    authUrl: ctx.authUrl,
    providerEndpoints: ctx.config.providerEndpoints,
  };
  const flowCookie = (provider: string) => `latchkey_oauth_${provider}`;
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

  scope.get('/oauth/:provider/start', get, async (request, reply) => {
    const { provider } = request.params as { provider: string };
    const q = field(request.query, 'q');
    const h = await hosted(request, reply, Object.fromEntries(new URLSearchParams(q)));
    if (!h) return reply;
    const back = `/sign-in?${hostedQuery(h)}`;
    if (!isProviderId(provider))
      return socialRefusal(request, reply, 'There is no such sign-in provider.', back);
    try {
      const { url, state } = await startFlow(flowDeps, h.tenant, provider, hostedQuery(h));
      // The state is bound to this browser: an answer arriving in another browser is
      // refused (login CSRF). Apple answers with a cross-site POST, which only carries a
      // SameSite=None cookie.
      reply.setCookie(flowCookie(provider), state, {
        path: `/oauth/${provider}/callback`,
        httpOnly: true,
        maxAge: 600,
        sameSite: provider === 'apple' ? 'none' : 'lax',
        secure: provider === 'apple' ? true : secure,
      });
      return reply.code(303).header('location', url).header('cache-control', 'no-store').send();
    } catch (error) {
      if (error instanceof SocialRefusal) return socialRefusal(request, reply, error.message, back);
      throw error;
    }
  });

  async function callback(request: FastifyRequest, reply: FastifyReply, params: URLSearchParams) {
    const { provider } = request.params as { provider: string };
    if (!isProviderId(provider))
      return socialRefusal(request, reply, 'There is no such sign-in provider.');
    const bound = request.cookies[flowCookie(provider)];
    reply.clearCookie(flowCookie(provider), { path: `/oauth/${provider}/callback` });
    let flow: Awaited<ReturnType<typeof claimFlow>>;
    try {
      flow = await claimFlow(flowDeps, provider, params.get('state'), bound);
    } catch (error) {
      if (error instanceof SocialRefusal) return socialRefusal(request, reply, error.message);
      throw error;
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
      const user = await userForProfile(ctx.database.db, h.tenant, provider, profile);
      return await finish(request, reply, h, user);
    } catch (error) {
      if (error instanceof SocialRefusal) return socialRefusal(request, reply, error.message, back);
      throw error;
    }
  }

  scope.get('/oauth/:provider/callback', get, (request, reply) =>
    callback(request, reply, new URLSearchParams(request.url.split('?')[1] ?? '')),
  );
  // Apple's response_mode=form_post (no CSRF token: the state cookie binds it instead).
  scope.post('/oauth/:provider/callback', get, (request, reply) =>
    callback(request, reply, new URLSearchParams((request.body ?? {}) as Record<string, string>)),
  );
}
