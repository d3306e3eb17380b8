import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { type InvalidationBus, localBus, redisBus, sqliteBus } from './cache/invalidation.js';
import { connectRedis, RedisHealth, redisReady } from './cache/redis.js';
import type { Config } from './config/config.js';
import { defaults } from './config/defaults.js';
import { LatchkeyError } from './errors/index.js';
import { CLIENT_AUTH_METHODS } from './http/client-auth.js';
import { trackConnections } from './http/connections.js';
import type { AppContext } from './http/context.js';
import { elapsedMs, type FastPath, settledBy } from './http/fast-path.js';
import { INTROSPECT_PATH, introspectionFastPath } from './http/introspection-fast-path.js';
import { registerJsonParser } from './http/json-body.js';
import { loggerOptions, OneLineLog } from './http/logging.js';
import { registerNotFound } from './http/not-found.js';
import { collectApiRoutes, registerOpenApi } from './http/openapi.js';
import { errorHandler, sendProblem } from './http/problem.js';
import { REFRESH_PATH, refreshFastPath } from './http/refresh-fast-path.js';
import { adminRoutes } from './http/routes/admin.js';
import { clientRoutes } from './http/routes/client.js';
import { factorRoutes } from './http/routes/factors.js';
import { hostedPageRoutes } from './http/routes/hosted-pages.js';
import { introspectionRoutes } from './http/routes/introspection.js';
import { hostedSide, oauthRoutes } from './http/routes/oauth.js';
import { operationsRoutes } from './http/routes/operations.js';
import { operatorRoutes } from './http/routes/operator.js';
import { sdkRoutes } from './http/routes/sdk.js';
import { sdkPackageRoutes } from './http/routes/sdk-packages.js';
import { sessionRoutes } from './http/routes/sessions.js';
import { signUpRoutes } from './http/routes/sign-up.js';
import { userRoutes } from './http/routes/users.js';
import { wellKnownRoutes } from './http/routes/well-known.js';
import { SIGN_IN_PATH, signInFastPath } from './http/sign-in-fast-path.js';
import { createMailer } from './modules/email/index.js';
import { VerifiedTokens } from './modules/introspection/index.js';
import { KeyResolver } from './modules/keys/index.js';
import { openMasterSecret } from './modules/master-secret/index.js';
import { AppCredentials } from './modules/oauth/index.js';
import { OAuthProviders } from './modules/oauth/registry.js';
import { answerObserver, createMetrics, requestObserver } from './modules/observability/metrics.js';
import { RateLimitService } from './modules/rate-limit/index.js';
import { startRetention } from './modules/retention/index.js';
import {
  PostgresRefreshBatch,
  Sessions,
  SigningKeys,
  SqliteRefreshBatch,
} from './modules/sessions/index.js';
import {
  createBreachedPasswords,
  createPasswordHasher,
  isValidEmail,
  type SignInPolicy,
} from './modules/users/index.js';
import {
  type DispatcherSettings,
  type Resolve,
  WebhookDispatcher,
} from './modules/webhooks/index.js';
import { type Database, migrateToLatest, openDatabase } from './storage/index.js';
import { setRoute, startTracing, stopTracing, traceRequest, tracer } from './tracing/tracing.js';

export interface BuildOptions {
  /** Where logs go (tests capture them); stdout by default. */
  logStream?: DestinationStream;
  /** Run migrations on start (the default for SQLite). */
  migrate?: boolean;
  /** Prefix for rate-limit keys in Redis, so that test runs never share counters. */
  rateLimitPrefix?: string;
  /** An already-open database (tests); closed with the app. */
  database?: Database;
  /** Replaces the failed sign-in policy of defaults.ts (tests shorten its waits). */
  signInPolicy?: SignInPolicy;
  /** Told start-up warnings (a generated master secret); the log by default. */
  warn?: (message: string) => void;
  /** Replaces webhook delivery settings of defaults.ts (tests shorten the retry waits). */
  webhooks?: Partial<DispatcherSettings> & { resolve?: Resolve };
}

export interface App {
  app: FastifyInstance;
  ctx: AppContext;
  /** `METHOD /path` of every API route (HEAD and hidden pages excluded), for the OpenAPI check. */
  routes: string[];
  close(): Promise<void>;
}

