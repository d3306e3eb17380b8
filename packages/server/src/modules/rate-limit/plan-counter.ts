import type { Redis } from 'ioredis';
import type { Decision, Window } from './rate-limit.service.js';

/**
 * A tenant's plan counters (requests per second and per minute), counted on every API
 * request, so kept off the network while that cannot change a decision.
 *
 * Each window starts at its first request and lasts `seconds` (as rate-limiter-flexible's
 * windows do). Without Redis the counts live here. With Redis they are shared: far from
 * the quota an instance counts in memory and adds its count to Redis in batches; near the
 * quota every request goes to Redis at once. So the instances together admit at most the
 * quota plus what the others counted but had not yet added, at most `BATCH_SHARE` of it
 * each (an instance that holds more asks Redis first), however seldom the batches go; a
 * quota under `1 / BATCH_SHARE` is always counted in Redis, exactly. If Redis fails, this
 * process goes on counting on its own and `onStoreError` hears of it once per outage.
 *
 * The batches go every `flushMs`, all of them in one Redis call, but only the windows due:
 * a window's first count (so that its end is Redis's), one holding half its batch, one
 * within two batches of its quota, one not heard from Redis for `STALE_MS`, and all of them
 * after an outage and at close. A window far from its quota is so added about once a
 * second, not fifty times: with a thousand busy tenants that is thousands of keys a second
 * fewer (issue 31), and the bound above does not depend on it. What it bounds is how late
 * Redis, and so the other instances' RateLimit headers, hears of this instance's count.
 *
 * Only admitted requests are counted: a request refused by one window is not counted in
 * any, so a client that retries its 429s (as it is told to) does not spend the minute on
 * refusals, and the RateLimit header of every answer says exactly what is left.
 */
const BATCH_SHARE = 0.02;
/** A window far from its quota is added to Redis at least this often (see above). */
const STALE_MS = 1000;
/**
 * Every window held here is looked at this often (for `STALE_MS`); at the other flushes
 * only those that became pressing as they counted, so that a flush of a thousand tenants'
 * windows does not walk them all fifty times a second.
 */
const SCAN_MS = 250;
/** Windows added to Redis in one call at most (a call holds Redis for its length). */
const FLUSH_KEYS = 1000;

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
  /** In `#unsent`: asked per request without a look-up in that set. */
  unsent: boolean;
  /** Epoch ms of Redis's last answer about this window, 0 before the first. */
  heardAt: number;
}

/**
 * Near the quota, one request against every window at once, atomically: each window's
 * pending count (requests admitted here) is added, then the request is counted in every
 * window only if it fits in all of them. Returns [fits, total..., ttl...], the totals
 * including the request when it fits.
 */
const CONSUME = `
local n = #KEYS
local totals = {}
local fits = 1
for i = 1, n do
  local pending = tonumber(ARGV[i * 3 - 2])
  local total
  if pending > 0 then
    total = redis.call('INCRBY', KEYS[i], pending)
  else
    total = tonumber(redis.call('GET', KEYS[i]) or '0')
  end
  totals[i] = total
  if total + 1 > tonumber(ARGV[i * 3 - 1]) then fits = 0 end
end
local out = { fits }
for i = 1, n do
  if fits == 1 then totals[i] = redis.call('INCR', KEYS[i]) end
  redis.call('PEXPIRE', KEYS[i], ARGV[i * 3], 'NX')
  out[i + 1] = totals[i]
  out[n + i + 1] = redis.call('PTTL', KEYS[i])
end
return out
`;

/**
 * Every due window's pending count added at once: INCRBY, the expiry of a new key, and the
 * time left. Returns [total..., ttl...].
 */
const FLUSH = `
local n = #KEYS
local out = {}
for i = 1, n do
  out[i] = redis.call('INCRBY', KEYS[i], ARGV[i * 2 - 1])
  redis.call('PEXPIRE', KEYS[i], ARGV[i * 2], 'NX')
  out[n + i] = redis.call('PTTL', KEYS[i])
end
return out
`;

type ConsumingRedis = Redis & {
  latchkeyPlanConsume(keys: number, ...args: (string | number)[]): Promise<number[]>;
  latchkeyPlanFlush(keys: number, ...args: (string | number)[]): Promise<number[]>;
};

