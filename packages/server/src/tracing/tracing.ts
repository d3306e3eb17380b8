/**
 * OpenTelemetry traces over OTLP/HTTP (docs/design.md §7.1), on only when
 * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set.
 *
 * The SDK is loaded through createRequire when tracing starts, so an untraced server loads
 * none of it (esbuild leaves these requires alone; the packages come from node_modules).
 * Every hook in the server reads `tracer`, undefined while tracing is off: one check, and
 * the code path is otherwise the one an untraced server runs.
 *
 * Spans: one per HTTP request (SERVER, continuing an incoming W3C `traceparent`), and
 * within it one per database query, Redis command, argon2 hash or verification, and token
 * signature or verification. Work outside a request (retention, webhook delivery, Redis
 * health probes) makes no span: a child without a request would be a trace of its own.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type * as Api from '@opentelemetry/api';

export interface TracingSettings {
  /** Where spans are POSTed: `{OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`, or the traces endpoint as given. */
  readonly url: string;
  readonly serviceName: string;
  /** OTEL_TRACES_SAMPLER's names: always_on, always_off, traceidratio, parentbased_*. */
  readonly sampler: string;
  readonly samplerRatio: number;
  /** OTEL_RESOURCE_ATTRIBUTES, parsed. */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  /** OTEL_BSP_*: the batch span processor's settings; unset ones keep the SDK's defaults. */
  readonly batch: {
    readonly scheduledDelayMillis?: number;
    readonly maxQueueSize?: number;
    readonly maxExportBatchSize?: number;
    readonly exportTimeoutMillis?: number;
  };
}

const require = createRequire(import.meta.url);

/** Set while tracing is on; every hook checks it first. */
export let tracer: Api.Tracer | undefined;
let api: typeof Api;
let provider: { forceFlush(): Promise<void>; shutdown(): Promise<void> } | undefined;
let users = 0;

function samplerOf(
  sdk: typeof import('@opentelemetry/sdk-trace'),
  name: string,
  ratio: number,
): import('@opentelemetry/sdk-trace').Sampler {
  const root = name.replace(/^parentbased_/, '');
  const base =
    root === 'always_off'
      ? new sdk.AlwaysOffSampler()
      : root === 'traceidratio'
        ? new sdk.TraceIdRatioBasedSampler(ratio)
        : new sdk.AlwaysOnSampler();
  return name.startsWith('parentbased_') ? new sdk.ParentBasedSampler({ root: base }) : base;
}

/**
 * Loads the SDK and installs the tracer (once per process; each start is matched by a
 * stopTracing). Does nothing when `settings` is undefined.
 */
export function startTracing(settings: TracingSettings | undefined): void {
  if (!settings) return;
  users++;
  if (tracer) return;
  api = require('@opentelemetry/api') as typeof Api;
  const sdk = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes, defaultResource } =
    require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { AsyncLocalStorageContextManager } =
    require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
  const { W3CTraceContextPropagator } =
    require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  const { ATTR_SERVICE_NAME } =
    require('@opentelemetry/semantic-conventions') as typeof import('@opentelemetry/semantic-conventions');
  const traceProvider = new sdk.TracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({
        ...settings.resourceAttributes,
        [ATTR_SERVICE_NAME]: settings.serviceName,
      }),
    ),
    sampler: samplerOf(sdk, settings.sampler, settings.samplerRatio),
    spanProcessors: [
      new sdk.BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: settings.url }),
        ...settings.batch,
      }),
    ],
  });
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  api.trace.setGlobalTracerProvider(traceProvider);
  provider = traceProvider;
  tracer = traceProvider.getTracer('latchkey');
}

/** Sends the spans still held, and stops tracing once its last user stops. */
export async function stopTracing(): Promise<void> {
  if (!provider || users === 0) return;
  if (--users > 0) {
    await provider.forceFlush();
    return;
  }
  const stopping = provider;
  provider = undefined;
  tracer = undefined;
  await stopping.shutdown();
  api.trace.disable();
  api.propagation.disable();
  api.context.disable();
}

const SPAN = Symbol('latchkey.span');
type Traced = ServerResponse & { [SPAN]?: Api.Span & { route?: string } };

