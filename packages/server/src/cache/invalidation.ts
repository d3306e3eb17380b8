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
 * SQLite: other processes (the CLI, another instance on the same file) write to the same
 * file. SQLite's data_version changes whenever another connection commits, so reading it
 * before trusting a cache makes the cache exact; this process's own writes publish on the
 * bus, synchronously.
 *
 * It is read once per turn of the event loop, at the first cache use of the turn, and
 * forgotten at the turn's end (setImmediate). A commit by another process is therefore
 * seen by every request handled in a later turn; a request handled in the turn of the
 * commit itself, after the read, may still be answered from the cache. That window is
 * the rest of one turn while the CPU works (well under a millisecond): the loop never
 * waits for I/O with a read pending its reset, because a pending setImmediate keeps the
 * poll from blocking. An invalidation through Redis takes as long to reach another
 * instance.
 * Reading it per request instead costs four fcntl() lock calls each, a quarter of a warm
 * introspection.
 */
export function sqliteBus(dataVersion: () => number): InvalidationBus {
  const bus = localBus({ cache: true });
  let seen = dataVersion();
  let checked = false;
  const uncheck = () => {
    checked = false;
  };
  return {
    get live() {
      if (checked) return true;
      checked = true;
      setImmediate(uncheck);
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
