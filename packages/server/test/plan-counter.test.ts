/**
 * Plan limits are counted in memory and added to Redis in batches; two instances together
 * still admit the quota, give or take a few percent, and small quotas exactly.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Decision, planWindows, tenantPlan } from '../src/modules/rate-limit/index.js';
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

describe('plan counters of many tenants', () => {
  it('tenants on the same limits share their windows, never their counts', () => {
    const counter = new PlanCounter({ keyPrefix: 'plans' });
    const limits = () => ({ rps: 3, rpm: 100 });
    const a = { id: 'tenant-a', limits: limits() };
    const b = { id: 'tenant-b', limits: limits() };
    const other = { id: 'tenant-c', limits: { rps: 4, rpm: 100 } };
    // One set of windows per figures (and so one policy header), one counter per tenant.
    expect(planWindows(a.limits)).toBe(planWindows(b.limits));
    expect(planWindows(other.limits)).not.toBe(planWindows(a.limits));
    expect(tenantPlan(a)).toBe(tenantPlan(a));
    expect([tenantPlan(a).planKey, tenantPlan(b).planKey]).toEqual([
      'tenant:tenant-a',
      'tenant:tenant-b',
    ]);
    const take = (t: typeof a) => {
      const plan = tenantPlan(t);
      return counter.consume(plan.planKey, plan.windows) as Decision;
    };
    expect([1, 2, 3, 4].map(() => take(a).allowed)).toEqual([true, true, true, false]);
    // b's second is its own, and so is c's, on other windows.
    expect(take(b).consumed).toEqual([1, 1]);
    expect(take(other).stateHeader).toBe('"second";r=3;t=1, "minute";r=99;t=60');
    expect(take(b).policyHeader).toBe('"second";q=3;w=1, "minute";q=100;w=60');
    // A tenant read again (a new object, as after a change elsewhere) counts on where it was.
    const again = { id: 'tenant-a', limits: limits() };
    expect(tenantPlan(again)).not.toBe(tenantPlan(a));
    expect(take(again)).toMatchObject({ allowed: false, consumed: [3, 3] });
    void counter.close();
  });
});

describe('plan counter windows that end', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a kept handle and the key count in the same windows, also after a sweep', async () => {
    // The introspection fast path counts through a handle kept on the cached key; Fastify's
    // path by the key. A window the sweep dropped while a handle still held it must not
    // split the count in two.
    vi.useFakeTimers({ toFake: ['Date'] });
    const counter = new PlanCounter({ keyPrefix: 'held', flushMs: 60_000 });
    const windows = [
      { name: 'second', quota: 5, seconds: 1 },
      { name: 'minute', quota: 100, seconds: 60 },
    ];
    const handle = { planKey: 'tenant:t', windows, slots: undefined as unknown };
    const viaHandle = () => counter.consumeHeld(handle) as Decision;
    const viaKey = () => counter.consume('tenant:t', windows) as Decision;
    expect([viaHandle(), viaKey(), viaHandle()].map((d) => d.consumed)).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    // The second ends, and a sweep drops it; the key's next request starts it over.
    vi.advanceTimersByTime(1_500);
    await counter.flush();
    expect(viaKey().consumed).toEqual([1, 4]);
    // The handle still holds the dropped window: it counts in the key's new one.
    expect(viaHandle().consumed).toEqual([2, 5]);
    expect([viaKey(), viaHandle(), viaKey()].map((d) => d.allowed)).toEqual([true, true, true]);
    expect(viaHandle()).toMatchObject({ allowed: false, consumed: [5, 8] });
    await counter.close();
  });

  it('start the ended window over from zero, and only that one', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const counter = new PlanCounter({ keyPrefix: 'renew' });
    const windows = [
      { name: 'second', quota: 3, seconds: 1 },
      { name: 'minute', quota: 10, seconds: 60 },
    ];
    const second = (n: number) =>
      Array.from({ length: n }, () => counter.consume('t', windows) as Decision);
    expect(second(4).map((d) => [d.allowed, ...d.consumed])).toEqual([
      [true, 1, 1],
      [true, 2, 2],
      [true, 3, 3],
      [false, 3, 3],
    ]);
    vi.advanceTimersByTime(1_000);
    expect(second(4).map((d) => [d.allowed, ...d.consumed])).toEqual([
      [true, 1, 4],
      [true, 2, 5],
      [true, 3, 6],
      [false, 3, 6],
    ]);
    vi.advanceTimersByTime(1_000);
    expect(second(3).every((d) => d.allowed)).toBe(true);
    vi.advanceTimersByTime(1_000);
    // The minute's window has 9: one more, then the minute refuses while the second allows.
    const last = second(2);
    expect(last.map((d) => [d.allowed, ...d.consumed])).toEqual([
      [true, 1, 10],
      [false, 1, 10],
    ]);
    expect(last[1]?.stateHeader).toBe('"second";r=2;t=1, "minute";r=0;t=57');
    expect(counter.held).toBe(2);
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

describe.skipIf(!HAVE_REDIS)('plan counter with many tenants', () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = new Redis(REDIS_URL);
    await redis.ping();
  });
  afterAll(() => {
    redis.disconnect();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  const minute = [{ name: 'minute', quota: 10_000, seconds: 60 }];

  it("adds every tenant's count to Redis in one call per flush, not one per tenant", async () => {
    const prefix = `lk:test:${randomUUID()}`;
    // No timed flush: the test flushes.
    const counter = new PlanCounter({ redis, keyPrefix: prefix, flushMs: 60_000 });
    const tenants = Array.from({ length: 200 }, (_, i) => `tenant:${i}`);
    for (const t of tenants) expect((counter.consume(t, minute) as Decision).allowed).toBe(true);
    const sent = vi.spyOn(redis, 'sendCommand');
    await counter.flush();
    // One script call (a second when Redis does not know the script yet).
    expect(sent.mock.calls.length).toBeLessThanOrEqual(2);
    const counts = await redis.mget(tenants.map((t) => `${prefix}:minute:10000:60:${t}`));
    expect(counts).toEqual(tenants.map(() => '1'));
    await counter.close();
  });

  it('adds a count far from the quota within a second, not at every flush', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const prefix = `lk:test:${randomUUID()}`;
    const key = `${prefix}:minute:10000:60:tenant`;
    const counter = new PlanCounter({ redis, keyPrefix: prefix, flushMs: 60_000 });
    // A window's first count goes at the next flush (the window's end is Redis's).
    counter.consume('tenant', minute);
    await counter.flush();
    expect(await redis.get(key)).toBe('1');
    counter.consume('tenant', minute);
    vi.advanceTimersByTime(500);
    await counter.flush();
    expect(await redis.get(key)).toBe('1');
    vi.advanceTimersByTime(500);
    await counter.flush();
    expect(await redis.get(key)).toBe('2');
    // Half a batch (2 % of the quota) held here goes at the next flush.
    for (let i = 0; i < 100; i++) counter.consume('tenant', minute);
    await counter.flush();
    expect(await redis.get(key)).toBe('102');
    // Closing sends what is left, however little.
    counter.consume('tenant', minute);
    await counter.close();
    expect(await redis.get(key)).toBe('103');
  });

  it('after an outage, the counts held here go to Redis at the next flush', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const prefix = `lk:test:${randomUUID()}`;
    const key = `${prefix}:minute:10000:60:tenant`;
    let healthy = true;
    const errors: unknown[] = [];
    const counter = new PlanCounter({
      redis,
      keyPrefix: prefix,
      flushMs: 60_000,
      storeHealthy: () => healthy,
      onStoreError: (e) => errors.push(e),
    });
    counter.consume('tenant', minute);
    await counter.flush();
    expect(await redis.get(key)).toBe('1');
    healthy = false;
    counter.consume('tenant', minute);
    await counter.flush();
    expect(errors).toHaveLength(1);
    healthy = true;
    vi.advanceTimersByTime(100);
    await counter.flush();
    expect(await redis.get(key)).toBe('2');
    await counter.close();
  });

  it('two instances that never flush on a timer still admit at most a batch each over the quota', async () => {
    const prefix = `lk:test:${randomUUID()}`;
    const one = new PlanCounter({ redis, keyPrefix: prefix, flushMs: 60_000 });
    const other = new Redis(REDIS_URL);
    await other.ping();
    const two = new PlanCounter({ redis: other, keyPrefix: prefix, flushMs: 60_000 });
    const quota = 10_000;
    let admitted = 0;
    for (let i = 0; i < 12_000; i++) {
      const answer = (i % 2 ? one : two).consume('tenant', [
        { name: 'minute', quota, seconds: 60 },
      ]);
      if ((await answer).allowed) admitted++;
    }
    await Promise.all([one.close(), two.close()]);
    other.disconnect();
    expect(admitted).toBeGreaterThanOrEqual(quota);
    expect(admitted).toBeLessThanOrEqual(quota * 1.04);
    expect(Number(await redis.get(`${prefix}:minute:${quota}:60:tenant`))).toBe(admitted);
  });
});
