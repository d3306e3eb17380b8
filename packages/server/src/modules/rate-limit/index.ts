export { addressBucket } from './address.js';
export {
  type Decision,
  RateLimitService,
  type RateLimitServiceOptions,
  type Window,
} from './rate-limit.service.js';

import type { RateLimits } from '../tenants/index.js';
import type { Window } from './rate-limit.service.js';

/** The two windows of a plan (reference section 8): requests per second and per minute. */
export function planWindows(limits: RateLimits): Window[] {
  return [
    { name: 'second', quota: limits.rps, seconds: 1 },
    { name: 'minute', quota: limits.rpm, seconds: 60 },
  ];
}
