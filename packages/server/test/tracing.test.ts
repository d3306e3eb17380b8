/**
 * OpenTelemetry traces (docs/design.md §7.1): with OTEL_EXPORTER_OTLP_ENDPOINT set, the
 * server sends its spans over OTLP/HTTP to a real receiver on loopback; unset, it loads no
 * part of the SDK and sends nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { startServe } from './cli-run.js';
import {
  HAVE_REDIS,
  json,
  postJson,
  REDIS_URL,
  signedIn,
  startApp,
  type TestApp,
} from './support.js';

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status?: { code?: number };
}

/** An OTLP/HTTP receiver (JSON encoding, what @opentelemetry/exporter-trace-otlp-http sends). */
class Receiver {
  readonly spans: Span[] = [];
  readonly services = new Set<string>();
  requests = 0;
  #server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      this.requests++;
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const resourceSpans of body.resourceSpans ?? []) {
        for (const a of resourceSpans.resource?.attributes ?? [])
          if (a.key === 'service.name' || a.key === 'deployment.environment.name')
            this.services.add(`${a.key}=${a.value.stringValue}`);
        for (const scope of resourceSpans.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            this.spans.push({
              ...span,
              attributes: Object.fromEntries(
                (span.attributes ?? []).map(
                  (a: { key: string; value: Record<string, unknown> }) => [
                    a.key,
                    Object.values(a.value)[0],
                  ],
                ),
              ),
            });
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  /** The SERVER span of `METHOD route`, the n-th one sent. */
  request(name: string, n = 0): Span {
    const found = this.spans.filter((s) => s.kind === 2 && s.name === name)[n];
    if (!found) throw new Error(`no span "${name}" among ${this.spans.map((s) => s.name)}`);
    return found;
  }

  /** Every span under `root`, at any depth. */
  within(root: Span): Span[] {
    const ids = new Set([root.spanId]);
    const out: Span[] = [];
    let grew = true;
    while (grew) {
      grew = false;
      for (const span of this.spans)
        if (span.parentSpanId && ids.has(span.parentSpanId) && !ids.has(span.spanId)) {
          ids.add(span.spanId);
          out.push(span);
          grew = true;
        }
    }
    return out;
  }
}

const SDK_MODULE = /node_modules[\\/]@opentelemetry[\\/](sdk-trace|exporter-trace-otlp-http)[\\/]/;
const sdkLoaded = () =>
  Object.keys(createRequire(import.meta.url).cache).some((path) => SDK_MODULE.test(path));

const receiver = new Receiver();
let endpoint: string;
beforeAll(async () => {
  endpoint = await receiver.start();
});
afterAll(() => receiver.close());

const introspect = (app: TestApp, key: string, token: string, headers = {}) =>
  app.request('/api/auth/introspect', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify({ token }),
  });

// Runs first: the SDK, once loaded, stays in this process's module cache.
describe('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  it('loads no part of the SDK and sends nothing', async () => {
    const app = await startApp('sqlite');
    try {
      const tenant = await app.tenant();
      const session = await signedIn(app, tenant);
      const answer = await introspect(app, tenant.secretKey, session.accessToken);
      expect((await json(answer)).active).toBe(true);
    } finally {
      await app.dispose();
    }
    expect(sdkLoaded()).toBe(false);
    expect(receiver.requests).toBe(0);
  });
});

