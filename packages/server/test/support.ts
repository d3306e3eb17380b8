/**
 * Test support: real databases (SQLite and the machine's PostgreSQL), real Redis, and a
 * real app per suite. Under CI=true a missing PostgreSQL or Redis fails the run;
 * elsewhere the suites that need them skip with a one-line notice.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo, type BoundSocket, type ListenOptions } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyListenOptions } from 'fastify';
import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { type App, type BuildOptions, buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import type { Environment, Plan } from '../src/config/defaults.js';
import type { FastPath } from '../src/http/fast-path.js';
import type { Scope } from '../src/modules/keys/index.js';
import { provisionTenant } from '../src/modules/provisioning/index.js';
import type { Tenant } from '../src/modules/tenants/index.js';
import type { SignInPolicy } from '../src/modules/users/index.js';
import {
  type DialectName,
  migrateToLatest,
  openDatabase,
  type Schema,
} from '../src/storage/index.js';
import { startTracing, stopTracing } from '../src/tracing/tracing.js';

export const PG_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const SECRET = 'test-secret-0123456789abcdefghijklmnopqrstuvwxyz';
/** What the test apps' /metrics asks for. */
export const METRICS_TOKEN = 'test-metrics-token-0123456789';
export const METRICS_AUTH = { authorization: `Bearer ${METRICS_TOKEN}` };
const CI = process.env.CI === 'true';

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function redisReachable(): Promise<boolean> {
  const redis = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

function require(name: string, ok: boolean, where: string): boolean {
  if (ok) return true;
  if (CI) throw new Error(`${name} is not reachable at ${where}, and CI=true requires it`);
  console.warn(
    `notice: ${name} not reachable at ${where}; skipping its suites (CI=true makes this a failure)`,
  );
  return false;
}

export const HAVE_POSTGRES = require('PostgreSQL', await postgresReachable(), PG_URL);
export const HAVE_REDIS = require('Redis', await redisReachable(), REDIS_URL);

/** Every storage and API suite runs once per database. */
export const DIALECTS: DialectName[] = HAVE_POSTGRES ? ['sqlite', 'postgres'] : ['sqlite'];

/** A database of its own: a temp SQLite file, or a fresh PostgreSQL schema. */
export async function freshDatabaseUrl(
  dialect: DialectName,
): Promise<{ url: string; drop(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-test-'));
    return {
      url: `sqlite:${join(dir, 'test.db')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = `lk_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    },
  };
}

/** Collects log lines so that tests can assert what was (not) logged. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void) {
    this.lines.push(chunk.toString());
    done();
  }
  text(): string {
    return this.lines.join('');
  }
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Listen on this reserved port (see reservePort) instead of one of its own. */
  socket?: BoundSocket;
  /** Share rate-limit counters with another test app (several instances). */
  rateLimitPrefix?: string;
  /** Use this database URL instead of a fresh one (several instances on one database). */
  databaseUrl?: string;
  signInPolicy?: SignInPolicy;
  /** Webhook delivery settings (shorter retry waits, a DNS of the test's own). */
  webhooks?: BuildOptions['webhooks'];
}

export interface TestApp extends App {
  url: string;
  logs: LogCapture;
  /** Creates a tenant with a secret and a publishable key. */
  tenant(options?: TenantOptions): Promise<TestTenant>;
  /** `fetch` against the app over real HTTP on loopback. */
  request(path: string, init?: RequestInit): Promise<Response>;
  dispose(): Promise<void>;
}

export interface TenantOptions {
  plan?: Plan;
  rps?: number;
  rpm?: number;
  environment?: Environment;
  requireEmailVerification?: boolean;
  allowedOrigins?: string[];
  scopes?: Scope[];
  audience?: string;
}

export interface TestTenant {
  tenant: Tenant;
  secretKey: string;
  publishableKey: string;
}

/**
 * A loopback port held for an app until it listens on it (net.BoundSocket, Node.js 24.19 or
 * newer), for a test that must name the app's URL before it starts (a provider's redirect
 * URI): no other process can take the port meanwhile. Its URL is
 * `http://127.0.0.1:${socket.address().port}`.
 */
