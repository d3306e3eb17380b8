import type { PlanHandle } from './plan-counter.js';

export { addressBucket } from './address.js';
export type { PlanHandle } from './plan-counter.js';
export {
  type Decision,
  RateLimitService,
  type RateLimitServiceOptions,
  type Window,
} from './rate-limit.service.js';

import { LatchkeyError } from '../../errors/index.js';
import type { RateLimits } from '../tenants/index.js';
import type { Decision, Window } from './rate-limit.service.js';

const windowsOf = new WeakMap<RateLimits, readonly Window[]>();
/**
 * The windows of each plan's limits, by their figures: the tenants of one plan share one
 * set of windows, and so their RateLimit-Policy header and window ids. A request reads its
 * windows and writes that header, and a thousand tenants' copies of them were a thousand
 * places in memory to miss (issue 31). Bounded: past it, new limits start a new set.
 */
const windowsByFigures = new Map<string, readonly Window[]>();
const SHARED_WINDOWS = 1_000;

/**
 * The two windows of a plan (docs/design.md §4.4): requests per second and per minute.
 * Made once per limits object (tenants are cached), so that counting a request builds no
 * window, policy header or window id.
 */
export function planWindows(limits: RateLimits): readonly Window[] {
  let windows = windowsOf.get(limits);
  if (!windows) {
    const figures = `${limits.rps}:${limits.rpm}`;
    windows = windowsByFigures.get(figures);
    if (!windows) {
      windows = Object.freeze([
        { name: 'second', quota: limits.rps, seconds: 1 },
        { name: 'minute', quota: limits.rpm, seconds: 60 },
      ]);
      if (windowsByFigures.size >= SHARED_WINDOWS) windowsByFigures.clear();
      windowsByFigures.set(figures, windows);
    }
    windowsOf.set(limits, windows);
  }
  return windows;
}

const plans = new WeakMap<{ id: string; limits: RateLimits }, PlanHandle>();

/**
 * What a tenant's secret-key requests are counted under (`tenant:<id>` and its plan's
 * windows), as a handle for `consumeHeld`, made once per tenant object: every API request
 * is counted under it, and one string kept is looked up by its hash, already known, and
 * found by identity, where a string built per request is hashed and compared character by
 * character each time (issue 31).
 */
export function tenantPlan(tenant: { id: string; limits: RateLimits }): PlanHandle {
  let plan = plans.get(tenant);
  if (!plan) {
    plan = {
      planKey: `tenant:${tenant.id}`,
      windows: planWindows(tenant.limits),
      slots: undefined,
    };
    plans.set(tenant, plan);
  }
  return plan;
}

/** The RateLimit-Policy and RateLimit headers of a decision (draft-ietf-httpapi-ratelimit-headers). */
export function rateLimitHeaders(decision: Decision): Record<string, string> {
  return { 'ratelimit-policy': decision.policyHeader, ratelimit: decision.stateHeader };
}

/** The same headers as a flat name, value list (node:http's writeHead takes one). */
export function rateLimitHeaderList(decision: Decision): string[] {
  return ['ratelimit-policy', decision.policyHeader, 'ratelimit', decision.stateHeader];
}

/** The 429 of a refused decision: Retry-After (RFC 9110 section 10.2.3) and the RateLimit headers. */
export function rateLimited(decision: Decision, detail: string): LatchkeyError {
  return new LatchkeyError('rate_limited', detail, {
    headers: { 'retry-after': String(decision.retryAfter), ...rateLimitHeaders(decision) },
  });
}
