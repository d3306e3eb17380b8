import { randomUUID } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import type { IncomingMessage } from 'node:http';
import type { Kysely } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { defaults } from '../../config/defaults.js';
import type { SecretBox } from '../../crypto/secret-box.js';
import type { DialectName, Schema } from '../../storage/index.js';
import { recordAudit } from '../audit/index.js';
import { RefusedAddress, type Resolve, resolveTarget, systemResolve } from './address-guard.js';
import { signingSecrets } from './endpoints.service.js';

// node:http and node:https without an ES module namespace (see app.ts).
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');

/** defaults.webhooks, widened: tests shorten the waits. */
export interface DispatcherSettings {
  attemptTimeoutMs: number;
  retryDelaysMs: readonly number[];
  jitter: number;
  pollMs: number;
  maxInFlight: number;
  maxInFlightPerEndpoint: number;
  endpointsPerPoll: number;
  responseBodyBytes: number;
}

export interface DispatcherOptions {
  db: Kysely<Schema>;
  dialect: DialectName;
  box: SecretBox;
  settings?: Partial<DispatcherSettings>;
  /** How hosts are resolved (tests give their own DNS). */
  resolve?: Resolve;
  log: {
    warn(fields: Record<string, unknown>, message: string): void;
    info(fields: Record<string, unknown>, message: string): void;
  };
}

/** How often an instance looks while the database does not answer. */
const FAILING_POLL_MS = 5_000;

interface Claimed {
  id: string;
  message_id: string;
  endpoint_id: string;
  attempts: number;
  created_at: number;
}

interface Target {
  delivery_id: string;
  body: string;
  id: string;
  tenant_id: string;
  url: string;
  secret_jwe: string;
  previous_secret_jwe: string | null;
  previous_secret_expires_at: number | null;
  disabled_at: number | null;
  environment: string;
}

interface Attempted {
  delivery: Claimed;
  release: false;
  endpointId: string;
  tenantId: string;
  startedAt: number;
  endedAt: number;
  outcome: Outcome;
}

/** An attempt's result, or a lease to give back (nothing sent, or the instance stopping). */
type Recorded = Attempted | { delivery: Claimed; release: true };

/** Outcomes that arrive within this long of each other are recorded in one transaction. */
const RECORD_DELAY_MS = 20;
/** Endpoints whose opened secrets are kept; past it the cache starts again. */
const SIGNERS_KEPT = 10_000;

interface Outcome {
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
}

/**
 * Delivers the outbox (docs/design.md §17). Every instance runs one: it claims due
 * deliveries (on PostgreSQL with FOR UPDATE SKIP LOCKED, on SQLite in one UPDATE), each for
 * a lease longer than an attempt may last, so no delivery has two attempts in flight. An
 * endpoint gets a few attempts in flight at most and each look serves many endpoints, so a
 * hanging receiver holds up only its own deliveries; sign-ins never wait on any of it.
 */
export class WebhookDispatcher {
  readonly #db: Kysely<Schema>;
  readonly #dialect: DialectName;
  readonly #box: SecretBox;
  readonly #settings: DispatcherSettings;
  readonly #resolve: Resolve;
  readonly #log: DispatcherOptions['log'];
  /** Attempts in flight here, by endpoint. */
  readonly #inFlight = new Map<string, number>();
  #total = 0;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #stopped = false;
  /** The last look left due deliveries behind for want of room. */
  #starved = false;
  /** The last look failed (the database is unreachable). */
  #failing = false;
  #looking: Promise<void> = Promise.resolve();
  readonly #attempts = new Set<Promise<void>>();
  /** Ends the attempts in flight when the instance stops. */
  readonly #stopping = new AbortController();
  /** Outcomes waiting to be recorded together. */
  readonly #outcomes: Recorded[] = [];
  #flushTimer: NodeJS.Timeout | undefined;
  #flushing = false;
  #flushed: (() => void) | undefined;
  /**
   * Kept-alive connections, apart for production tenants (whose new connections are checked
   * as they are made) and the others (which may reach loopback): a connection one kind
   * opened is never lent to the other.
   */
  readonly #agents = new Map<string, import('node:http').Agent>();
  /** Each endpoint's opened secrets, by their sealed values. */
  readonly #signers = new Map<string, { key: string; until: number; signers: Webhook[] }>();