/**
 * Runs `handle` inside a SERVER span for this request, continuing the caller's trace
 * (W3C Trace Context); the span ends when the answer is sent or the connection closes.
 */
export function traceRequest(
  request: IncomingMessage,
  response: ServerResponse,
  handle: () => void,
): void {
  const t = tracer as Api.Tracer;
  const parent = api.propagation.extract(api.ROOT_CONTEXT, request.headers);
  const method = request.method ?? 'GET';
  const path = request.url?.split('?', 1)[0] ?? '/';
  const span: Api.Span & { route?: string } = t.startSpan(
    method,
    {
      kind: api.SpanKind.SERVER,
      attributes: { 'http.request.method': method, 'url.path': path },
    },
    parent,
  );
  (response as Traced)[SPAN] = span;
  const active = api.trace.setSpan(parent, span);
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    const status = response.statusCode;
    span.setAttribute('http.response.status_code', status);
    if (span.route) {
      span.setAttribute('http.route', span.route);
      span.updateName(`${method} ${span.route}`);
    }
    if (status >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
    if (!response.writableFinished) span.setAttribute('error.type', 'connection_closed');
    span.end();
  };
  response.once('finish', end);
  response.once('close', end);
  // The body arrives in events of the connection's context: bound, they run in this one.
  api.context.bind(active, request);
  api.context.bind(active, response);
  api.context.with(active, handle);
}

/** The route template that answered (`/v1/users/:id`), for the request's span. */
export function setRoute(response: ServerResponse, route: string | undefined): void {
  const span = (response as Traced)[SPAN];
  if (span && route) span.route = route;
}

/** A child span of the current request's, or undefined outside a request (or when off). */
export function childSpan(
  name: string,
  attributes?: Api.Attributes,
  kind?: 'client',
  startTime?: number,
): Api.Span | undefined {
  if (!tracer) return undefined;
  const active = api.context.active();
  if (!api.trace.getSpan(active)) return undefined;
  return tracer.startSpan(
    name,
    {
      kind: kind ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL,
      ...(attributes && { attributes }),
      ...(startTime !== undefined && { startTime }),
    },
    active,
  );
}

/** Ends `span` as failed by `error`. */
export function failSpan(span: Api.Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: api.SpanStatusCode.ERROR });
  span.end();
}

/** Runs `task` in a child span of the current request's (or plainly when there is none). */
export function traced<T>(
  name: string,
  attributes: Api.Attributes | undefined,
  task: () => Promise<T>,
): Promise<T> {
  const span = childSpan(name, attributes);
  if (!span) return task();
  return task().then(
    (result) => {
      span.end();
      return result;
    },
    (error: unknown) => {
      failSpan(span, error);
      throw error;
    },
  );
}

/** `traced` for synchronous work (a signature made in the turn that needs it). */
export function tracedSync<T>(
  name: string,
  attributes: Api.Attributes | undefined,
  task: () => T,
): T {
  const span = childSpan(name, attributes);
  if (!span) return task();
  try {
    const result = task();
    span.end();
    return result;
  } catch (error) {
    failSpan(span, error);
    throw error;
  }
}

/** What Kysely's `log` option is told after each query (kysely's LogEvent, in part). */
interface QueryEvent {
  level: 'query' | 'error';
  query: { sql: string };
  queryDurationMillis: number;
  error?: unknown;
}

/**
 * Kysely's `log` option while tracing is on: a CLIENT span per query, started when it was
 * sent, with the statement's text (its values are parameters, never in the text).
 */
export function querySpans(system: 'sqlite' | 'postgresql'): (event: QueryEvent) => void {
  return (event) => {
    // The query began before Kysely tells of it: the span starts when it was sent.
    const startTime = performance.timeOrigin + performance.now() - event.queryDurationMillis;
    const text = event.query.sql;
    const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
    const span = childSpan(
      operation,
      { 'db.system.name': system, 'db.operation.name': operation, 'db.query.text': text },
      'client',
      startTime,
    );
    if (!span) return;
    if (event.level === 'error') failSpan(span, event.error);
    else span.end();
  };
}