/**
 * node:http without an ES module namespace: building one reads every export, and its lazy
 * WebSocket and fetch exports load undici (about 3 MB of an idle server's memory).
 */
const { createServer } = process.getBuiltinModule('node:http');

/** Headers of every answer; a route that may be cached sets its own cache-control. */
const DEFAULT_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

/** The composition root: opens storage, builds services, registers routes. */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<App> {
  // Before the database and Redis are opened: their clients are traced from the start.
  startTracing(config.tracing);
  // Requests go to the introspection fast path first, once the context exists (below).
  let fastPath: FastPath | undefined;
  let fastify: ((request: IncomingMessage, response: ServerResponse) => void) | undefined;
  let connections: ReturnType<typeof trackConnections> | undefined;
  const app = Fastify({
    // Fastify's own HTTP/1.1 server (lib/server.js), with the fast path in front.
    serverFactory: (handler, opts) => {
      fastify = handler;
      // Traced, each request runs in its span (docs/design.md §7.1); untraced, one check.
      const traced = (request: IncomingMessage, response: ServerResponse) => {
        // A fast path takes only its one exact path: the URL is the route.
        if (fastPath?.(request, response)) setRoute(response, request.url);
        else handler(request, response);
      };
      const server = createServer((request, response) => {
        if (tracer) traceRequest(request, response, () => traced(request, response));
        else if (!fastPath?.(request, response)) handler(request, response);
      });
      connections = trackConnections(server);
      // Fastify has filled in its defaults (72 s, none, none, none) by now.
      const option = (name: string, fallback: number) =>
        typeof opts[name] === 'number' ? opts[name] : fallback;
      server.keepAliveTimeout = option('keepAliveTimeout', 72_000);
      server.requestTimeout = option('requestTimeout', 0);
      server.setTimeout(option('connectionTimeout', 0));
      const perSocket = option('maxRequestsPerSocket', 0);
      if (perSocket > 0) server.maxRequestsPerSocket = perSocket;
      return server;
    },
    logger: loggerOptions(config.logLevel, options.logStream),
    bodyLimit: config.bodyLimit,
    // Fastify accepts a hop count too; its types only list the other forms.
    trustProxy: config.trustProxy as boolean | string | string[],
    genReqId: () => randomUUID(),
    logController: new OneLineLog(),
    frameworkErrors: (_error, _request, reply) =>
      sendProblem(reply, new LatchkeyError('invalid_request', 'The URL is not valid')),
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Our own 503 (below) is a problem document; Fastify's is not.
    return503OnClosing: false,
    // Idle connections are closed by the shutdown's drain (below), once nothing is in flight.
    forceCloseConnections: false,
    ajv: {
      customOptions: {
        coerceTypes: false,
        removeAdditional: false,
        useDefaults: false,
        allErrors: true,
      },
      // Runs after ajv-formats is added, so our e-mail rule (trimmed, internationalised) wins.
      onCreate: (ajv: { addFormat(name: string, check: (value: string) => boolean): unknown }) => {
        ajv.addFormat('email', (value) => isValidEmail(value.trim()));
      },
    },
  });
  const database = options.database ?? openDatabase(config.databaseUrl);
  if (options.migrate ?? database.dialect === 'sqlite') await migrateToLatest(database.db as never);
  // Before anything else: a master secret the database does not agree to stops the start.
  const box = await openMasterSecret(
    database.db,
    config,
    options.warn ?? ((message) => app.log.warn(message)),
  ).catch(async (error: unknown) => {
    await database.close();
    throw error;
  });
  database.onIdleError((error) => app.log.error({ err: error }, 'PostgreSQL idle client error'));

  let redisWarned = false;
  const redis = config.redisUrl
    ? connectRedis(config.redisUrl, (error) => {
        if (!redisWarned) app.log.warn({ err: error }, 'Redis unreachable');
        redisWarned = true;
      })
    : undefined;
  redis?.on('ready', () => {
    if (redisWarned) app.log.info('Redis reachable again');
    redisWarned = false;
  });
  // Start counting in Redis from the first request; if it is down, start anyway (in memory).
  if (redis) await redisReady(redis, defaults.timeouts.redisConnectMs);
  const redisHealth = redis ? new RedisHealth(redis) : undefined;
  redisHealth?.onChange((healthy) =>
    healthy
      ? app.log.info('Redis answers again')
      : app.log.warn('Redis does not answer; counting rate limits in memory, caches off'),
  );

  const metrics = createMetrics({ enabled: config.metricsToken !== undefined });
  const cacheHits = metrics.sessionCache.labels({ result: 'hit' });
  const cacheMisses = metrics.sessionCache.labels({ result: 'miss' });
  // Caches are used only where every writer's changes are heard: through Redis pub/sub, or
  // on SQLite through its data_version. PostgreSQL without Redis always reads the database.
  const bus: InvalidationBus =
    redis && redisHealth
      ? redisBus(redis, redisHealth, (error) =>
          app.log.warn({ err: error }, 'invalidation bus error'),
        )
      : database.dataVersion
        ? sqliteBus(database.dataVersion)
        : localBus({ cache: false });
  if (!redis && !database.dataVersion)
    app.log.warn(
      'PostgreSQL without REDIS_URL: nothing is cached (no instance could hear another ' +
        "instance's changes), so every introspection reads the database; set REDIS_URL, " +
        'even for one instance',
    );
  const signingKeys = new SigningKeys(database.db, box, bus);
  const sessions = new Sessions({
    db: database.db,
    signingKeys,
    bus,
    authUrl: config.publicUrl,
    ...(metrics.enabled
      ? { onCacheLookup: (hit: boolean) => (hit ? cacheHits : cacheMisses).inc() }
      : {}),
  });
  const ctx: AppContext = {
    config,
    log: app.log,
    database,
    redis,
    metrics,
    box,
    bus,
    keys: new KeyResolver(database.db, bus),
    apps: new AppCredentials(database.db, bus),
    mailer: createMailer({
      smtpUrl: config.smtpUrl,
      from: `Latchkey <no-reply@${new URL(config.publicUrl).hostname}>`,
      db: database.db,
      log: (message, fields) => app.log.info(fields, message),
    }),
    signingKeys,
    sessions,
    verifiedTokens: new VerifiedTokens(bus, defaults.verifiedTokens),
    authUrl: config.publicUrl,
    signInPolicy: options.signInPolicy ?? defaults.signInFailures,
    oauthProviders: new OAuthProviders(
      {
        db: database.db,
        bus,
        authUrl: config.publicUrl,
        signingKeys,
        secret: config.secret,
        introspection: {
          url: `${config.publicUrl}${INTROSPECT_PATH}`,
          authMethods: CLIENT_AUTH_METHODS,
        },
        hosted: hostedSide({ db: database.db, authUrl: config.publicUrl }),
      },
      bus,
    ),
    hasher: createPasswordHasher(config.argon2),
    breached: createBreachedPasswords({
      url: config.breachedPasswordsUrl,
      timeoutMs: defaults.breachedPasswords.timeoutMs,
      warn: (fields, message) => app.log.warn(fields, message),
    }),
    limiter: new RateLimitService({
      redis,
      storeHealthy: () => redisHealth?.healthy ?? false,
      keyPrefix: options.rateLimitPrefix ?? 'lk:rl',
      onStoreError: (error) => app.log.warn({ err: error }, 'rate limits counted in this process'),
    }),
  };

  const routes = collectApiRoutes(app);
  app.decorateRequest('apiKey', undefined);
  app.setErrorHandler(errorHandler);
  // 405 with Allow for a known path, a 404 that names a near route (http/not-found.ts).
  registerNotFound(app);
  app.removeContentTypeParser('text/plain');
  registerJsonParser(app);
  // Shutdown: every request in flight is answered, each answer the last of its connection;
  // a request that arrives meanwhile is told to go elsewhere (503); then idle connections
  // close, and only then the listener. Until then connections the kernel has queued are
  // still taken, and answered.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    const { drainMs, drainFirstRequestMs } = defaults.timeouts;
    await connections?.drain(Date.now() + drainMs, drainFirstRequestMs);
  });
  // Hooks that run on every request take a callback: an async hook costs a promise each.
  app.addHook('onRequest', (request, reply, done) => {
    // Secure by default: no answer is sniffed, and none is stored by a cache unless its
    // route says how (public config, JWKS, the script). Tokens and users' data never are
    // (RFC 6749 section 5.1).
    reply.headers(DEFAULT_HEADERS);
    // The request's span is named by its route (docs/design.md §7.1), known once routed.
    if (tracer) setRoute(reply.raw, request.routeOptions.url);
    if (closing) {
      connections?.lastAnswer(reply.raw);
      // A refusal a fast path already reached (its failure counted, its challenge made) is
      // answered as it is: asked again elsewhere, it would count twice.
      if (!settledBy(request.raw)) {
        sendProblem(
          reply,
          new LatchkeyError('service_unavailable', 'The server is shutting down; try again'),
        );
        return;
      }
    }
    if (request.url.includes('%') && /%00/i.test(request.url))
      return done(new LatchkeyError('invalid_request', 'The URL contains a NUL character'));
    done();
  });
  const observe = requestObserver(metrics);
  app.addHook('onResponse', (request, reply, done) => {
    const elapsed = elapsedMs(request.raw, reply.elapsedTime);
    observe(request.method, request.routeOptions.url, reply.statusCode, elapsed);
    done();
  });
  // At debug every answer is logged, which only Fastify's path does.
  const logsEveryAnswer = config.logLevel === 'debug' || config.logLevel === 'trace';
  const fallback = (request: IncomingMessage, response: ServerResponse) =>
    fastify?.(request, response);
  const enabled = () => !closing && !logsEveryAnswer;
  const introspection = introspectionFastPath(ctx, {
    fallback,
    enabled,
    observe: answerObserver(metrics, 'POST', INTROSPECT_PATH, 200),
  });
  // Refreshes: one transaction per turn of the event loop (modules/sessions/refresh-batch.ts).
  const batchDeps = { db: database.db, signingKeys, authUrl: config.publicUrl };
  const refresh = refreshFastPath(
    database.sqlite
      ? new SqliteRefreshBatch({ ...batchDeps, sqlite: database.sqlite })
      : new PostgresRefreshBatch(batchDeps),
    ctx,
    { fallback, enabled, observe: answerObserver(metrics, 'POST', REFRESH_PATH, 200) },
  );
  // Password sign-ins: the route's own signIn(), without the framework around it.
  const signIn = signInFastPath(ctx, {
    fallback,
    enabled,
    observe: answerObserver(metrics, 'POST', SIGN_IN_PATH, 200),
    log: app.log,
  });
  fastPath = (request, response) =>
    introspection(request, response) || refresh(request, response) || signIn(request, response);

  await registerOpenApi(app, config.publicUrl);

  operationsRoutes(app, ctx);
  signUpRoutes(app, ctx);
  sessionRoutes(app, ctx);
  userRoutes(app, ctx);
  operatorRoutes(app, ctx);
  factorRoutes(app, ctx);
  introspectionRoutes(app, ctx);
  wellKnownRoutes(app, ctx);
  oauthRoutes(app, ctx);
  hostedPageRoutes(app, ctx);
  clientRoutes(app, ctx);
  adminRoutes(app, ctx);
  sdkRoutes(app);
  sdkPackageRoutes(app, config.publicUrl);
  await app.ready();
  // Every instance delivers webhooks (docs/design.md §17).
  const { resolve, ...webhookSettings } = options.webhooks ?? {};
  const dispatcher = new WebhookDispatcher({
    db: database.db,
    dialect: database.dialect,
    box,
    settings: webhookSettings,
    ...(resolve && { resolve }),
    log: {
      warn: (fields, message) => app.log.warn(fields, message),
      info: (fields, message) => app.log.info(fields, message),
    },
  });
  dispatcher.start();
  const stopRetention = startRetention({
    db: database.db,
    onPurged: (deleted) => app.log.info({ deleted }, 'retention: expired rows deleted'),
    onError: (error) => app.log.warn({ err: error }, 'retention run failed; retried next run'),
  });

  return {
    app,
    ctx,
    routes,
    async close() {
      stopRetention();
      await app.close();
      await dispatcher.stop();
      await ctx.limiter.close();
      // The keys' last uses of this second are written before the database closes.
      await ctx.keys.flushUses();
      await bus.close();
      redisHealth?.close();
      redis?.disconnect();
      await database.close();
      // The spans of the last requests are sent before the process may end.
      if (config.tracing) await stopTracing();
    },
  };
}