  constructor(options: DispatcherOptions) {
    this.#db = options.db;
    this.#dialect = options.dialect;
    this.#box = options.box;
    this.#settings = { ...defaults.webhooks, ...options.settings };
    this.#resolve = options.resolve ?? systemResolve;
    this.#log = options.log;
  }

  start(): void {
    this.#stopped = false;
    this.#schedule(0);
  }

  /**
   * Stops looking, and ends the attempts in flight unrecorded, their leases given back: the
   * next instance to look sends them again, with the same `webhook-id`.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#stopping.abort();
    await this.#looking;
    await Promise.allSettled([...this.#attempts]);
    // What finished is recorded, the rest given back, before the database closes.
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#flushing) await new Promise<void>((resolve) => (this.#flushed = resolve));
    await this.#flush();
    for (const agent of this.#agents.values()) agent.destroy();
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#looking = this.#look();
    }, ms);
    this.#timer.unref();
  }

  async #look(): Promise<void> {
    if (this.#running || this.#stopped) return;
    this.#running = true;
    let next = this.#settings.pollMs;
    try {
      // A full look leaves more to do: look again at once.
      if (await this.#claimAndSend()) next = 0;
      if (this.#failing) this.#log.info({}, 'webhooks: the database answers again');
      this.#failing = false;
    } catch (error) {
      // Told once per outage, and looked at less often meanwhile.
      if (!this.#failing)
        this.#log.warn({ err: error }, 'webhooks: looking for due deliveries failed; retrying');
      this.#failing = true;
      next = FAILING_POLL_MS;
    } finally {
      this.#running = false;
    }
    this.#schedule(next);
  }

  /**
   * Claims what is due, endpoint by endpoint, reads what the attempts need in one query, and
   * starts them; true if it took all it could (more may be due).
   */
  async #claimAndSend(): Promise<boolean> {
    const settings = this.#settings;
    let room = settings.maxInFlight - this.#total;
    if (room <= 0) return false;
    const now = Date.now();
    const due = await this.#db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select('d.endpoint_id')
      .where('d.status', '=', 'pending')
      .where('d.next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('d.locked_until', 'is', null), eb('d.locked_until', '<=', now)]))
      .where('e.disabled_at', 'is', null)
      .groupBy('d.endpoint_id')
      .orderBy((eb) => eb.fn.min('d.next_attempt_at'))
      .limit(settings.endpointsPerPoll)
      .execute();
    let full = due.length === settings.endpointsPerPoll;
    const claimed: Claimed[] = [];
    this.#starved = false;
    for (const { endpoint_id } of due) {
      const take = Math.min(
        room,
        settings.maxInFlightPerEndpoint - (this.#inFlight.get(endpoint_id) ?? 0),
      );
      if (take <= 0) {
        // Due but at its limit here: look again as soon as one of its attempts is recorded.
        this.#starved = true;
        continue;
      }
      const mine = await this.#claim(endpoint_id, take, now);
      if (mine.length === take) full = true;
      room -= mine.length;
      claimed.push(...mine);
      if (room <= 0) {
        this.#starved = true;
        full = false;
        break;
      }
    }
    if (claimed.length === 0) return full;
    for (const delivery of claimed) this.#hold(delivery);
    const targets = await this.#targets(claimed);
    for (const delivery of claimed) this.#begin(delivery, targets.get(delivery.id));
    return full;
  }

  /** What the attempts of `claimed` need: body, address, secrets, the tenant's environment. */
  async #targets(claimed: Claimed[]): Promise<Map<string, Target>> {
    const rows = await this.#db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_messages as m', 'm.id', 'd.message_id')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .innerJoin('tenants as t', 't.id', 'd.tenant_id')
      .select([
        'd.id as delivery_id',
        'm.body',
        'e.id',
        'e.tenant_id',
        'e.url',
        'e.secret_jwe',
        'e.previous_secret_jwe',
        'e.previous_secret_expires_at',
        'e.disabled_at',
        't.environment',
      ])
      .where(
        'd.id',
        'in',
        claimed.map((c) => c.id),
      )
      .execute();
    return new Map(rows.map((r) => [r.delivery_id, r]));
  }

