import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  duration: Histogram<'method' | 'route'>;
  signUps: Counter<'outcome'>;
  rateLimited: Counter<'scope'>;
  sessionCache: Counter<'result'>;
}

/** One registry per app instance, so that several apps in one process never share counters. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'latchkey_' });
  return {
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
