import { availableParallelism } from 'node:os';
import { hash, verify } from '@node-rs/argon2';
import { traced } from '../../tracing/tracing.js';

export interface Argon2Params {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
}

/**
 * Runs at most `limit` tasks at once, the rest in arrival order. Each argon2 hash fills
 * 19 MiB of memory: more hashes than cores only evict each other from the CPU caches
 * (on one core, two at a time do fewer per second than one at a time).
 */
function gate(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/**
 * argon2id (the library's default algorithm) computed on libuv's thread pool, so the
 * event loop stays free, one hash per core this process may use at a time. NIST SP
 * 800-63B section 5.1.1.2: passwords are NFKC-normalised before hashing, so the same
 * password typed on two keyboards verifies; nothing is cut.
 */
export function createPasswordHasher(
  params: Argon2Params,
  concurrency = availableParallelism(),
): PasswordHasher {
  const run = gate(Math.max(1, concurrency));
  return {
    hash: (password) =>
      run(() => traced('argon2id hash', undefined, () => hash(password.normalize('NFKC'), params))),
    async verify(digest, password) {
      try {
        return await run(() =>
          traced('argon2id verify', undefined, () => verify(digest, password.normalize('NFKC'))),
        );
      } catch {
        return false;
      }
    },
  };
}

/** Counts Unicode code points, not UTF-16 units: "🔑" is one character. */
export function codePointLength(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}