  /** Up to `take` due deliveries of one endpoint, locked for this instance for a lease. */
  async #claim(endpointId: string, take: number, now: number): Promise<Claimed[]> {
    const lease = now + this.#settings.attemptTimeoutMs * 2;
    const pick = this.#db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('endpoint_id', '=', endpointId)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .orderBy('next_attempt_at')
      .limit(take);
    const returned = [
      'webhook_deliveries.id',
      'webhook_deliveries.message_id',
      'webhook_deliveries.endpoint_id',
      'webhook_deliveries.attempts',
      'webhook_deliveries.created_at',
    ] as const;
    if (this.#dialect === 'postgres') {
      // The rows are picked once, in a materialized CTE: PostgreSQL may run an `IN
      // (… LIMIT n FOR UPDATE SKIP LOCKED)` subquery again for each row it scans, and
      // each run skips the rows the last one locked, so it would claim more than n.
      return this.#db
        .with(
          (cte) => cte('picked').materialized(),
          () => pick.forUpdate().skipLocked(),
        )
        .updateTable('webhook_deliveries')
        .from('picked')
        .set({ locked_until: lease })
        .whereRef('webhook_deliveries.id', '=', 'picked.id')
        .returning(returned)
        .execute();
    }
    // SQLite has one writer: the UPDATE re-checks the lease it sets.
    return this.#db
      .updateTable('webhook_deliveries')
      .set({ locked_until: lease })
      .where('id', 'in', pick)
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .returning(returned)
      .execute();
  }

  /** Counts a claimed delivery as in flight here until its outcome is recorded. */
  #hold(delivery: Claimed): void {
    this.#total++;
    this.#inFlight.set(delivery.endpoint_id, (this.#inFlight.get(delivery.endpoint_id) ?? 0) + 1);
  }

  #letGo(delivery: Claimed): void {
    this.#total--;
    const left = (this.#inFlight.get(delivery.endpoint_id) ?? 1) - 1;
    if (left > 0) this.#inFlight.set(delivery.endpoint_id, left);
    else this.#inFlight.delete(delivery.endpoint_id);
  }

  #begin(delivery: Claimed, target: Target | undefined): void {
    const attempt = this.#attempt(delivery, target)
      .then((outcome) => this.#queue(outcome))
      .catch((error: unknown) => {
        this.#log.warn(
          { err: error, delivery: delivery.id },
          'webhooks: an attempt failed unrecorded; retried when its lease ends',
        );
        this.#letGo(delivery);
      })
      .finally(() => this.#attempts.delete(attempt));
    this.#attempts.add(attempt);
  }

  async #attempt(delivery: Claimed, target: Target | undefined): Promise<Recorded> {
    // Deleted or disabled meanwhile: the lease is given back untouched.
    if (!target || target.disabled_at !== null) return { delivery, release: true };
    const startedAt = Date.now();
    const secrets = await this.#secretsOf(target, startedAt);
    const timestamp = new Date(startedAt);
    const signature = secrets
      .map((secret) => secret.sign(delivery.message_id, timestamp, target.body))
      .join(' ');
    const outcome = await this.#send(
      target.url,
      target.environment === 'production',
      {
        'content-type': 'application/json',
        'user-agent': 'Latchkey-Webhooks/1',
        'webhook-id': delivery.message_id,
        'webhook-timestamp': String(Math.floor(startedAt / 1000)),
        'webhook-signature': signature,
      },
      target.body,
    );
    if (this.#stopping.signal.aborted) return { delivery, release: true };
    return {
      delivery,
      release: false,
      endpointId: target.id,
      tenantId: target.tenant_id,
      startedAt,
      endedAt: Date.now(),
      outcome,
    };
  }

  /**
   * The endpoint's signers, opened once per secret (not per attempt: opening a sealed
   * secret costs more than signing); a rotation changes the sealed values, and so the key.
   */
  async #secretsOf(target: Target, now: number): Promise<Webhook[]> {
    const key = `${target.secret_jwe}|${target.previous_secret_jwe}|${target.previous_secret_expires_at}`;
    const cached = this.#signers.get(target.id);
    if (cached && cached.key === key && cached.until > now) return cached.signers;
    const secrets = await signingSecrets(this.#box, target, now);
    const signers = secrets.map((secret) => new Webhook(secret));
    if (this.#signers.size >= SIGNERS_KEPT) this.#signers.clear();
    // The previous secret stops signing at its end: kept no longer than that.
    const until =
      secrets.length > 1 ? Number(target.previous_secret_expires_at) : Number.POSITIVE_INFINITY;
    this.#signers.set(target.id, { key, until, signers });
    return signers;
  }

  /** Outcomes wait a moment to be recorded together, in one transaction. */
  #queue(recorded: Recorded): void {
    this.#outcomes.push(recorded);
    if (this.#flushing || this.#flushTimer) return;
    this.#flushTimer = setTimeout(() => {
      this.#flushTimer = undefined;
      void this.#flush();
    }, RECORD_DELAY_MS);
  }

  async #flush(): Promise<void> {
    if (this.#flushing) return;
    this.#flushing = true;
    try {
      while (this.#outcomes.length > 0) {
        const batch = this.#outcomes.splice(0, 500);
        try {
          await this.#record(batch);
        } catch (error) {
          this.#log.warn(
            { err: error, deliveries: batch.length },
            'webhooks: attempts could not be recorded; retried when their leases end',
          );
        }
        for (const r of batch) this.#letGo(r.delivery);
      }
    } finally {
      this.#flushing = false;
      this.#flushed?.();
    }
    // Room again: what waited for it may go now (else the next poll finds what is new).
    if (this.#starved && !this.#running) this.#schedule(0);
  }

  #agentFor(protocol: string, production: boolean): import('node:http').Agent {
    const key = `${protocol}${production}`;
    let agent = this.#agents.get(key);
    if (!agent) {
      const options = { keepAlive: true, keepAliveMsecs: 1_000, maxFreeSockets: 64 };
      agent = protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
      this.#agents.set(key, agent);
    }
    return agent;
  }

  /** One POST: no redirect followed, the address checked as it is connected to, a capped body. */
  #send(
    raw: string,
    production: boolean,
    headers: Record<string, string>,
    body: string,
  ): Promise<Outcome> {
    const settings = this.#settings;
    return new Promise<Outcome>((resolve) => {
      let settled = false;
      // `keep`: the answer was read to its end, so its connection may serve the next one.
      const done = (outcome: Outcome, keep = false) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.#stopping.signal.removeEventListener('abort', abort);
        if (!keep) request.destroy();
        resolve(outcome);
      };
      const url = new URL(raw);
      const client = url.protocol === 'https:' ? https : http;
      const request = client.request(url, {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: this.#agentFor(url.protocol, production),
        lookup: (hostname, options, callback) => {
          resolveTarget(hostname, production, this.#resolve).then(
            (target: LookupAddress) => {
              if ((options as { all?: boolean }).all) callback(null, [target] as never);
              else callback(null, target.address, target.family);
            },
            (error: Error) => callback(error as NodeJS.ErrnoException, '', 0),
          );
        },
      });
      const timer = setTimeout(
        () =>
          done({
            statusCode: null,
            error: `no answer within ${settings.attemptTimeoutMs / 1000} s`,
            responseBody: null,
          }),
        settings.attemptTimeoutMs,
      );
      const abort = () =>
        done({ statusCode: null, error: 'the instance stopped', responseBody: null });
      if (this.#stopping.signal.aborted) abort();
      this.#stopping.signal.addEventListener('abort', abort, { once: true });
      request.on('error', (error) =>
        done({
          statusCode: null,
          error:
            error instanceof RefusedAddress
              ? `refused: ${error.message}`
              : error.message || String(error),
          responseBody: null,
        }),
      );
      request.on('response', (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const finish = (ended = false) =>
          done(
            {
              statusCode: response.statusCode ?? null,
              error: null,
              responseBody: Buffer.concat(chunks).toString('utf8'),
            },
            ended,
          );
        response.on('data', (chunk: Buffer) => {
          if (kept < settings.responseBodyBytes) {
            const part = chunk.subarray(0, settings.responseBodyBytes - kept);
            chunks.push(part);
            kept += part.length;
          }
          // Enough kept: the rest is not read.
          if (kept >= settings.responseBodyBytes) finish();
        });
        response.on('end', () => finish(true));
        response.on('error', () => finish());
      });
      request.end(body);
    });
  }

  /**
   * Attempts and what follows each, in one transaction: success, a retry after a backoff,
   * or failure; leases given back for attempts the instance ended by stopping.
   */
  async #record(batch: Recorded[]): Promise<void> {
    const settings = this.#settings;
    const now = Date.now();
    const delays = settings.retryDelaysMs;
    const disabled: { tenantId: string; endpointId: string }[] = [];
    await this.#db.transaction().execute(async (trx) => {
      // The endpoints' rows first, in one order. Deleting an endpoint takes its row, then
      // its deliveries' (the cascade); taking the deliveries first would deadlock with it.
      // A deleted endpoint's deliveries are gone: nothing of theirs is left to record, and
      // the rest of the batch is recorded without them.
      const endpointIds = [...new Set(batch.map((r) => r.delivery.endpoint_id))].sort();
      const rows = trx
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('id', 'in', endpointIds)
        .orderBy('id');
      const present = new Set(
        (await (this.#dialect === 'postgres' ? rows.forNoKeyUpdate() : rows).execute()).map(
          (e) => e.id,
        ),
      );
      const live = batch.filter((r) => present.has(r.delivery.endpoint_id));
      const released = live.filter((r) => r.release).map((r) => r.delivery.id);
      if (released.length)
        await trx
          .updateTable('webhook_deliveries')
          .set({ locked_until: null })
          .where('id', 'in', released)
          .execute();
      const done = live.filter((r): r is Attempted => !r.release);
      if (done.length === 0) return;
      await trx
        .insertInto('webhook_attempts')
        .values(
          done.map((r) => ({
            id: randomUUID(),
            delivery_id: r.delivery.id,
            started_at: r.startedAt,
            duration_ms: r.endedAt - r.startedAt,
            status_code: r.outcome.statusCode,
            error: r.outcome.error?.slice(0, 500) ?? null,
            response_body: r.outcome.responseBody,
          })),
        )
        .execute();
      const ok = done.filter((r) => isSuccess(r.outcome));
      if (ok.length) {
        await trx
          .updateTable('webhook_deliveries')
          .set((eb) => ({
            status: 'succeeded',
            attempts: eb('attempts', '+', 1),
            next_attempt_at: now,
            locked_until: null,
            updated_at: now,
          }))
          .where(
            'id',
            'in',
            ok.map((r) => r.delivery.id),
          )
          .execute();
        await trx
          .updateTable('webhook_endpoints')
          .set({ last_success_at: now })
          .where('id', 'in', [...new Set(ok.map((r) => r.endpointId))])
          .execute();
      }
      for (const r of done) {
        if (isSuccess(r.outcome)) continue;
        const attempts = r.delivery.attempts + 1;
        const exhausted = attempts > delays.length;
        const delay = delays[attempts - 1] ?? 0;
        const jittered = Math.round(delay * (1 + settings.jitter * (2 * Math.random() - 1)));
        await trx
          .updateTable('webhook_deliveries')
          .set({
            status: exhausted ? 'failed' : 'pending',
            attempts,
            next_attempt_at: exhausted ? now : now + jittered,
            locked_until: null,
            updated_at: now,
          })
          .where('id', '=', r.delivery.id)
          .execute();
        if (!exhausted) continue;
        // A delivery failed for the whole retry period: if nothing reached the endpoint
        // since it was made, the endpoint only fails, and is disabled until an operator
        // enables it again.
        const endpoint = await trx
          .selectFrom('webhook_endpoints')
          .select(['last_success_at', 'disabled_at', 'url'])
          .where('id', '=', r.endpointId)
          .executeTakeFirst();
        if (
          endpoint &&
          endpoint.disabled_at === null &&
          (endpoint.last_success_at ?? 0) < r.delivery.created_at
        ) {
          await trx
            .updateTable('webhook_endpoints')
            .set({ disabled_at: now, disabled_reason: 'failing', updated_at: now })
            .where('id', '=', r.endpointId)
            .execute();
          await recordAudit(trx, {
            tenantId: r.tenantId,
            kind: 'webhook.endpoint_disabled',
            detail: { endpointId: r.endpointId, url: endpoint.url, reason: 'failing' },
          });
          disabled.push({ tenantId: r.tenantId, endpointId: r.endpointId });
        }
      }
    });
    for (const d of disabled)
      this.#log.warn(
        d,
        'webhooks: an endpoint that only failed for the whole retry period was disabled',
      );
  }
}

const isSuccess = (outcome: Outcome) =>
  outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
