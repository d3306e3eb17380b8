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

/** The defaults' shape with their literal values widened, so tests can pass their own. */
export type DispatcherSettings = {
  [K in keyof typeof defaults.webhooks]: (typeof defaults.webhooks)[K] extends readonly number[]
    ? readonly number[]
    : number;
};

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

interface Claimed {
  id: string;
  message_id: string;
  endpoint_id: string;
  attempts: number;
  created_at: number;
  locked_until: number | null;
}

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
  #looking: Promise<void> = Promise.resolve();
  readonly #attempts = new Set<Promise<void>>();
  /** Ends the attempts in flight when the instance stops. */
  readonly #stopping = new AbortController();

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
    let full = false;
    try {
      full = await this.#claimAndSend();
    } catch (error) {
      this.#log.warn({ err: error }, 'webhooks: looking for due deliveries failed; retried');
    } finally {
      this.#running = false;
    }
    // A full look leaves more to do: look again at once.
    this.#schedule(full ? 0 : this.#settings.pollMs);
  }

  /** Claims what is due, endpoint by endpoint, and starts its attempts; true if it took all it could. */
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
    for (const { endpoint_id } of due) {
      const take = Math.min(
        room,
        settings.maxInFlightPerEndpoint - (this.#inFlight.get(endpoint_id) ?? 0),
      );
      if (take <= 0) continue;
      const claimed = await this.#claim(endpoint_id, take, now);
      if (claimed.length === take) full = true;
      room -= claimed.length;
      for (const delivery of claimed) this.#begin(delivery);
      if (room <= 0) return false;
    }
    return full;
  }

  /** Up to `take` due deliveries of one endpoint, locked for this instance for a lease. */
  async #claim(endpointId: string, take: number, now: number): Promise<Claimed[]> {
    const lease = now + this.#settings.attemptTimeoutMs * 2;
    let pick = this.#db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('endpoint_id', '=', endpointId)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .orderBy('next_attempt_at')
      .limit(take);
    if (this.#dialect === 'postgres') pick = pick.forUpdate().skipLocked();
    const rows = await this.#db
      .updateTable('webhook_deliveries')
      .set({ locked_until: lease })
      .where('id', 'in', pick)
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .returning(['id', 'message_id', 'endpoint_id', 'attempts', 'created_at', 'locked_until'])
      .execute();
    return rows;
  }

  #begin(delivery: Claimed): void {
    this.#total++;
    this.#inFlight.set(delivery.endpoint_id, (this.#inFlight.get(delivery.endpoint_id) ?? 0) + 1);
    const attempt = this.#attempt(delivery)
      .catch((error: unknown) =>
        this.#log.warn(
          { err: error, delivery: delivery.id },
          'webhooks: an attempt could not be recorded; retried when its lease ends',
        ),
      )
      .finally(() => {
        this.#total--;
        const left = (this.#inFlight.get(delivery.endpoint_id) ?? 1) - 1;
        if (left > 0) this.#inFlight.set(delivery.endpoint_id, left);
        else this.#inFlight.delete(delivery.endpoint_id);
        this.#attempts.delete(attempt);
        // Room again: what waited behind this attempt may go now.
        if (!this.#running) this.#schedule(0);
      });
    this.#attempts.add(attempt);
  }

  async #attempt(delivery: Claimed): Promise<void> {
    const target = await this.#db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_messages as m', 'm.id', 'd.message_id')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .innerJoin('tenants as t', 't.id', 'd.tenant_id')
      .select([
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
      .where('d.id', '=', delivery.id)
      .executeTakeFirst();
    if (!target || target.disabled_at !== null) {
      // Deleted or disabled meanwhile: the lease is given back untouched.
      await this.#release(delivery);
      return;
    }
    const startedAt = Date.now();
    const secrets = await signingSecrets(this.#box, target, startedAt);
    const timestamp = new Date(startedAt);
    const signature = secrets
      .map((secret) => new Webhook(secret).sign(delivery.message_id, timestamp, target.body))
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
    if (this.#stopping.signal.aborted) await this.#release(delivery);
    else await this.#record(delivery, target.id, target.tenant_id, startedAt, outcome);
  }

  async #release(delivery: Claimed): Promise<void> {
    await this.#db
      .updateTable('webhook_deliveries')
      .set({ locked_until: null })
      .where('id', '=', delivery.id)
      .where('locked_until', '=', delivery.locked_until)
      .execute();
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
      const done = (outcome: Outcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.#stopping.signal.removeEventListener('abort', abort);
        request.destroy();
        resolve(outcome);
      };
      const url = new URL(raw);
      const client = url.protocol === 'https:' ? https : http;
      const request = client.request(url, {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: false,
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
        const finish = () =>
          done({
            statusCode: response.statusCode ?? null,
            error: null,
            responseBody: Buffer.concat(chunks).toString('utf8'),
          });
        response.on('data', (chunk: Buffer) => {
          if (kept < settings.responseBodyBytes) {
            const part = chunk.subarray(0, settings.responseBodyBytes - kept);
            chunks.push(part);
            kept += part.length;
          }
          // Enough kept: the rest is not read.
          if (kept >= settings.responseBodyBytes) finish();
        });
        response.on('end', finish);
        response.on('error', finish);
      });
      request.end(body);
    });
  }

  /** The attempt, and what follows: success, a retry after a backoff, or failure. */
  async #record(
    delivery: Claimed,
    endpointId: string,
    tenantId: string,
    startedAt: number,
    outcome: Outcome,
  ): Promise<void> {
    const settings = this.#settings;
    const now = Date.now();
    const ok = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
    const attempts = delivery.attempts + 1;
    const delays = settings.retryDelaysMs;
    const exhausted = !ok && attempts > delays.length;
    let disabled = false;
    await this.#db.transaction().execute(async (trx) => {
      await trx
        .insertInto('webhook_attempts')
        .values({
          id: randomUUID(),
          delivery_id: delivery.id,
          started_at: startedAt,
          duration_ms: now - startedAt,
          status_code: outcome.statusCode,
          error: outcome.error?.slice(0, 500) ?? null,
          response_body: outcome.responseBody,
        })
        .execute();
      const delay = delays[attempts - 1] ?? 0;
      const jittered = Math.round(delay * (1 + settings.jitter * (2 * Math.random() - 1)));
      await trx
        .updateTable('webhook_deliveries')
        .set({
          status: ok ? 'succeeded' : exhausted ? 'failed' : 'pending',
          attempts,
          next_attempt_at: ok || exhausted ? now : now + jittered,
          locked_until: null,
          updated_at: now,
        })
        .where('id', '=', delivery.id)
        .execute();
      if (ok) {
        await trx
          .updateTable('webhook_endpoints')
          .set({ last_success_at: now })
          .where('id', '=', endpointId)
          .execute();
        return;
      }
      if (!exhausted) return;
      // A delivery failed for the whole retry period: if nothing reached the endpoint
      // since it was made, the endpoint only fails, and is disabled until an operator
      // enables it again.
      const endpoint = await trx
        .selectFrom('webhook_endpoints')
        .select(['last_success_at', 'disabled_at', 'url'])
        .where('id', '=', endpointId)
        .executeTakeFirst();
      if (
        endpoint &&
        endpoint.disabled_at === null &&
        (endpoint.last_success_at ?? 0) < delivery.created_at
      ) {
        await trx
          .updateTable('webhook_endpoints')
          .set({ disabled_at: now, disabled_reason: 'failing', updated_at: now })
          .where('id', '=', endpointId)
          .execute();
        await recordAudit(trx, {
          tenantId,
          kind: 'webhook.endpoint_disabled',
          detail: { endpointId, url: endpoint.url, reason: 'failing' },
        });
        disabled = true;
      }
    });
    if (disabled)
      this.#log.warn(
        { tenantId, endpointId },
        'webhooks: an endpoint that only failed for the whole retry period was disabled',
      );
  }
}
