import type { Redis } from 'ioredis';
import type { Decision, Window } from './rate-limit.service.js';

/**
 * A tenant's plan counters (requests per second and per minute), counted on every API
 * request, so kept off the network while that cannot change a decision.
 *
 * Each window starts at its first request and lasts `seconds` (as rate-limiter-flexible's
 * windows do). Without Redis the counts live here. With Redis they are shared: far from
 * the quota an instance counts in memory and adds its count to Redis in batches (every
 * `flushMs`, or once it holds `BATCH_SHARE` of the quota); near the quota every request
 * goes to Redis at once. So the instances together admit at most the quota plus what the
 * others counted but had not yet added, at most `BATCH_SHARE` of it each; a quota under
 * `1 / BATCH_SHARE` is always counted in Redis, exactly. If Redis fails, this process
 * goes on counting on its own and `onStoreError` hears of it once per outage.
 */
const BATCH_SHARE = 0.02;

interface Slot {
  /** The Redis key: prefix, window and what is counted. */
  id: string;
  window: Window;
  /** Epoch ms when the window ends. */
  end: number;
  /** The count in Redis when last heard (all instances), or 0 without Redis. */
  known: number;
  /** Counted here and not yet added to Redis. */
  pending: number;
  /** A Redis call for this slot is under way. */
  busy: boolean;
}

export interface PlanCounterOptions {
  redis?: Redis | undefined;
  keyPrefix: string;
  flushMs?: number;
  onStoreError?: (error: unknown) => void;
  /** False while Redis hangs (see cache/redis.ts): then every count stays in memory. */
  storeHealthy?: () => boolean;
}

/** The RateLimit-Policy header of a set of windows, and each window's part of a slot id. */
const policies = new WeakMap<readonly Window[], string>();
const windowIds = new WeakMap<Window, string>();

function policyHeader(windows: readonly Window[]): string {
  let header = policies.get(windows);
  if (header === undefined) {
    header = windows.map((w) => `"${w.name}";q=${w.quota};w=${w.seconds}`).join(', ');
    policies.set(windows, header);
  }
  return header;
}

function windowId(window: Window): string {
  let id = windowIds.get(window);
  if (id === undefined) {
    id = `${window.name}:${window.quota}:${window.seconds}`;
    windowIds.set(window, id);
  }
  return id;
}

export class PlanCounter {
  readonly #slots = new Map<string, Slot>();
  readonly #redis: Redis | undefined;
  readonly #prefix: string;
  readonly #onStoreError: (error: unknown) => void;
  readonly #storeHealthy: () => boolean;
  readonly #timer: NodeJS.Timeout;
  #storeFailing = false;

  constructor(options: PlanCounterOptions) {
    this.#redis = options.redis;
    this.#prefix = options.keyPrefix;
    this.#onStoreError = options.onStoreError ?? (() => {});
    this.#storeHealthy = options.storeHealthy ?? (() => true);
    // Flushes batches to Redis, and drops ended windows so that the map stays small.
    this.#timer = setInterval(() => void this.flush(), options.flushMs ?? 20);
    this.#timer.unref();
  }

