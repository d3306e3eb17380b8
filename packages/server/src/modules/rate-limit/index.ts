export { addressBucket } from './address.js';
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
 * The two windows of a plan (docs/design.md §4.4): requests per second and per minute.
 * Made once per limits object (tenants are cached), so that counting a request builds no
 * window, policy header or window id.
 */
export function planWindows(limits: RateLimits): readonly Window[] {
  let windows = windowsOf.get(limits);
  if (!windows) {
    windows = Object.freeze([
      { name: 'second', quota: limits.rps, seconds: 1 },
      { name: 'minute', quota: limits.rpm, seconds: 60 },
    ]);
    windowsOf.set(limits, windows);
  }
  return windows;
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
