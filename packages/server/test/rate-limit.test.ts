import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createKey } from '../src/modules/keys/index.js';
import {
  DIALECTS,
  HAVE_REDIS,
  json,
  postJson,
  REDIS_URL,
  startApp,
  type TestApp,
} from './support.js';

/** An invalid body still passes authentication and the limit, without costing an argon2 hash. */
const cheap = { email: 'not-an-address', password: 'x' };

async function burst(app: TestApp, key: string, n: number): Promise<Response[]> {
  return Promise.all(
    Array.from({ length: n }, () => postJson(app, '/v1/auth/sign-up', key, cheap)),
  );
}

const STORES = HAVE_REDIS ? (['memory', 'redis'] as const) : (['memory'] as const);

describe.each(DIALECTS.flatMap((dialect) => STORES.map((store) => [dialect, store] as const)))(
  'rate limits on %s with the %s store',
  (dialect, store) => {
    let app: TestApp;
    const env: Record<string, string> = store === 'redis' ? { REDIS_URL } : {};
    const prefix = `lk:test:${randomUUID()}`;
    let redis: Redis | undefined;

    beforeAll(async () => {
      app = await startApp(dialect, { env, rateLimitPrefix: prefix });
      if (store === 'redis') redis = new Redis(REDIS_URL);
    });
    afterAll(async () => {
      redis?.disconnect();
      await app.dispose();
    });

    /**
     * `ms` pass for the rate limits, without waiting: the app's clock (a fake Date) moves
     * on, and so do the TTLs of its counters in Redis (a key whose TTL runs out is gone).
     */
    async function pass(ms: number): Promise<void> {
      vi.setSystemTime(Date.now() + ms);
      if (!redis) return;
      for await (const keys of redis.scanStream({ match: `${prefix}:*` })) {
        for (const key of keys as string[]) {
          const ttl = await redis.pttl(key);
          if (ttl < 0) continue;
          if (ttl <= ms) await redis.del(key);
          else await redis.pexpire(key, ttl - ms);
        }
      }
    }

    it('refuses past the per-second quota with 429, Retry-After and RateLimit headers', async () => {
      const t = await app.tenant({ rps: 5, rpm: 1000 });
      const responses = await burst(app, t.secretKey, 8);
      const statuses = responses.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 422)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(3);
      const refused = responses.find((r) => r.status === 429) as Response;
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.headers.get('ratelimit-policy')).toBe(
        '"second";q=5;w=1, "minute";q=1000;w=60',
      );
      expect(refused.headers.get('ratelimit')).toMatch(
        /^"second";r=0;t=[01], "minute";r=\d+;t=\d+$/,
      );
      expect(await json(refused)).toMatchObject({ status: 429, code: 'rate_limited' });
      const allowed = responses.find((r) => r.status === 422) as Response;
      expect(allowed.headers.get('ratelimit-policy')).toBe(
        '"second";q=5;w=1, "minute";q=1000;w=60',
      );
    });

    it('refuses past the per-minute quota, with a Retry-After up to a minute', async () => {
      const t = await app.tenant({ rps: 1000, rpm: 4 });
      const statuses = (await burst(app, t.secretKey, 6)).map((r) => r.status);
      expect(statuses.filter((s) => s === 429)).toHaveLength(2);
      const again = await postJson(app, '/v1/auth/sign-up', t.secretKey, cheap);
      expect(again.status).toBe(429);
      const retry = Number(again.headers.get('retry-after'));
      expect(retry).toBeGreaterThan(1);
      expect(retry).toBeLessThanOrEqual(60);
    });

    it('counts across all keys of a tenant, and tenants apart', async () => {
      const t = await app.tenant({ rps: 1000, rpm: 6 });
      const other = await app.tenant({ rps: 1000, rpm: 6 });
      const second = await createKey(app.ctx.database.db, t.tenant.id, { kind: 'secret' });
      expect((await burst(app, t.secretKey, 3)).every((r) => r.status === 422)).toBe(true);
      expect((await burst(app, second.plaintext, 3)).every((r) => r.status === 422)).toBe(true);
      expect((await postJson(app, '/v1/auth/sign-up', second.plaintext, cheap)).status).toBe(429);
      expect((await postJson(app, '/v1/auth/sign-up', t.secretKey, cheap)).status).toBe(429);
      expect((await postJson(app, '/v1/auth/sign-up', other.secretKey, cheap)).status).toBe(422);
    });

    /**
     * A client that retries its 429s: a burst refused by the per-second window, then one
     * request at a time until the minute is spent. Only admitted requests count, so the
     * minute admits exactly its quota, and every answer's RateLimit header says exactly
     * what is left of it.
     */
    async function retriesUntilTheMinuteIsSpent(send: () => Promise<Response>, rpm: number) {
      const minuteLeft = (res: Response) =>
        Number(/"minute";r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1]);
      vi.useFakeTimers({ toFake: ['Date'] });
      try {
        const burst = await Promise.all(Array.from({ length: 20 }, send));
        let admitted = burst.filter((r) => r.status !== 429).length;
        expect(admitted).toBeLessThan(20);
        for (let i = 0; i < 100; i++) {
          const res = await send();
          if (res.status !== 429) admitted++;
          expect(minuteLeft(res)).toBe(rpm - admitted);
          if (res.status === 429 && minuteLeft(res) === 0) break;
          // The client waits as long as Retry-After says.
          if (res.status === 429) await pass(Number(res.headers.get('retry-after')) * 1000);
        }
        expect(admitted).toBe(rpm);
      } finally {
        vi.useRealTimers();
      }
    }

    it('requests refused by one window do not spend the others', async () => {
      const t = await app.tenant({ rps: 2, rpm: 8 });
      await retriesUntilTheMinuteIsSpent(
        () => postJson(app, '/v1/auth/sign-up', t.secretKey, cheap),
        8,
      );
    });

    it('nor do browser calls refused per address', async () => {
      const origin = 'https://app.example';
      const t = await app.tenant({ rps: 2, rpm: 8, allowedOrigins: [origin] });
      await retriesUntilTheMinuteIsSpent(
        () =>
          app.request('/v1/client/token', {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-latchkey-publishable-key': t.publishableKey,
              origin,
            },
            body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: 'lkr_nope' }),
          }),
        8,
      );
    });

    it('applies the plan limits: free is 10 per second', async () => {
      const t = await app.tenant({ plan: 'free' });
      const statuses = (await burst(app, t.secretKey, 12)).map((r) => r.status);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
      const res = await postJson(app, '/v1/auth/sign-up', t.secretKey, cheap);
      expect(res.headers.get('ratelimit-policy')).toBe('"second";q=10;w=1, "minute";q=600;w=60');
    });
  },
);

