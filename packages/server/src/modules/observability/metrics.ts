import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export interface Metrics {
  /**
   * False when nothing can read them (METRICS_TOKEN unset: /metrics answers 404). Then
   * requests are not counted at all and the process metrics are not collected: counting
   * costs a few per cent of a warm introspection, for figures nobody reads.
   */
  enabled: boolean;
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  duration: Histogram<'method' | 'route'>;
  signUps: Counter<'outcome'>;
  rateLimited: Counter<'scope'>;
  sessionCache: Counter<'result'>;
}

/** One registry per app instance, so that several apps in one process never share counters. */
export function createMetrics(options: { enabled: boolean }): Metrics {
  const registry = new Registry();
  if (options.enabled) collectDefaultMetrics({ register: registry, prefix: 'latchkey_' });
  return {
    enabled: options.enabled,
    registry,
    requests: new Counter({
      name: 'latchkey_http_requests_total',
      help: 'HTTP requests by route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'latchkey_http_request_duration_seconds',
      help: 'HTTP request duration by route',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    signUps: new Counter({
      name: 'latchkey_sign_ups_total',
      help: 'Sign-up attempts by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    sessionCache: new Counter({
      name: 'latchkey_session_cache_total',
      help: 'Session-state look-ups for introspection: hit (cached) or miss (database)',
      labelNames: ['result'],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'latchkey_rate_limited_total',
      help: 'Requests refused by a rate limit',
      labelNames: ['scope'],
      registers: [registry],
    }),
  };
}

/** Counts the answers of one route and status, with the label children resolved once. */
export function answerObserver(
  metrics: Metrics,
  method: string,
  route: string,
  status: number,
): (elapsedMs: number) => void {
  if (!metrics.enabled) return () => {};
  const counter = metrics.requests.labels({ method, route, status });
  const timer = metrics.duration.labels({ method, route });
  return (elapsedMs) => {
    counter.inc();
    timer.observe(elapsedMs / 1000);
  };
}

/**
 * Counts a request and its duration. prom-client hashes the labels on every call; the
 * label children are kept per method, route and status instead (a bounded set: routes
 * are patterns, never raw URLs).
 */
export function requestObserver(
  metrics: Metrics,
): (method: string, route: string | undefined, status: number, elapsedMs: number) => void {
  if (!metrics.enabled) return () => {};
  const counters = new Map<string, { inc(): void }>();
  const timers = new Map<string, { observe(value: number): void }>();
  return (method, route = 'unmatched', status, elapsedMs) => {
    const timerKey = `${method} ${route}`;
    const counterKey = `${timerKey} ${status}`;
    let counter = counters.get(counterKey);
    if (!counter) {
      counter = metrics.requests.labels({ method, route, status });
      counters.set(counterKey, counter);
    }
    let timer = timers.get(timerKey);
    if (!timer) {
      timer = metrics.duration.labels({ method, route });
      timers.set(timerKey, timer);
    }
    counter.inc();
    timer.observe(elapsedMs / 1000);
  };
}