export interface PlanCounterOptions {
  redis?: Redis | undefined;
  keyPrefix: string;
  flushMs?: number;
  onStoreError?: (error: unknown) => void;
  /** False while Redis hangs (see cache/redis.ts): then every count stays in memory. */
  storeHealthy?: () => boolean;
}

/**
 * A counter a caller keeps between requests, with the slots its last request found
 * (`consumeHeld`): a thousand tenants' requests each looked their slots up by key, and each
 * look-up is a miss on that tenant's memory (issue 31). `slots` is the counter's own.
 */
export interface PlanHandle {
  readonly planKey: string;
  readonly windows: readonly Window[];
  slots: unknown;
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

/** Ended windows are dropped this often (a browser address counted once stays a while). */
const SWEEP_MS = 1000;

export class PlanCounter {
  readonly #slots = new Map<string, Slot>();
  /**
   * Each key's slots as its last request found them, so that a busy key's next request
   * finds them without building a slot id per window (two strings and two hashes a request).
   * Valid while every slot is (a slot is only replaced or dropped once it has ended).
   */
  readonly #byKey = new Map<string, { windows: readonly Window[]; slots: Slot[] }>();
  /** Slots holding counts not yet added to Redis: what a flush looks at. */
  readonly #unsent = new Set<Slot>();
  /** Of those, the ones that became pressing (see #pressing) as they counted. */
  readonly #urgent = new Set<Slot>();
  #sweptAt = Date.now();
  #scannedAt = 0;
  readonly #redis: Redis | undefined;
  readonly #prefix: string;
  readonly #onStoreError: (error: unknown) => void;
  readonly #storeHealthy: () => boolean;
  readonly #timer: NodeJS.Timeout;
  #storeFailing = false;

  constructor(options: PlanCounterOptions) {
    this.#redis = options.redis;
    this.#redis?.defineCommand('latchkeyPlanConsume', { lua: CONSUME });
    this.#redis?.defineCommand('latchkeyPlanFlush', { lua: FLUSH });
    this.#prefix = options.keyPrefix;
    this.#onStoreError = options.onStoreError ?? (() => {});
    this.#storeHealthy = options.storeHealthy ?? (() => true);
    // Flushes batches to Redis; now and then drops ended windows, so that the map stays small.
    this.#timer = setInterval(() => void this.flush(), options.flushMs ?? 20);
    this.#timer.unref();
  }

  #slot(key: string, window: Window, now: number): Slot {
    const id = `${this.#prefix}:${windowId(window)}:${key}`;
    let slot = this.#slots.get(id);
    if (!slot || slot.end <= now) {
      slot = {
        id,
        window,
        end: now + window.seconds * 1000,
        known: 0,
        pending: 0,
        busy: false,
        unsent: false,
        heardAt: 0,
      };
      this.#slots.set(id, slot);
    }
    return slot;
  }