export function reservePort(): BoundSocket {
  // Looked up when called: on an older Node.js the suite says why instead of failing to load.
  const Bound = (net as { BoundSocket?: typeof BoundSocket }).BoundSocket;
  if (!Bound)
    throw new Error(
      `The tests need Node.js 24.19 or newer (net.BoundSocket); this is ${process.version}.`,
    );
  return new Bound({ host: '127.0.0.1' });
}

/**
 * A real app on a real database, listening on a loopback port; PUBLIC_URL is that
 * address, so token issuers and JWKS URLs are the ones a client really reaches.
 */
export async function startApp(
  dialect: DialectName,
  options: TestAppOptions = {},
): Promise<TestApp> {
  // Disposed on return: a no-op once the app has adopted it, else (a failed start) closed.
  using socket = options.socket ?? reservePort();
  const { port } = socket.address();
  const fresh = options.databaseUrl
    ? { url: options.databaseUrl, drop: async () => {} }
    : await freshDatabaseUrl(dialect);
  const config = loadConfig(
    {
      DATABASE_URL: fresh.url,
      LATCHKEY_SECRET: SECRET,
      LOG_LEVEL: 'info',
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      METRICS_TOKEN,
      ...options.env,
    },
    { warn: () => {} },
  );
  // As `latchkey serve` does: traced (OTEL_*), the database's queries are traced too.
  startTracing(config.tracing);
  const database = openDatabase(fresh.url, { poolSize: 4 });
  await migrateToLatest(database.db as never);
  const logs = new LogCapture();
  const built = await buildApp(config, {
    database,
    logStream: logs,
    rateLimitPrefix: options.rateLimitPrefix ?? `lk:test:${randomUUID()}`,
    signInPolicy: options.signInPolicy,
    webhooks: options.webhooks,
  });
  // Fastify passes its listen options on to node:net, whose `handle` adopts the socket.
  const listen: FastifyListenOptions & ListenOptions = { handle: socket, host: '127.0.0.1' };
  await built.app.listen(listen);
  const url = `http://127.0.0.1:${(built.app.server.address() as AddressInfo).port}`;
  return {
    ...built,
    url,
    logs,
    async tenant(t: TenantOptions = {}) {
      const db = built.ctx.database.db;
      return provisionTenant(
        { db, signingKeys: built.ctx.signingKeys },
        {
          name: `Tenant ${randomUUID().slice(0, 8)}`,
          plan: t.plan ?? 'enterprise',
          rps: t.plan && t.plan !== 'enterprise' ? undefined : (t.rps ?? 10_000),
          rpm: t.plan && t.plan !== 'enterprise' ? undefined : (t.rpm ?? 100_000),
          environment: t.environment ?? 'development',
          requireEmailVerification: t.requireEmailVerification ?? false,
          allowedOrigins: t.allowedOrigins ?? [],
          audience: t.audience,
        },
        { scopes: t.scopes },
      );
    },
    request: (path, init) => fetch(url + path, init),
    async dispose() {
      await built.close();
      if (config.tracing) await stopTracing();
      await fresh.drop();
    },
  };
}

