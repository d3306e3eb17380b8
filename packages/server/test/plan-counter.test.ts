/**
 * Plan limits are counted in memory and added to Redis in batches; two instances together
 * still admit the quota, give or take a few percent, and small quotas exactly.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Decision } from '../src/modules/rate-limit/index.js';
import { PlanCounter } from '../src/modules/rate-limit/plan-counter.js';
import { HAVE_REDIS, REDIS_URL } from './support.js';

async function allowed(counter: PlanCounter, key: string, quota: number): Promise<boolean> {
  const decision: Decision = await counter.consume(key, [{ name: 'minute', quota, seconds: 60 }]);
  return decision.allowed;
}

describe('plan counter in memory', () => {
  it('counts a request refused by one window in none of them', () => {
    const counter = new PlanCounter({ keyPrefix: 'mem' });
    const windows = [
      { name: 'second', quota: 2, seconds: 1 },
      { name: 'minute', quota: 5, seconds: 60 },
    ];
    const answers = Array.from({ length: 10 }, () => counter.consume('t', windows) as Decision);
    expect(answers.map((a) => a.allowed)).toEqual([true, true, ...Array(8).fill(false)]);
    expect(answers.map((a) => a.consumed)).toEqual([[1, 1], [2, 2], ...Array(8).fill([2, 2])]);
    expect(answers[9]?.stateHeader).toMatch(/^"second";r=0;t=1, "minute";r=3;t=60$/);
    void counter.close();
  });

  it('admits exactly the quota, answering without a promise', () => {
    const counter = new PlanCounter({ keyPrefix: 'mem' });
    const answers = Array.from({ length: 1200 }, () =>
      counter.consume('t', [{ name: 'minute', quota: 1000, seconds: 60 }]),
    );
    expect(answers.some((a) => a instanceof Promise)).toBe(false);
    expect(answers.filter((a) => (a as Decision).allowed)).toHaveLength(1000);
    void counter.close();
  });
});

describe('plan counter while Redis cannot be reached', () => {
  // The windows end on the counter's clock (Date.now), which the test moves: no sleeping.
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts in memory, and forgets ended windows of every address', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    // A real client to a port where nothing listens: it never becomes ready.
    const redis = new Redis({ port: 1, lazyConnect: true, retryStrategy: () => null });
    // It looks for ended windows at most once a second, from now on.
    const counter = new PlanCounter({ redis, keyPrefix: 'down', flushMs: 60_000 });
    const windows = [{ name: 'second', quota: 5, seconds: 1 }];
    vi.advanceTimersByTime(500);
    for (let i = 0; i < 200; i++) {
      const decision = counter.consume(`client:t:198.51.100.${i}`, windows);
      expect((decision as Decision).allowed).toBe(true);
    }
    expect(counter.held).toBe(200);
    // A look while the windows still run keeps them...
    vi.advanceTimersByTime(500);
    await counter.flush();
    expect(counter.held).toBe(200);
    // ...the next, after they have ended, forgets them.
    vi.advanceTimersByTime(1000);
    await counter.flush();
    expect(counter.held).toBe(0);
    await counter.close();
    redis.disconnect();
  });
});

describe.skipIf(!HAVE_REDIS)('plan counter shared through Redis', () => {
  let a: Redis;
  let b: Redis;
  beforeAll(async () => {
    a = new Redis(REDIS_URL);
    b = new Redis(REDIS_URL);
    await Promise.all([a.ping(), b.ping()]);
  });
  afterAll(() => {
    a.disconnect();
    b.disconnect();
  });

  it('two instances admit a large quota within a few percent, in batches', async () => {
    const prefix = `lk:test:${randomUUID()}`;
    const one = new PlanCounter({ redis: a, keyPrefix: prefix });
    const two = new PlanCounter({ redis: b, keyPrefix: prefix });
    const quota = 10_000;
    let admitted = 0;
    let local = 0;
    for (let i = 0; i < 12_000; i++) {
      const counter = i % 2 ? one : two;
      const answer = counter.consume('tenant', [{ name: 'minute', quota, seconds: 60 }]);
      if (!(answer instanceof Promise)) local++;
      if ((await answer).allowed) admitted++;
    }
    await Promise.all([one.close(), two.close()]);
    expect(admitted).toBeGreaterThanOrEqual(quota);
    expect(admitted).toBeLessThanOrEqual(quota * 1.04);
    // Most requests never waited for Redis.
    expect(local).toBeGreaterThan(quota * 0.9);
    // Redis holds what was admitted: refused requests are counted nowhere.
    expect(Number(await a.get(`${prefix}:minute:${quota}:60:tenant`))).toBe(admitted);
  });

  it('a small quota is counted exactly across instances', async () => {
    const prefix = `lk:test:${randomUUID()}`;
    const one = new PlanCounter({ redis: a, keyPrefix: prefix });
    const two = new PlanCounter({ redis: b, keyPrefix: prefix });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => allowed(i % 2 ? one : two, 'tenant', 6)),
    );
    expect(results.filter(Boolean)).toHaveLength(6);
    await Promise.all([one.close(), two.close()]);
  });
});