  #slotsOf(key: string, windows: readonly Window[], now: number): Slot[] {
    const held = this.#byKey.get(key);
    if (held?.windows === windows && held.slots.every((slot) => this.#current(slot, now)))
      return held.slots;
    const slots = windows.map((w) => this.#slot(key, w, now));
    this.#byKey.set(key, { windows, slots });
    return slots;
  }

  /**
   * Is this slot's window still on, or started again in place? A tenant's one-second window
   * ends every second it is busy: with a thousand busy tenants, a thousand times a second
   * (issue 31), so an ended window starts over in its own record, without building its id,
   * looking it up or allocating. Not while a Redis call for it is under way: the answer
   * would land in the new window (then `#slot` makes a new record).
   */
  #current(slot: Slot, now: number): boolean {
    if (slot.end > now) return true;
    // Also not once a sweep has dropped it (a handle may still hold it): `#slot` then
    // finds or makes the one slot of that window, which every holder then counts in.
    if (slot.busy || this.#slots.get(slot.id) !== slot) return false;
    // An ended window's counts are never sent (see #flush): they go with it.
    this.#settled(slot);
    this.#urgent.delete(slot);
    slot.end = now + slot.window.seconds * 1000;
    slot.known = 0;
    slot.pending = 0;
    slot.heardAt = 0;
    return true;
  }

  /** The slot holds counts not yet added to Redis (a request counted it here). */
  #unsettled(slot: Slot): void {
    if (slot.unsent) return;
    slot.unsent = true;
    this.#unsent.add(slot);
  }

  /** The slot holds nothing more for Redis (sent, or its window ended). */
  #settled(slot: Slot): void {
    slot.unsent = false;
    this.#unsent.delete(slot);
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
   * Counts one request against every window, unless a window is exhausted: then it is
   * refused and counted in none. A decision made from memory comes back at once, one that
   * needs Redis as a promise.
   */
  consume(key: string, windows: readonly Window[]): Decision | Promise<Decision> {
    const now = Date.now();
    return this.#count(windows, this.#slotsOf(key, windows, now), now);
  }

  /** `consume` for a counter the caller keeps (see PlanHandle): the same counts. */
  consumeHeld(handle: PlanHandle): Decision | Promise<Decision> {
    const now = Date.now();
    const held = handle.slots as Slot[] | undefined;
    if (held?.every((slot) => this.#current(slot, now)))
      return this.#count(handle.windows, held, now);
    const slots = this.#slotsOf(handle.planKey, handle.windows, now);
    handle.slots = slots;
    return this.#count(handle.windows, slots, now);
  }

  #count(windows: readonly Window[], slots: Slot[], now: number): Decision | Promise<Decision> {
    if (slots.every((slot) => this.#local(slot))) return this.#admitHere(windows, slots, now);
    return this.#exact(windows, slots);
  }

  /** The decision from this process's counts; an admitted request is counted here. */
  #admitHere(windows: readonly Window[], slots: Slot[], now: number): Decision {
    const counts = slots.map((slot) => slot.known + slot.pending);
    const fits = slots.every((slot, i) => (counts[i] as number) + 1 <= slot.window.quota);
    if (fits) {
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[i] as Slot;
        slot.pending++;
        (counts[i] as number)++;
        if (this.#redis) {
          this.#unsettled(slot);
          if (this.#pressing(slot)) this.#urgent.add(slot);
        }
      }
    }
    return this.#decide(windows, slots, counts, fits, now);
  }

  /** This request's decision as Redis makes it, for every instance at once (exact). */
  async #exact(windows: readonly Window[], slots: Slot[]): Promise<Decision> {
    const redis = this.#redis as ConsumingRedis;
    const sent = slots.map((slot) => slot.pending);
    const args: (string | number)[] = slots.map((slot) => slot.id);
    for (const slot of slots) {
      args.push(slot.pending, slot.window.quota, slot.window.seconds * 1000);
      slot.pending = 0;
      slot.busy = true;
    }
    try {
      const out = await redis.latchkeyPlanConsume(slots.length, ...args);
      const n = slots.length;
      const fits = Number(out[0]) === 1;
      const now = Date.now();
      const counts = slots.map((slot, i) => {
        // Answers come back in order on one connection: the last one is the newest total.
        slot.known = Number(out[i + 1]);
        slot.heardAt = now;
        const ttl = Number(out[n + i + 1]);
        if (ttl > 0) slot.end = now + ttl;
        return slot.known;
      });
      this.#storeFailing = false;
      return this.#decide(windows, slots, counts, fits, Date.now());
    } catch (error) {
      // Kept here, added to Redis once it is back within this window; decided here meanwhile.
      slots.forEach((slot, i) => {
        slot.pending += sent[i] as number;
        if (slot.pending > 0) this.#unsettled(slot);
      });
      this.#failing(error);
      return this.#admitHere(windows, slots, Date.now());
    } finally {
      for (const slot of slots) slot.busy = false;
    }
  }

  /** Adds these slots' pending counts to Redis (requests already admitted here), at once. */
  async #send(slots: Slot[]): Promise<void> {
    const redis = this.#redis as ConsumingRedis;
    const n = slots.length;
    const counts = slots.map((slot) => slot.pending);
    const args: (string | number)[] = slots.map((slot) => slot.id);
    for (const slot of slots) {
      args.push(slot.pending, slot.window.seconds * 1000);
      slot.pending = 0;
      slot.busy = true;
    }
    try {
      const out = await redis.latchkeyPlanFlush(n, ...args);
      const now = Date.now();
      for (let i = 0; i < n; i++) {
        const slot = slots[i] as Slot;
        const total = Number(out[i]);
        if (!Number.isFinite(total)) throw new Error('no answer from Redis');
        slot.known = total;
        slot.heardAt = now;
        const ttl = Number(out[n + i]);
        if (ttl > 0) slot.end = now + ttl;
      }
      this.#storeFailing = false;
    } catch (error) {
      slots.forEach((slot, i) => {
        slot.pending += counts[i] as number;
        if (slot.pending > 0) this.#unsettled(slot);
      });
      this.#failing(error);
    } finally {
      for (const slot of slots) slot.busy = false;
    }
  }

  /**
   * Is this window's count to go to Redis at the next flush, however recently it went?
   * (See the class comment; the others go once `STALE_MS` old.)
   */
  #pressing(slot: Slot): boolean {
    const quota = slot.window.quota;
    const batch = Math.floor(quota * BATCH_SHARE);
    return (
      slot.heardAt === 0 ||
      batch < 1 ||
      slot.pending * 2 >= batch ||
      slot.known + slot.pending + 2 * batch > quota
    );
  }

