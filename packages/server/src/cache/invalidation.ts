import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { defaults } from '../config/defaults.js';
import type { RedisHealth } from './redis.js';

const CHANNEL = 'latchkey:invalidate';

/**
 * For processes that write but do not serve (the CLI): tells every instance listening on
 * Redis that cached state changed. Without Redis there is nothing to tell: SQLite
 * instances see the change through data_version, and PostgreSQL ones do not cache.
 */
export async function announce(redisUrl: string, topic: string): Promise<void> {
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: defaults.timeouts.redisConnectMs,
    commandTimeout: defaults.timeouts.redisCommandMs,
  });
  try {
    await redis.connect();
    await redis.publish(CHANNEL, topic);
  } finally {
    redis.disconnect();
  }
}

/**
 * Tells every instance (and itself) that cached state changed: `session:<id>`,
 * `user:<id>`, `key:<hash>`. Caches are kept only while this bus is connected, so an
 * instance that cannot hear invalidations reads the database instead of a stale cache.
 */
export interface InvalidationBus {
  /** True when cached answers may be used. */
  readonly live: boolean;
  publish(topic: string): Promise<void>;
  onInvalidate(listener: (topic: string) => void): void;
  close(): Promise<void>;
}

/** No Redis: a single process, or several without shared caches. */
export function localBus(options: { cache: boolean }): InvalidationBus {
  const listeners: ((topic: string) => void)[] = [];
  return {
    live: options.cache,
    async publish(topic) {
      for (const l of listeners) l(topic);
    },
    onInvalidate(listener) {
      listeners.push(listener);
    },
    async close() {},
  };
}

/**
 * SQLite: other processes (the CLI) write to the same file. SQLite's data_version changes
 * whenever another connection commits, so reading it (about a microsecond) before trusting
 * a cache makes the cache exact; this process's own writes publish on the bus.
 */
export function sqliteBus(dataVersion: () => number): InvalidationBus {
  const bus = localBus({ cache: true });
  let seen = dataVersion();
  // Read once per synchronous run of code: a request handled in that run was read from its
  // socket before the run began, so a commit that came before the request is seen. The
  // flag clears in the next microtask, so code after an await reads data_version again.
  let checked = false;
  const uncheck = () => {
    checked = false;
  };
  return {
    get live() {
      if (checked) return true;
      checked = true;
      queueMicrotask(uncheck);
      const now = dataVersion();
      if (now !== seen) {
        seen = now;
        void bus.publish('*');
      }
      return true;
    },
    publish: bus.publish,
    onInvalidate: bus.onInvalidate,
    close: bus.close,
  };
}

/**
 * `health` says whether Redis answers at all: a hung Redis delivers no invalidation, so
 * while it does not answer no cache is trusted, and what was cached is dropped.
 */
export function redisBus(
  redis: Redis,
  health: RedisHealth,
  onError: (error: Error) => void,
): InvalidationBus {
  const subscriber = redis.duplicate({ enableOfflineQueue: true });
  const listeners: ((topic: string) => void)[] = [];
  let subscribed = false;
  subscriber.on('error', onError);
  health.onChange((healthy) => {
    if (!healthy) for (const l of listeners) l('*');
  });
  subscriber.on('close', () => {
    subscribed = false;
    // Whatever was cached may have missed an invalidation while we were away.
    for (const l of listeners) l('*');
  });
  subscriber.on('ready', () => {
    subscriber.subscribe(CHANNEL).then(
      () => {
        subscribed = true;
      },
      (error: Error) => onError(error),
    );
  });
  subscriber.on('message', (_channel: string, topic: string) => {
    for (const l of listeners) l(topic);
  });
  return {
    get live() {
      return subscribed && health.healthy;
    },
    async publish(topic) {
      for (const l of listeners) l(topic);
      const sent = redis.publish(CHANNEL, topic).catch((error: Error) => onError(error));
      // A Redis that does not answer must not hold the request: it is still told, unawaited.
      if (health.healthy) await sent;
    },
    onInvalidate(listener) {
      listeners.push(listener);
    },
    async close() {
      subscriber.disconnect();
    },
  };
}
