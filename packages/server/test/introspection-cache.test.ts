/**
 * Introspection remembers verified tokens (so that a token seen again skips RSA), and every
 * answer stays exact: a revoked session, a disabled or deleted user, a revoked signing key
 * and an expired token answer inactive on the very next request, cached or not.
 */
import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { announce, localBus } from '../src/cache/invalidation.js';
import { TtlCache } from '../src/cache/ttl-cache.js';
import { defaults } from '../src/config/defaults.js';
import {
  introspect as introspectToken,
  VerifiedTokens,
} from '../src/modules/introspection/index.js';
import { createKey, KeyResolver } from '../src/modules/keys/index.js';
import { SessionStates, type SessionUser } from '../src/modules/sessions/session-state.js';
import { type Database, openDatabase } from '../src/storage/index.js';
import {
  type Body,
  DIALECTS,
  email,
  eventually,
  HAVE_REDIS,
  json,
  postJson,
  REDIS_URL,
  signedIn,
  startApp,
  type TestApp,
  type TestTenant,
  watchQueries,
} from './support.js';

const PASSWORD = 'correct horse battery staple';
const INACTIVE = '{"active":false}';
// PostgreSQL instances cache only while Redis carries invalidations.
const CACHING = DIALECTS.filter((dialect) => dialect === 'sqlite' || HAVE_REDIS);