  #slot(key: string, window: Window, now: number): Slot {
    const id = `${this.#prefix}:${windowId(window)}:${key}`;
    let slot = this.#slots.get(id);
    if (!slot || slot.end <= now) {
      slot = { id, window, end: now + window.seconds * 1000, known: 0, pending: 0, busy: false };
      this.#slots.set(id, slot);
    }
    return slot;
  }

  /** May this slot count here, without asking Redis? */
  #local(slot: Slot): boolean {
    if (!this.#redis) return true;
    if (this.#redis.status !== 'ready' || !this.#storeHealthy()) {
      this.#failing(new Error(`Redis is ${this.#storeHealthy() ? this.#redis.status : 'hung'}`));
      return true;
    }
    if (this.#storeFailing) return true;
    const quota = slot.window.quota;
    const batch = Math.floor(quota * BATCH_SHARE);
    return batch >= 1 && slot.pending <= batch && slot.known + slot.pending + batch <= quota;
  }

  #failing(error: unknown): void {
    if (this.#storeFailing) return;
    this.#storeFailing = true;
    this.#onStoreError(error);
  }

  /**
   * Counts one request against every window; refused when any window is exhausted. A
   * decision made from memory comes back at once, one that needs Redis as a promise.
   */
  consume(key: string, windows: readonly Window[]): Decision | Promise<Decision> {
    const now = Date.now();
    const slots = windows.map((w) => this.#slot(key, w, now));
    if (slots.every((slot) => this.#local(slot))) {
      const counts = slots.map((slot) => {
        slot.pending++;
        return slot.known + slot.pending;
      });
      return this.#decide(windows, slots, counts, now);
    }
    return this.#exact(windows, slots);
  }

  /** This request's place in each window, as Redis numbers it (exact, like one INCR). */
  async #exact(windows: readonly Window[], slots: Slot[]): Promise<Decision> {
    const counts = await Promise.all(slots.map((slot) => this.#send(slot, 1)));
    return this.#decide(windows, slots, counts, Date.now());
  }

  /**
   * Adds this slot's pending count (and `extra` for the request asking) to Redis; returns
   * the total, which numbers the asking request last. If Redis fails, counts stay here.
   */
  async #send(slot: Slot, extra = 0): Promise<number> {
    const { id, window } = slot;
    const redis = this.#redis;
    const count = slot.pending + extra;
    if (!redis || count === 0) return slot.known + slot.pending;
    slot.pending = 0;
    slot.busy = true;
    try {
      const results = await redis
        .multi()
        .incrby(id, count)
        .pexpire(id, window.seconds * 1000, 'NX')
        .pttl(id)
        .exec();
      const total = Number(results?.[0]?.[1]);
      const ttl = Number(results?.[2]?.[1]);
      if (!Number.isFinite(total)) throw results?.[0]?.[0] ?? new Error('no answer from Redis');
      // Answers come back in order on one connection: the last one is the newest total.
      slot.known = total;
      if (ttl > 0) slot.end = Date.now() + ttl;
      this.#storeFailing = false;
      return total;
    } catch (error) {
      // Kept here, and added to Redis once it is back within this window.
      slot.pending += count;
      this.#failing(error);
      return slot.known + slot.pending;
    } finally {
      slot.busy = false;
    }
  }

  #decide(windows: readonly Window[], slots: Slot[], counts: number[], now: number): Decision {
    let allowed = true;
    let retryAfter = 0;
    const consumed: number[] = [];
    let state = '';
    for (let i = 0; i < windows.length; i++) {
      const w = windows[i] as Window;
      const slot = slots[i] as Slot;
      const count = counts[i] as number;
      const reset = Math.max(Math.ceil((slot.end - now) / 1000), 0);
      consumed.push(count);
      if (count > w.quota) {
        allowed = false;
        retryAfter = Math.max(retryAfter, reset, 1);
      }
      state += `${i ? ', ' : ''}"${w.name}";r=${Math.max(w.quota - count, 0)};t=${reset}`;
    }
    return {
      allowed,
      retryAfter,
      consumed,
      policyHeader: policyHeader(windows),
      stateHeader: state,
    };
  }

  /** Sends every pending count to Redis; drops windows that have ended. */
  async flush(): Promise<void> {
    const now = Date.now();
    const sends: Promise<void>[] = [];
    for (const [id, slot] of this.#slots) {
      if (slot.end <= now) {
        this.#slots.delete(id);
        continue;
      }
      if (this.#redis?.status === 'ready' && this.#storeHealthy() && slot.pending > 0 && !slot.busy)
        sends.push(this.#send(slot).then(() => {}));
    }
    await Promise.all(sends);
  }

  /** Sends what is pending and stops the timer. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }
}
