import type { Redis } from 'ioredis';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { PlanCounter, type PlanHandle } from './plan-counter.js';

export interface Window {
  /** Policy name as it appears in the RateLimit headers. */
  name: string;
  quota: number;
  seconds: number;
}

export interface Decision {
  allowed: boolean;
  /** Seconds until a refused request may be retried. */
  retryAfter: number;
  /** IETF RateLimit-Policy / RateLimit header values (draft-ietf-httpapi-ratelimit-headers). */
  policyHeader: string;
  stateHeader: string;
  /** Count in each window after this request. */
  consumed: number[];
}

export interface RateLimitServiceOptions {
  /** Shared counters for every instance; without it each process counts on its own. */
  redis?: Redis | undefined;
  keyPrefix?: string;
  /**
   * False while Redis is connected but does not answer (hung): counting goes straight to
   * memory instead of waiting for each command's timeout.
   */
  storeHealthy?: () => boolean;
  /** Told once per outage when Redis fails and counting falls back to this process. */
  onStoreError?: (error: unknown) => void;
}

/**
 * Fixed-window counters per tenant (or per client address), one window per policy.
 *
 * When Redis is unreachable, counting falls back to this process's memory
 * (rate-limiter-flexible's insurance limiter): limits still hold per instance, so during
 * an outage a tenant may get up to N times its limit across N instances, and no request is
 * refused merely because Redis is down. `/readyz` reports the outage.
 */
export class RateLimitService {
  readonly #limiters = new Map<string, RateLimiterAbstract>();
  readonly #fallbacks = new Map<string, RateLimiterAbstract>();
  readonly #redis: Redis | undefined;
  readonly #storeHealthy: () => boolean;
  readonly #prefix: string;
  readonly #onStoreError: (error: unknown) => void;
  readonly #plans: PlanCounter;
  #storeFailing = false;

  constructor(options: RateLimitServiceOptions = {}) {
    this.#redis = options.redis;
    this.#prefix = options.keyPrefix ?? 'lk:rl';
    this.#storeHealthy = options.storeHealthy ?? (() => true);
    this.#onStoreError = options.onStoreError ?? (() => {});
    this.#plans = new PlanCounter({
      redis: options.redis,
      keyPrefix: `${this.#prefix}:plan`,
      onStoreError: () => this.#reportStoreError(),
      storeHealthy: this.#storeHealthy,
    });
  }

  #reportStoreError(): void {
    if (this.#storeFailing) return;
    this.#storeFailing = true;
    this.#onStoreError(new Error('Redis unavailable; counting rate limits in this process'));
  }

  /**
   * Counts one request of a plan's windows (every API request of a tenant, and every
   * browser call per address): answered from memory while that cannot change the decision;
   * a refused request counts in no window. See PlanCounter.
   */
  consumePlan(key: string, windows: readonly Window[]): Decision | Promise<Decision> {
    return this.#plans.consume(key, windows);
  }

  /** `consumePlan` for a counter the caller keeps between requests (see PlanHandle). */
  consumeHeld(handle: PlanHandle): Decision | Promise<Decision> {
    return this.#plans.consumeHeld(handle);
  }

  /** Sends the counts still held in memory to Redis. */
  close(): Promise<void> {
    return this.#plans.close();
  }

  #limiter(window: Window): RateLimiterAbstract {
    const id = `${window.name}:${window.quota}:${window.seconds}`;
    let limiter = this.#limiters.get(id);
    if (!limiter) {
      const opts = {
        points: window.quota,
        duration: window.seconds,
        keyPrefix: `${this.#prefix}:${window.name}:${window.quota}:${window.seconds}`,
      };
      const memory = new RateLimiterMemory(opts);
      limiter = this.#redis
        ? new RateLimiterRedis({
            ...opts,
            storeClient: this.#redis,
            rejectIfRedisNotReady: true,
            insuranceLimiter: this.#watchInsurance(memory),
          })
        : memory;
      this.#limiters.set(id, limiter);
      this.#fallbacks.set(id, memory);
    }
    if (this.#redis && !this.#storeHealthy()) return this.#fallbacks.get(id) ?? limiter;
    return limiter;
  }

  /** Wraps the in-memory fallback so that its use is reported once per outage. */
  #watchInsurance(memory: RateLimiterMemory): RateLimiterMemory {
    const consume = memory.consume.bind(memory);
    memory.consume = (key, points, options) => {
      this.#reportStoreError();
      return consume(key, points, options);
    };
    return memory;
  }

  /** The count so far in `window`, without adding to it. */
  async peek(
    key: string,
    window: Window,
  ): Promise<{ window: Window; count: number; retryAfter: number }> {
    const res = await this.#limiter(window).get(key);
    return {
      window,
      count: res?.consumedPoints ?? 0,
      retryAfter: res ? Math.max(Math.ceil(res.msBeforeNext / 1000), 1) : 0,
    };
  }

  /** Adds one to `window` (a failure), without refusing anything. */
  async penalty(key: string, window: Window): Promise<void> {
    await this.#limiter(window).penalty(key, 1);
  }

  /** Gives one unit back (an attempt that turned out fine). */
  async reward(key: string, window: Window): Promise<void> {
    await this.#limiter(window).reward(key, 1);
  }

  async reset(key: string, window: Window): Promise<void> {
    await this.#limiter(window).delete(key);
  }

  /** Counts one request against every window; refused when any window is exhausted. */
  async consume(key: string, windows: readonly Window[]): Promise<Decision> {
    const results = await Promise.all(
      windows.map(async (window) => {
        try {
          const res = await this.#limiter(window).consume(key);
          return { window, res, allowed: true };
        } catch (error) {
          if (error instanceof RateLimiterRes) return { window, res: error, allowed: false };
          throw error;
        }
      }),
    );
    if (this.#redis?.status === 'ready' && this.#storeHealthy()) this.#storeFailing = false;
    const refused = results.filter((r) => !r.allowed);
    const retryAfter = refused.length
      ? Math.max(...refused.map((r) => Math.ceil(r.res.msBeforeNext / 1000)), 1)
      : 0;
    return {
      allowed: refused.length === 0,
      retryAfter,
      consumed: results.map((r) => r.res.consumedPoints),
      policyHeader: windows.map((w) => `"${w.name}";q=${w.quota};w=${w.seconds}`).join(', '),
      stateHeader: results
        .map(
          ({ window, res }) =>
            `"${window.name}";r=${Math.max(res.remainingPoints, 0)};t=${Math.ceil(res.msBeforeNext / 1000)}`,
        )
        .join(', '),
    };
  }
}