describe.skipIf(!HAVE_REDIS).each(DIALECTS)('rate limits shared through Redis on %s', (dialect) => {
  it('two instances share one tenant budget', async () => {
    const prefix = `lk:test:${randomUUID()}`;
    const a = await startApp(dialect, { env: { REDIS_URL }, rateLimitPrefix: prefix });
    const t = await a.tenant({ rps: 1000, rpm: 6 });
    const databaseUrl = a.ctx.config.databaseUrl;
    const b = await startApp(dialect, {
      env: { REDIS_URL },
      rateLimitPrefix: prefix,
      databaseUrl,
    });
    try {
      const first = await burst(a, t.secretKey, 3);
      const second = await burst(b, t.secretKey, 3);
      expect([...first, ...second].every((r) => r.status === 422)).toBe(true);
      expect((await postJson(b, '/v1/auth/sign-up', t.secretKey, cheap)).status).toBe(429);
      expect((await postJson(a, '/v1/auth/sign-up', t.secretKey, cheap)).status).toBe(429);
    } finally {
      await b.close();
      await a.dispose();
    }
  });

  it('when Redis is unreachable, each instance keeps limiting in memory and /readyz says so', async () => {
    // A closed port on loopback: connection refused at once.
    const app = await startApp(dialect, { env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    try {
      const t = await app.tenant({ rps: 1000, rpm: 3 });
      const statuses = (await burst(app, t.secretKey, 5)).map((r) => r.status);
      expect(statuses.filter((s) => s === 422)).toHaveLength(3);
      expect(statuses.filter((s) => s === 429)).toHaveLength(2);
      const ready = await app.request('/readyz');
      expect(ready.status).toBe(503);
      expect(await json(ready)).toMatchObject({
        status: 'not ready',
        checks: { database: 'ok', redis: 'unreachable' },
      });
      expect(app.logs.text()).toContain('rate limits counted in this process');
    } finally {
      await app.dispose();
    }
  });
});

describe.each(DIALECTS)('client address and TRUST_PROXY on %s', (dialect) => {
  const badKey = () => `Bearer sk_test_${'B'.repeat(43)}`;
  async function failures(app: TestApp, n: number, forwardedFor: string) {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const res = await app.request('/v1/auth/sign-up', {
        method: 'POST',
        headers: {
          authorization: badKey(),
          'content-type': 'application/json',
          'x-forwarded-for': forwardedFor,
        },
        body: '{}',
      });
      out.push(res.status);
    }
    return out;
  }

  it('ignores X-Forwarded-For unless TRUST_PROXY says so', async () => {
    const app = await startApp(dialect);
    try {
      // 120 failures per address per minute; rotating X-Forwarded-For must not escape the limit.
      const statuses = await Promise.all(
        Array.from({ length: 125 }, (_, i) =>
          app
            .request('/v1/auth/sign-up', {
              method: 'POST',
              headers: {
                authorization: badKey(),
                'content-type': 'application/json',
                'x-forwarded-for': `203.0.113.${i % 250}`,
              },
              body: '{}',
            })
            .then((r) => r.status),
        ),
      );
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(5);
    } finally {
      await app.dispose();
    }
  });

  it('with TRUST_PROXY=127.0.0.1, each forwarded address has its own budget', async () => {
    const app = await startApp(dialect, { env: { TRUST_PROXY: '127.0.0.1' } });
    try {
      const first = await Promise.all(
        Array.from({ length: 121 }, () =>
          app
            .request('/v1/auth/sign-up', {
              method: 'POST',
              headers: {
                authorization: badKey(),
                'content-type': 'application/json',
                'x-forwarded-for': '198.51.100.7',
              },
              body: '{}',
            })
            .then((r) => r.status),
        ),
      );
      expect(first.filter((s) => s === 429)).toHaveLength(1);
      expect(await failures(app, 1, '198.51.100.8')).toEqual([401]);
    } finally {
      await app.dispose();
    }
  });
});
