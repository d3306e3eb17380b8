import type { Redis } from 'ioredis';

const CHANNEL = 'latchkey:invalidate';

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

export function redisBus(redis: Redis, onError: (error: Error) => void): InvalidationBus {
  const subscriber = redis.duplicate({ enableOfflineQueue: true });
  const listeners: ((topic: string) => void)[] = [];
  let subscribed = false;
  subscriber.on('error', onError);
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
      return subscribed && redis.status === 'ready';
    },
    async publish(topic) {
      for (const l of listeners) l(topic);
      try {
        await redis.publish(CHANNEL, topic);
      } catch (error) {
        onError(error as Error);
      }
    },
    onInvalidate(listener) {
      listeners.push(listener);
    },
    async close() {
      subscriber.disconnect();
    },
  };
}