/** JSON POST with a bearer key. */
export function postJson(
  app: TestApp,
  path: string,
  key: string | undefined,
  body: unknown,
): Promise<Response> {
  return app.request(path, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A new user of `tenant`, signed up and signed in: the sign-in answer (tokens and user). */
export async function signedIn(
  app: TestApp,
  tenant: TestTenant,
  password = 'correct horse battery staple',
): Promise<Body> {
  const credentials = { email: email(), password };
  const up = await postJson(app, '/v1/auth/sign-up', tenant.secretKey, credentials);
  if (up.status !== 201) throw new Error(`sign-up answered ${up.status}`);
  const res = await postJson(app, '/v1/auth/sign-in', tenant.secretKey, credentials);
  if (res.status !== 200) throw new Error(`sign-in answered ${res.status}`);
  return json(res);
}

/**
 * A session as the browser libraries get one: the hosted sign-in form with a PKCE challenge,
 * then the code redeemed at /v1/client/token from `origin` (an allowed origin of the
 * tenant). Its refresh token is a browser's, which /v1/client/* accept.
 */
export async function browserSignIn(
  app: TestApp,
  tenant: TestTenant,
  credentials: { email: string; password: string },
  origin: string,
): Promise<Body> {
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    pk: tenant.publishableKey,
    redirect_url: `${origin}/callback`,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const page = await app.request(`/sign-in?${query}`);
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  const signedIn = await app.request(`/sign-in?${query}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ _csrf: csrf, ...credentials }),
  });
  const location = signedIn.headers.get('location') ?? '';
  const code = new URLSearchParams(new URL(location, app.url).hash.slice(1)).get('code');
  if (!code) throw new Error(`hosted sign-in answered ${signedIn.status} without a code`);
  const res = await app.request('/v1/client/token', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-latchkey-publishable-key': tenant.publishableKey,
      origin,
    },
    body: JSON.stringify({ grant_type: 'authorization_code', code, code_verifier: verifier }),
  });
  if (res.status !== 200) throw new Error(`code redemption answered ${res.status}`);
  return json(res);
}

let counter = 0;
/** A unique address for each call. */
export function email(prefix = 'user'): string {
  counter += 1;
  return `${prefix}-${counter}-${randomUUID().slice(0, 8)}@example.com`;
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by assertions, not types
export type Body = Record<string, any>;

/** The parsed JSON body of a response. */
export async function json(res: Response): Promise<Body> {
  return (await res.json()) as Body;
}

/**
 * Polls `probe` until it returns something other than undefined, and returns that. For
 * work that finishes after the answer (mail, invalidations): no fixed sleeps. The test
 * timeout bounds the wait.
 */
export async function eventually<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * `db` telling `seen` the kind of each query it runs (`SelectQueryNode`, `UpdateQueryNode`, …),
 * as the query is compiled, just before it goes to the database.
 */
export function watchQueries(db: Kysely<Schema>, seen: (kind: string) => void): Kysely<Schema> {
  return db.withPlugin({
    transformQuery: (args) => {
      seen(args.node.kind);
      return args.node;
    },
    transformResult: async (args) => args.result,
  });
}

/** What a fast path is built with in `fastPathServer`: app.ts hands it the same three. */
export interface FastPathHooks {
  /** Fastify's router: where the fast path hands a request over after it read the body. */
  fallback: (request: IncomingMessage, response: ServerResponse) => void;
  enabled: () => boolean;
  /** Called for each answer the fast path writes itself. */
  observe: () => void;
}

/** An answer over HTTP, with who gave it: the fast path, or Fastify before or after it. */
export interface FastPathAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** The answer's JSON, parsed; its text when it is not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by assertions, not types
  body: any;
  /** The fast path answered. */
  fast: number;
  /** Fastify answered a request the fast path did not take. */
  before: number;
  /** Fastify answered a request the fast path handed over after reading it. */
  after: number;
}

export interface FastPathServer {
  url: string;
  /** POSTs `body` to `path` and says who answered. */
  send(body: string, headers: Record<string, string>): Promise<FastPathAnswer>;
  close(): Promise<void>;
}

/**
 * A real fast path (`make`) in front of the app's real Fastify router, over HTTP on
 * loopback, as app.ts puts them together, counting who answered each request.
 */
export async function fastPathServer(
  app: TestApp,
  path: string,
  make: (hooks: FastPathHooks) => FastPath,
): Promise<FastPathServer> {
  const taken = { fast: 0, before: 0, after: 0 };
  const fast = make({
    fallback: (request, response) => {
      taken.after += 1;
      app.app.routing(request, response);
    },
    enabled: () => true,
    observe: () => {
      taken.fast += 1;
    },
  });
  const server = createServer((request, response) => {
    if (fast(request, response)) return;
    taken.before += 1;
    app.app.routing(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return {
    url,
    async send(body, headers) {
      const before = { ...taken };
      const res = await fetch(url, { method: 'POST', headers, body });
      const text = await res.text();
      return {
        status: res.status,
        headers: res.headers,
        text,
        body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text,
        fast: taken.fast - before.fast,
        before: taken.before - before.before,
        after: taken.after - before.after,
      };
    },
    close: () =>
      new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}