describe.each(CACHING)('cached introspection on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;
  let other: TestTenant;
  let outside: Database;

  beforeAll(async () => {
    app = await startApp(dialect, { env: dialect === 'postgres' ? { REDIS_URL } : {} });
    t = await app.tenant();
    other = await app.tenant();
    outside = openDatabase(app.ctx.config.databaseUrl);
  });
  afterAll(async () => {
    await outside.close();
    await app.dispose();
  });

  const session = (tenant = t): Promise<Body> => signedIn(app, tenant);

  async function introspect(token: string, key = t.secretKey): Promise<string> {
    const res = await postJson(app, '/api/auth/introspect', key, { token });
    expect(res.status).toBe(200);
    return res.text();
  }

  /** Introspects until the token is surely in the cache (the first answer puts it there). */
  async function cached(token: string, key = t.secretKey): Promise<void> {
    expect(JSON.parse(await introspect(token, key)).active).toBe(true);
    expect(JSON.parse(await introspect(token, key)).active).toBe(true);
  }

  it('keeps a verified token, and answers it with the current e-mail and roles', async () => {
    const s = await session();
    const before = app.ctx.verifiedTokens.size;
    await cached(s.accessToken);
    expect(app.ctx.verifiedTokens.size).toBe(before + 1);
    const patch = await app.request(`/v1/users/${s.user.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${t.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ roles: ['admin'] }),
    });
    expect(patch.status).toBe(200);
    expect(JSON.parse(await introspect(s.accessToken)).roles).toEqual(['admin']);
    // From its second use on the answer is kept with the user it was built from; the next
    // change of the user's roles replaces it.
    expect(JSON.parse(await introspect(s.accessToken)).roles).toEqual(['admin']);
    const again = await app.request(`/v1/users/${s.user.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${t.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ roles: ['admin', 'billing'] }),
    });
    expect(again.status).toBe(200);
    const answer = JSON.parse(await introspect(s.accessToken));
    expect(answer).toMatchObject({ active: true, sub: s.user.id, roles: ['admin', 'billing'] });
  });

  it('a cached token is inactive at once when its session is revoked, its user disabled or deleted', async () => {
    const auth = { authorization: `Bearer ${t.secretKey}` };
    const revoked = await session();
    await cached(revoked.accessToken);
    await app.request(`/v1/sessions/${revoked.sessionId}`, { method: 'DELETE', headers: auth });
    expect(await introspect(revoked.accessToken)).toBe(INACTIVE);

    const disabled = await session();
    await cached(disabled.accessToken);
    await app.request(`/v1/users/${disabled.user.id}`, {
      method: 'PATCH',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ disabled: true }),
    });
    expect(await introspect(disabled.accessToken)).toBe(INACTIVE);

    const deleted = await session();
    await cached(deleted.accessToken);
    await app.request(`/v1/users/${deleted.user.id}`, { method: 'DELETE', headers: auth });
    expect(await introspect(deleted.accessToken)).toBe(INACTIVE);
  });

  it("a cached token stays inactive for another tenant's key", async () => {
    const s = await session();
    await cached(s.accessToken);
    expect(await introspect(s.accessToken, other.secretKey)).toBe(INACTIVE);
    expect(JSON.parse(await introspect(s.accessToken)).active).toBe(true);
  });

  it('a cached token is inactive once its exp has passed', async () => {
    const s = await session();
    const { kid, key } = await app.ctx.signingKeys.active(t.tenant.id);
    const claims = JSON.parse(Buffer.from(s.accessToken.split('.')[1], 'base64url').toString());
    const exp = Math.floor(Date.now() / 1000) + 2;
    const short = await new SignJWT({ ...claims, exp })
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid })
      .sign(key);
    await cached(short);
    // The app's clock (Date.now) reaches exp: no waiting for it.
    vi.useFakeTimers({ toFake: ['Date'], now: exp * 1000 });
    try {
      expect(await introspect(short)).toBe(INACTIVE);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a cached token is inactive at once when its signing key is revoked, here or by another process', async () => {
    const tenant = await app.tenant();
    const s = await session(tenant);
    await cached(s.accessToken, tenant.secretKey);
    await app.ctx.signingKeys.revoke(
      tenant.tenant.id,
      decodeProtectedHeader(s.accessToken).kid as string,
    );
    expect(await introspect(s.accessToken, tenant.secretKey)).toBe(INACTIVE);

    // Another process revokes (the CLI writes the row; on PostgreSQL it announces on Redis).
    const next = await session(tenant);
    await cached(next.accessToken, tenant.secretKey);
    const kid = decodeProtectedHeader(next.accessToken).kid as string;
    await outside.db
      .updateTable('signing_keys')
      .set({ retired_at: Date.now(), publish_until: Date.now() })
      .where('id', '=', kid)
      .execute();
    if (dialect === 'sqlite') {
      expect(await introspect(next.accessToken, tenant.secretKey)).toBe(INACTIVE);
    } else {
      await announce(REDIS_URL, `signing-key:${tenant.tenant.id}/${kid}`);
      await eventually(async () =>
        (await introspect(next.accessToken, tenant.secretKey)) === INACTIVE ? true : undefined,
      );
    }
  });

  it('a busy key is read again before its cache entry ends, not after', async () => {
    // A thousand busy keys cached together would otherwise end together, each request then
    // waiting for the database.
    const tenant = await app.tenant();
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      expect(await app.ctx.keys.resolve(tenant.secretKey)).toBeDefined();
      // Near its end, a use answers from memory and has the entry read again...
      vi.advanceTimersByTime(defaults.keyCacheMs - 5_000);
      expect(app.ctx.keys.resolveCached(tenant.secretKey)).not.toBeNull();
      // ...so that past the first entry's end the key is still in memory.
      vi.advanceTimersByTime(10_000);
      await eventually(async () =>
        app.ctx.keys.resolveCached(tenant.secretKey) !== null ? true : undefined,
      );
    } finally {
      vi.useRealTimers();
    }
  });

  it('a key read again keeps its cached tenant while nothing changed, and takes a change', async () => {
    // A tenant's plan counters are found by its limits object: an equal tenant read again
    // every minute would start them over, a thousand busy tenants a thousand times a minute.
    const tenant = await app.tenant();
    const current = () => app.ctx.keys.resolveCached(tenant.secretKey);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const first = await app.ctx.keys.resolve(tenant.secretKey);
      expect(first).toBeDefined();
      // Near the entry's end a use has it read again: the same tenant object stays.
      vi.advanceTimersByTime(defaults.keyCacheMs - 5_000);
      expect(current()?.tenant).toBe(first?.tenant);
      vi.advanceTimersByTime(10_000);
      await eventually(async () => (current() ? true : undefined));
      expect(current()?.tenant).toBe(first?.tenant);
      // A change no bus told of (written straight to the database) is read within the minute.
      await app.ctx.database.db
        .updateTable('tenants')
        .set({ name: 'Renamed while cached' })
        .where('id', '=', tenant.tenant.id)
        .execute();
      await eventually(async () => {
        vi.advanceTimersByTime(2_000);
        const now = await app.ctx.keys.resolve(tenant.secretKey);
        return now?.tenant.name === 'Renamed while cached' ? true : undefined;
      });
      expect(current()?.tenant).not.toBe(first?.tenant);
    } finally {
      vi.useRealTimers();
    }
  });

  it("busy keys near their entries' end are read again together, in one query, and a revoked one goes", async () => {
    // A thousand busy tenants' keys cached within a second come due within a second: read
    // one query each, they cost the event loop 0.1 to 0.5 ms apiece on a large SQLite file.
    const tenant = await app.tenant();
    const db = app.ctx.database.db;
    const keys = await Promise.all(
      Array.from({ length: 12 }, () => createKey(db, tenant.tenant.id, { kind: 'secret' })),
    );
    const statements: string[] = [];
    const counting = watchQueries(db, (kind) => {
      if (kind === 'SelectQueryNode') statements.push(kind);
    });
    const resolver = new KeyResolver(counting, localBus({ cache: true }));
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      for (const { plaintext } of keys) expect(await resolver.resolve(plaintext)).toBeDefined();
      expect(statements).toHaveLength(keys.length);
      statements.length = 0;
      // One key is revoked behind the cache's back (no bus told of it).
      const revoked = keys[5] as (typeof keys)[number];
      await db
        .updateTable('api_keys')
        .set({ revoked_at: Date.now() })
        .where('id', '=', revoked.key.id)
        .execute();
      vi.advanceTimersByTime(defaults.keyCacheMs - 5_000);
      for (const { plaintext } of keys) expect(resolver.resolveCached(plaintext)).not.toBeNull();
      await eventually(async () => (statements.length > 0 ? true : undefined));
      await eventually(async () =>
        resolver.resolveCached(revoked.plaintext) === null ? true : undefined,
      );
      expect(statements).toHaveLength(1);
      // Past the first entries' end, every other key is still in memory, read once more.
      vi.advanceTimersByTime(10_000);
      for (const { plaintext } of keys)
        expect(resolver.resolveCached(plaintext) === null).toBe(plaintext === revoked.plaintext);
      expect(statements).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("busy sessions near their entries' end are read again together, in one query, and a revoked one answers inactive", async () => {
    // A thousand sessions first asked about within a second would end together, and each
    // of their next requests wait for a query of its own.
    const tenant = await app.tenant();
    const db = app.ctx.database.db;
    const signed = await Promise.all(Array.from({ length: 6 }, () => session(tenant)));
    const claims = signed.map((s) => decodeJwt(s.accessToken) as { sid: string; sub: string });
    const statements: string[] = [];
    const counting = watchQueries(db, (kind) => {
      if (kind === 'SelectQueryNode') statements.push(kind);
    });
    const states = new SessionStates({ db: counting, bus: localBus({ cache: true }) });
    const revoked = claims[2] as { sid: string; sub: string };
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const users: (SessionUser | undefined)[] = [];
      for (const c of claims) users.push(await states.state(tenant.tenant.id, c.sid, c.sub));
      expect(users.every((user) => user?.email)).toBe(true);
      expect(statements).toHaveLength(claims.length);
      statements.length = 0;
      // One session is revoked behind the cache's back (no bus told of it).
      await db
        .updateTable('sessions')
        .set({ revoked_at: Date.now() })
        .where('id', '=', revoked.sid)
        .execute();
      vi.advanceTimersByTime(defaults.sessions.stateCacheMs - 5_000);
      expect(claims.map((c) => states.cachedState(c.sid, c.sub))).toEqual(users);
      await eventually(async () =>
        states.cachedState(revoked.sid, revoked.sub) === undefined ? true : undefined,
      );
      expect(statements).toHaveLength(1);
      // Past the first entries' end every other state is in memory, the same user object
      // (introspection keeps each token's answer while it is).
      vi.advanceTimersByTime(10_000);
      const kept = claims.map((c) => states.cachedState(c.sid, c.sub));
      claims.forEach((c, i) => {
        expect(kept[i]).toBe(c === revoked ? undefined : users[i]);
      });
      expect(statements).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("one tenant's revoked signing key or changed settings leave the other tenants' cached tokens and keys", async () => {
    // With thousands of tenants, one tenant's change must not make every tenant cold.
    const a = await app.tenant();
    const b = await app.tenant();
    const sa = await session(a);
    const sb = await session(b);
    await cached(sa.accessToken, a.secretKey);
    await cached(sb.accessToken, b.secretKey);
    const kidA = decodeProtectedHeader(sa.accessToken).kid as string;
    const kidB = decodeProtectedHeader(sb.accessToken).kid as string;
    const kept = () => ({
      token: app.ctx.verifiedTokens.get(sb.accessToken) !== undefined,
      signingKey: app.ctx.signingKeys.cachedVerificationKey(b.tenant.id, kidB) !== null,
      key: app.ctx.keys.resolveCached(b.secretKey) !== null,
    });
    expect(kept()).toEqual({ token: true, signingKey: true, key: true });

    await app.ctx.signingKeys.revoke(a.tenant.id, kidA);
    expect(await introspect(sa.accessToken, a.secretKey)).toBe(INACTIVE);
    await app.ctx.bus.publish(`tenant:${a.tenant.id}`);
    expect(app.ctx.keys.resolveCached(a.secretKey)).toBeNull();
    expect(kept()).toEqual({ token: true, signingKey: true, key: true });
    expect(JSON.parse(await introspect(sb.accessToken, b.secretKey)).active).toBe(true);
  });
});

describe('introspection under 100,000 distinct tokens', () => {
  let app: TestApp;
  let t: TestTenant;
  beforeAll(async () => {
    app = await startApp('sqlite');
    t = await app.tenant();
  });
  afterAll(() => app.dispose());

  it('100,000 distinct tokens leave every cache as small as it was', async () => {
    const address = email();
    await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD });
    const s = await json(
      await postJson(app, '/v1/auth/sign-in', t.secretKey, { email: address, password: PASSWORD }),
    );
    const [head, body] = s.accessToken.split('.') as [string, string];
    const sizes = () => [app.ctx.verifiedTokens.size];
    const before = sizes();
    // Well-formed tokens of a real header and payload, each with its own (wrong) signature:
    // every one goes through the key look-up and RSA, none may stay in memory.
    for (let i = 0; i < 100_000; i += 1000) {
      const batch = Array.from({ length: 1000 }, () => randomBytes(256).toString('base64url'));
      const answers = await Promise.all(
        batch.map((sig) => introspectToken(app.ctx, t.tenant, `${head}.${body}.${sig}`)),
      );
      expect(answers.every((a) => !a.active)).toBe(true);
    }
    expect(sizes()).toEqual(before);
  });
});