describe('OTEL_* configuration', () => {
  const config = (env: Record<string, string>) =>
    loadConfig({ LATCHKEY_SECRET: 'x'.repeat(32), ...env }, { warn: () => {} }).tracing;

  it('is off without an endpoint, and with OTEL_SDK_DISABLED', () => {
    expect(config({})).toBeUndefined();
    expect(
      config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBeUndefined();
  });

  it('posts to {endpoint}/v1/traces, or to the traces endpoint as given', () => {
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toMatchObject({
      url: 'http://c:4318/v1/traces',
      serviceName: 'latchkey',
      sampler: 'parentbased_always_on',
    });
    expect(
      config({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://t.example/otlp',
        OTEL_SERVICE_NAME: 'auth',
        OTEL_TRACES_SAMPLER: 'traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      }),
    ).toMatchObject({
      url: 'https://t.example/otlp',
      serviceName: 'auth',
      sampler: 'traceidratio',
      samplerRatio: 0.25,
      batch: { scheduledDelayMillis: 100 },
    });
  });

  it('refuses to start on a value it cannot use, saying which', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(() => config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'c:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an http/,
    );
    expect(() => config({ ...endpoint, OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(
      /OTEL_TRACES_SAMPLER must be one of/,
    );
    expect(() => config({ ...endpoint, OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(
      /OTEL_TRACES_SAMPLER_ARG/,
    );
    expect(() => config({ ...endpoint, OTEL_BSP_SCHEDULE_DELAY: '1s' })).toThrow(
      /OTEL_BSP_SCHEDULE_DELAY must be a whole number/,
    );
  });
});

const MODES = [
  {
    name: 'SQLite',
    dialect: 'sqlite' as const,
    env: {} as Record<string, string>,
    system: 'sqlite',
    redis: false,
  },
  ...(HAVE_REDIS
    ? [
        {
          name: 'PostgreSQL + Redis',
          dialect: 'postgres' as const,
          env: { REDIS_URL },
          system: 'postgresql',
          redis: true,
        },
      ]
    : []),
];

describe.each(MODES)('tracing on, $name', ({ dialect, env, system, redis }) => {
  it('sends a trace per request with its queries, argon2 and signatures, continuing traceparent', async () => {
    receiver.spans.length = 0;
    const app = await startApp(dialect, {
      env: {
        ...env,
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        // Long enough that nothing is sent before the shutdown, which must flush it all.
        OTEL_BSP_SCHEDULE_DELAY: '60000',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
      },
    });
    const caller = '0af7651916cd43dd8448eb211c80319c';
    let userId: string;
    try {
      expect(sdkLoaded()).toBe(true);
      const tenant = await app.tenant();
      const session = await signedIn(app, tenant);
      userId = session.user.id;
      // Cold: the token is verified (its signature), in the trace the caller started.
      const answer = await introspect(app, tenant.secretKey, session.accessToken, {
        traceparent: `00-${caller}-b7ad6b7169203331-01`,
      });
      expect((await json(answer)).active).toBe(true);
      // Warm: the fast path answers from its caches, traced all the same (a token is
      // kept from its second verification on: the third use is the first from memory).
      for (let i = 0; i < 2; i++)
        expect(
          (await json(await introspect(app, tenant.secretKey, session.accessToken))).active,
        ).toBe(true);
      const bad = await postJson(app, '/v1/auth/sign-in', tenant.secretKey, { email: 'x' });
      expect(bad.status).toBe(422);
      expect(receiver.spans).toEqual([]);
    } finally {
      await app.dispose();
    }
    expect(receiver.services).toEqual(
      new Set(['service.name=latchkey', 'deployment.environment.name=test']),
    );

    // Sign-up: argon2 hash, the user's INSERT, the session's signature, one trace.
    const signUp = receiver.request('POST /v1/auth/sign-up');
    expect(signUp.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/auth/sign-up',
      'http.response.status_code': 201,
    });
    expect(signUp.parentSpanId ?? '').toBe('');
    const upChildren = receiver.within(signUp);
    expect(upChildren.every((s) => s.traceId === signUp.traceId)).toBe(true);
    expect(upChildren.map((s) => s.name)).toContain('argon2id hash');
    const insert = upChildren.find(
      (s) => s.name === 'INSERT' && String(s.attributes['db.query.text']).includes('"users"'),
    );
    expect(insert?.attributes['db.system.name']).toBe(system);
    expect(insert?.kind).toBe(3); // CLIENT
    // The statement's text, never its values.
    expect(String(insert?.attributes['db.query.text'])).not.toContain('@example.com');

    // Sign-in: argon2 verify, queries, the access token's signature.
    const signIn = receiver.request('POST /v1/auth/sign-in');
    const inNames = receiver.within(signIn).map((s) => s.name);
    expect(inNames).toContain('argon2id verify');
    expect(inNames).toContain('jwt sign');
    expect(inNames).toContain('SELECT');
    // Redis commands (the sign-in's rate limits), by name only.
    const commands = receiver
      .within(signIn)
      .filter((s) => s.attributes['db.system.name'] === 'redis');
    expect(commands.length > 0).toBe(redis);
    for (const command of commands)
      expect(Object.keys(command.attributes).sort()).toEqual([
        'db.operation.name',
        'db.system.name',
      ]);
    // No password, e-mail address or token in any span.
    const sent = JSON.stringify(receiver.spans);
    expect(sent).not.toContain('correct horse');
    expect(sent).not.toContain('@example.com');
    expect(sent).not.toContain(userId);

    // Introspection continues the caller's trace; the cold one verifies the signature.
    const cold = receiver.request('POST /api/auth/introspect', 0);
    expect(cold.traceId).toBe(caller);
    expect(cold.parentSpanId).toBe('b7ad6b7169203331');
    expect(cold.attributes['http.response.status_code']).toBe(200);
    expect(cold.attributes['http.route']).toBe('/api/auth/introspect');
    expect(receiver.within(cold).map((s) => s.name)).toContain('jwt verify');
    const again = receiver.request('POST /api/auth/introspect', 1);
    expect(receiver.within(again).map((s) => s.name)).toContain('jwt verify');
    const warm = receiver.request('POST /api/auth/introspect', 2);
    expect(warm.traceId).not.toBe(caller);
    expect(receiver.within(warm).map((s) => s.name)).not.toContain('jwt verify');

    // A refused request is traced with its status.
    const refused = receiver.request('POST /v1/auth/sign-in', 1);
    expect(refused.attributes['http.response.status_code']).toBe(422);

    // Work outside requests (provisioning the tenant, migrations) makes no orphan span.
    const requestIds = new Set(
      receiver.spans.filter((s) => s.kind === 2).flatMap((s) => [s, ...receiver.within(s)]),
    );
    expect(receiver.spans.filter((s) => !requestIds.has(s))).toEqual([]);
  });
});

describe('tracing on, the built server (latchkey serve)', () => {
  it('loads the SDK from node_modules beside the bundle, and SIGTERM sends what it holds', async () => {
    receiver.spans.length = 0;
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-tracing-'));
    try {
      const { child, url, exited } = await startServe(
        {
          DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`,
          LATCHKEY_SECRET: 'x'.repeat(32),
          OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
          OTEL_SERVICE_NAME: 'auth-eu',
          OTEL_BSP_SCHEDULE_DELAY: '60000',
        },
        '/readyz',
      );
      const caller = '4bf92f3577b34da6a3ce929d0e0e4736';
      const answer = await fetch(`${url}/api/auth/introspect`, {
        method: 'POST',
        headers: { traceparent: `00-${caller}-00f067aa0ba902b7-01` },
      });
      expect(answer.status).toBe(401);
      expect(receiver.spans).toEqual([]);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const span = receiver.request('POST /api/auth/introspect');
      expect(span.traceId).toBe(caller);
      expect(span.attributes['http.response.status_code']).toBe(401);
      expect(receiver.services).toContain('service.name=auth-eu');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
