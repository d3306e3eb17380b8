import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { defaults } from '../config/defaults.js';
import { LatchkeyError } from '../errors/index.js';
import {
  type KeyContext,
  publishableKeyRefused,
  type Scope,
  secretKeyExposed,
  secretKeyRefused,
} from '../modules/keys/index.js';
import {
  addressBucket,
  rateLimited,
  rateLimitHeaders,
  tenantPlan,
} from '../modules/rate-limit/index.js';
import { bearerToken } from './bearer.js';
import type { ApiCaller, AppContext } from './context.js';
import { countedPlan } from './fast-path.js';
import { formField } from './form-body.js';
import { sendProblem } from './problem.js';

/**
 * A failed key costs the client address one unit; past the limit a client gets 429, so a
 * stolen-key guessing loop stops early. The address honours TRUST_PROXY.
 */
export async function refuseKey(
  ctx: AppContext,
  request: FastifyRequest,
  error: LatchkeyError,
): Promise<never> {
  const decision = await ctx.limiter.consume(`ip:${addressBucket(request.ip)}`, [
    { name: 'auth-failures', quota: defaults.unauthenticatedPerMinute, seconds: 60 },
  ]);
  if (!decision.allowed) {
    ctx.metrics.rateLimited.inc({ scope: 'address' });
    throw rateLimited(decision, 'Too many requests with a missing or wrong key');
  }
  throw error;
}

/** The WWW-Authenticate challenges (RFC 7235 section 4.1) for a missing and a wrong key. */
export interface Challenges {
  missing: string;
  invalid: string;
  /** How to send a key, for the problem's detail when none was sent. */
  hint?: string;
}

const BEARER_CHALLENGES: Challenges = {
  missing: 'Bearer realm="latchkey"',
  invalid: 'Bearer realm="latchkey", error="invalid_token"',
};

/** A live secret key holding `scope`; a missing or wrong one costs the address (refuseKey). */
export async function authenticateSecretKey(
  ctx: AppContext,
  request: FastifyRequest,
  presented: string | undefined,
  scope: Scope,
  challenges: Challenges = BEARER_CHALLENGES,
): Promise<KeyContext> {
  if (!presented) {
    await refuseKey(
      ctx,
      request,
      new LatchkeyError('unauthorized', secretKeyRefused(undefined, challenges.hint), {
        headers: { 'www-authenticate': challenges.missing },
      }),
    );
  }
  const found = await ctx.keys.resolve(presented as string);
  if (!found) {
    await refuseKey(
      ctx,
      request,
      new LatchkeyError('unauthorized', secretKeyRefused(presented), {
        headers: { 'www-authenticate': challenges.invalid },
      }),
    );
  }
  const auth = found as NonNullable<typeof found>;
  // Browsers send Origin on every cross-origin request (and servers do not, unless they
  // forward a browser's): a secret key there is in a web page.
  const origin = request.headers.origin;
  if (auth.key.kind === 'secret' && origin !== undefined) {
    throw new LatchkeyError(
      'forbidden',
      `${secretKeyExposed(auth, `This request comes from a browser (it has an Origin header, ${origin.slice(0, 100)}), and its key`)} (A server that forwards a browser's Origin header should not.)`,
      // Readable by the page that sent it (http/not-found.ts lets its preflight through),
      // so that its developer sees this rather than a CORS error.
      { headers: { 'access-control-allow-origin': origin, vary: 'Origin' } },
    );
  }
  if (auth.key.kind !== 'secret') {
    throw new LatchkeyError(
      'forbidden',
      'This endpoint needs a secret key (sk_…); publishable keys are for browsers',
    );
  }
  if (!auth.key.scopes.includes(scope)) {
    throw new LatchkeyError('forbidden', `This key lacks the ${scope} scope`);
  }
  return auth;
}

/** Step "authenticate key": a live secret key holding `scope`. */
export function requireSecretKey(ctx: AppContext, scope: Scope): onRequestHookHandler {
  return async (request: FastifyRequest) => {
    request.apiKey = await authenticateSecretKey(
      ctx,
      request,
      bearerToken(request.headers.authorization),
      scope,
    );
  };
}

/** Step "rate-limit": the tenant's plan, counted across all its keys and instances. */
export function rateLimitTenant(ctx: AppContext): onRequestHookHandler {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const tenant = request.apiKey?.tenant;
    if (!tenant) return;
    // Counted in memory unless the decision needs Redis: no await for nothing.
    // The introspection fast path may have counted it already before handing it over.
    const counted = countedPlan(request.raw) ?? ctx.limiter.consumeHeld(tenantPlan(tenant));
    const decision = counted instanceof Promise ? await counted : counted;
    reply.headers(rateLimitHeaders(decision));
    if (!decision.allowed) {
      ctx.metrics.rateLimited.inc({ scope: 'tenant' });
      return sendProblem(
        reply,
        rateLimited(
          decision,
          `The ${tenant.plan} plan's request rate is exceeded; retry after ${decision.retryAfter} s`,
        ),
      );
    }
  };
}

/**
 * The one way a browser endpoint reads its publishable key: the X-Latchkey-Publishable-Key
 * header, else `?pk=`, else `Authorization: Bearer pk_…`.
 */
export async function requirePublishableKey(
  ctx: AppContext,
  request: FastifyRequest,
): Promise<KeyContext & { publishableKey: string }> {
  const header = request.headers['x-latchkey-publishable-key'];
  const query = formField(request.query, 'pk') || undefined;
  const fromBearer = bearerToken(request.headers.authorization, 'pk_');
  const pk = typeof header === 'string' ? header : typeof query === 'string' ? query : fromBearer;
  if (!pk) throw new LatchkeyError('unauthorized', publishableKeyRefused(undefined));
  if (pk.startsWith('sk_')) {
    const secret = await ctx.keys.resolve(pk);
    const exposed = new LatchkeyError(
      'forbidden',
      secretKeyExposed(secret?.key.kind === 'secret' ? secret : undefined, 'The key sent'),
    );
    // An unknown one is a wrong key like any other: it costs the address's failed-key budget.
    if (!secret) await refuseKey(ctx, request, exposed);
    throw exposed;
  }
  const found = await ctx.keys.resolvePublishable(pk);
  if (!found) throw new LatchkeyError('unauthorized', publishableKeyRefused(pk));
  return { ...found, publishableKey: pk };
}

/** The caller and tenant that the authentication step put on the request. */
export function authOf(request: FastifyRequest): ApiCaller {
  if (!request.apiKey) throw new LatchkeyError('unauthorized', 'This route needs a key');
  return request.apiKey;
}
