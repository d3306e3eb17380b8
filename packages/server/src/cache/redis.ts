import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { defaults } from '../config/defaults.js';
import { childSpan, failSpan, tracer } from '../tracing/tracing.js';

/** ioredis is loaded only when REDIS_URL is set. */
const require = createRequire(import.meta.url);

export function connectRedis(url: string, onError: (error: Error) => void): Redis {
  const { Redis: RedisClient } = require('ioredis') as typeof import('ioredis');
  const redis = new RedisClient(url, {
    // Fail fast while disconnected, so rate limits fall back to memory at once.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: defaults.timeouts.redisConnectMs,
    // A Redis that accepts a command and never answers (stopped, a frozen network) fails
    // it here instead of holding the request.
    commandTimeout: defaults.timeouts.redisCommandMs,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  redis.on('error', onError);
  if (tracer) traceCommands(redis);
  return redis;
}

/** A CLIENT span per command sent within a request: its name only, never its arguments. */
function traceCommands(redis: Redis): void {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command, stream) => {
    const name = command.name.toUpperCase();
    const span = childSpan(
      name,
      { 'db.system.name': 'redis', 'db.operation.name': name },
      'client',
    );
    if (span)
      command.promise.then(
        () => span.end(),
        (error: unknown) => failSpan(span, error),
      );
    return send(command, stream);
  }) as Redis['sendCommand'];
}

/** Waits until Redis is ready, or `timeoutMs`, or an error: start anyway, in memory. */
export function redisReady(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('error', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.once('ready', done);
    redis.once('error', done);
  });
}

/**
 * Whether Redis answers. A connection that is up but hung (SIGSTOP, a frozen network)
 * keeps ioredis "ready"; a ping every `redisProbeMs` that must answer within
 * `redisCommandMs` tells it apart, so that a hung Redis is treated as a down one:
 * rate limits count in memory at once and caches stop trusting the invalidation bus.
 */
export class RedisHealth {
  readonly #redis: Redis;
  readonly #listeners: ((healthy: boolean) => void)[] = [];
  readonly #timer: NodeJS.Timeout;
  #answering = true;
  #probing = false;

  constructor(redis: Redis, probeMs: number = defaults.timeouts.redisProbeMs) {
    this.#redis = redis;
    this.#timer = setInterval(() => void this.#probe(), probeMs);
    this.#timer.unref();
  }

  get healthy(): boolean {
    return this.#answering && this.#redis.status === 'ready';
  }

  /** Told on each change between answering and not. */
  onChange(listener: (healthy: boolean) => void): void {
    this.#listeners.push(listener);
  }

  async #probe(): Promise<void> {
    if (this.#probing || this.#redis.status !== 'ready') return;
    this.#probing = true;
    const answering = await this.#redis.ping().then(
      () => true,
      () => false,
    );
    this.#probing = false;
    if (answering === this.#answering) return;
    this.#answering = answering;
    for (const listener of this.#listeners) listener(answering);
  }

  close(): void {
    clearInterval(this.#timer);
  }
}