describe('cache bounds', () => {
  it('the verified-token cache holds at most its maximum under 100,000 distinct tokens', () => {
    const cache = new VerifiedTokens<{ n: number }>(localBus({ cache: true }), {
      ttlMs: 60_000,
      maxEntries: 10_000,
    });
    const far = Date.now() + 60_000;
    for (let n = 0; n < 100_000; n++) {
      cache.set(`token-${n}`, { tenantId: 't', claims: { n } }, cache.generation, far);
    }
    expect(cache.size).toBe(10_000);
    // The newest stay, the oldest went first.
    expect(cache.get('token-99999')?.claims.n).toBe(99_999);
    expect(cache.get('token-0')).toBeUndefined();
  });

  it('a token verified once is kept only when verified again', () => {
    const cache = new VerifiedTokens<{ n: number }>(localBus({ cache: true }), {
      ttlMs: 60_000,
      maxEntries: 10,
    });
    const far = Date.now() + 60_000;
    const token = `header.payload.${'s'.repeat(330)}AbC-_123`;
    cache.keep(token, { tenantId: 't', claims: { n: 1 } }, cache.generation, far);
    expect(cache.get(token)).toBeUndefined();
    expect(cache.size).toBe(0);
    cache.keep(token, { tenantId: 't', claims: { n: 1 } }, cache.generation, far);
    expect(cache.get(token)?.claims.n).toBe(1);
  });

  it('100,000 tokens verified once each push no kept token out, and keep nothing', () => {
    const cache = new VerifiedTokens<{ n: number }>(localBus({ cache: true }), {
      ttlMs: 60_000,
      maxEntries: 1000,
    });
    const far = Date.now() + 60_000;
    // Signature-like tails made from their number: the same every run (a token whose mark
    // happened to match one already marked would be kept a verification early).
    const tokenOf = (n: number) =>
      `header.payload.${createHash('sha512').update(String(n)).digest('base64url')}`;
    const inUse = Array.from({ length: 10 }, (_, n) => tokenOf(-1 - n));
    for (const token of [...inUse, ...inUse])
      cache.keep(token, { tenantId: 't', claims: { n: 0 } }, cache.generation, far);
    for (let n = 0; n < 100_000; n++) {
      const once = tokenOf(n);
      cache.keep(once, { tenantId: 't', claims: { n } }, cache.generation, far);
    }
    expect(cache.size).toBe(inUse.length);
    expect(inUse.every((token) => cache.get(token) !== undefined)).toBe(true);
  });

  it('the verified-token cache answers only for the exact token kept, not one with its tail', () => {
    const cache = new VerifiedTokens<{ n: number }>(localBus({ cache: true }), {
      ttlMs: 60_000,
      maxEntries: 10,
    });
    const signature = 's'.repeat(342);
    const token = `header.payload.${signature}`;
    cache.set(token, { tenantId: 't', claims: { n: 1 } }, cache.generation, Date.now() + 60_000);
    expect(cache.get(token)?.claims.n).toBe(1);
    // Same signature, another payload (or a prefix, or a suffix): never vouched for.
    expect(cache.get(`header.pAyload.${signature}`)).toBeUndefined();
    expect(cache.get(signature)).toBeUndefined();
    expect(cache.get(`x${token}`)).toBeUndefined();
    expect(cache.get(token.slice(0, -1))).toBeUndefined();
  });

  it('a cache without a live bus keeps nothing', () => {
    const cache = new VerifiedTokens<number>(localBus({ cache: false }), {
      ttlMs: 60_000,
      maxEntries: 10,
    });
    cache.set('d', { tenantId: 't', claims: 1 }, cache.generation, Date.now() + 60_000);
    expect(cache.get('d')).toBeUndefined();
  });

  it('an entry handed out reads as ended once the cache drops it, and lives on when set again unchanged', () => {
    // KeyResolver keeps the entries it was handed, by the key as presented: a revoked key,
    // a changed tenant, eviction or a clear must end them there too.
    const cache = new TtlCache<{ n: number }>(60_000, 3);
    const value = { n: 1 };
    const kept = cache.set('a', value);
    expect(kept?.expires).toBeGreaterThan(Date.now());
    // Read again unchanged (the read-ahead): the same entry, still live, with a new end.
    expect(cache.set('a', value)).toBe(kept);
    expect(cache.entry('a')).toBe(kept);
    // A new value: the old entry ends, the new one is live.
    const changed = cache.set('a', { n: 2 });
    expect(kept?.expires).toBe(0);
    expect(changed?.expires).toBeGreaterThan(0);
    // Deleted, deleted by match, evicted as the oldest, cleared: each ends where it is held.
    cache.delete('a');
    expect(changed?.expires).toBe(0);
    const b = cache.set('b', { n: 3 });
    const c = cache.set('c', { n: 4 });
    cache.deleteWhere((v) => v.n === 3);
    expect([b?.expires, (c?.expires ?? 0) > 0]).toEqual([0, true]);
    const d = cache.set('d', { n: 5 });
    cache.set('e', { n: 6 });
    cache.set('f', { n: 7 });
    expect([c?.expires, cache.size]).toEqual([0, 3]);
    cache.clear();
    expect(d?.expires).toBe(0);
    // A read from before an invalidation is not cached, and nothing is handed out.
    const readAt = cache.generation;
    cache.delete('x');
    expect(cache.set('g', { n: 8 }, readAt)).toBeUndefined();
  });

  it('an entry ends at its own expiry when that comes before the TTL', () => {
    const cache = new TtlCache<number>(60_000, 10);
    cache.set('past', 1, undefined, Date.now() - 1);
    cache.set('future', 2, undefined, Date.now() + 60_000);
    expect(cache.get('past')).toBeUndefined();
    expect(cache.get('future')).toBe(2);
  });

  it('the session, key and signing-key caches hold at most their maximum', () => {
    const cache = new TtlCache<number>(60_000, 10_000);
    for (let n = 0; n < 100_000; n++) cache.set(`sid-${n}`, n);
    expect(cache.size).toBe(10_000);
  });
});