  /**
   * The decision and its headers; `counts` is each window's count after this request
   * (which a refused request did not add to).
   */
  #decide(
    windows: readonly Window[],
    slots: Slot[],
    counts: number[],
    fits: boolean,
    now: number,
  ): Decision {
    let retryAfter = 0;
    let state = '';
    for (let i = 0; i < windows.length; i++) {
      const w = windows[i] as Window;
      const slot = slots[i] as Slot;
      const count = counts[i] as number;
      const reset = Math.max(Math.ceil((slot.end - now) / 1000), 0);
      if (!fits && count + 1 > w.quota) retryAfter = Math.max(retryAfter, reset, 1);
      state += `${i ? ', ' : ''}"${w.name}";r=${Math.max(w.quota - count, 0)};t=${reset}`;
    }
    return {
      allowed: fits,
      retryAfter,
      consumed: counts,
      policyHeader: policyHeader(windows),
      stateHeader: state,
    };
  }

  /** Sends the pending counts that are due to Redis; drops windows that have ended. */
  flush(): Promise<void> {
    return this.#flush(false);
  }

  async #flush(all: boolean): Promise<void> {
    const now = Date.now();
    if (now - this.#sweptAt >= SWEEP_MS) {
      this.#sweptAt = now;
      for (const [id, slot] of this.#slots) if (slot.end <= now) this.#slots.delete(id);
      for (const [key, held] of this.#byKey)
        if (held.slots.some((slot) => slot.end <= now)) this.#byKey.delete(key);
      // An ended window's counts are never sent (also while Redis is down): they go too.
      for (const slot of this.#unsent) if (slot.end <= now) this.#settled(slot);
      for (const slot of this.#urgent) if (slot.end <= now) this.#urgent.delete(slot);
    }
    if (this.#unsent.size === 0 || this.#redis?.status !== 'ready' || !this.#storeHealthy()) return;
    // After an outage every count held here goes: the first answer ends the outage.
    const every = all || this.#storeFailing;
    const scan = every || now - this.#scannedAt >= SCAN_MS;
    if (scan) this.#scannedAt = now;
    const due: Slot[] = [];
    for (const slot of scan ? this.#unsent : this.#urgent) {
      if (slot.busy) continue;
      this.#urgent.delete(slot);
      if (!slot.unsent) continue;
      if (slot.end <= now || slot.pending === 0) this.#settled(slot);
      else if (every || this.#pressing(slot) || now - slot.heardAt >= STALE_MS) {
        this.#settled(slot);
        due.push(slot);
      }
    }
    const sends: Promise<void>[] = [];
    for (let i = 0; i < due.length; i += FLUSH_KEYS)
      sends.push(this.#send(due.slice(i, i + FLUSH_KEYS)));
    await Promise.all(sends);
  }

  /** Windows held in memory (counting, or holding counts not yet sent): for tests. */
  get held(): number {
    return new Set([...this.#slots.values(), ...this.#unsent, ...this.#urgent]).size;
  }

  /** Sends what is pending and stops the timer. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#flush(true);
  }
}
