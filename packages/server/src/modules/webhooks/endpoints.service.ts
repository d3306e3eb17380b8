import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import type { SealedStore, SecretBox } from '../../crypto/secret-box.js';
import { type FieldError, LatchkeyError } from '../../errors/index.js';
import {
  isUuid,
  type Schema,
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookDeliveryStatus,
  type WebhookEndpointRow,
} from '../../storage/index.js';
import { urlProblem } from './address-guard.js';
import {
  EVENT_TYPES,
  type EventType,
  holdingEndpoints,
  isEventType,
  newDelivery,
} from './outbox.js';

/** A tenant's endpoint as operators see it: never its secret. */
export interface WebhookEndpoint {
  id: string;
  url: string;
  /** The event types it takes; empty: every event. */
  events: EventType[];
  disabled: boolean;
  /** `operator`, or `failing`: every delivery failed for the whole retry period. */
  disabledReason: string | null;
  /** While the secret before the last rotation still signs too. */
  previousSecretExpiresAt: string | null;
  lastSuccessAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The tenant fields the rules below read. */
export interface EndpointTenant {
  id: string;
  environment: string;
}

const PURPOSE = 'webhook-secret';
const subjectOf = (tenantId: string, endpointId: string) => `${tenantId}/${endpointId}`;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export function toEndpoint(row: WebhookEndpointRow, now = Date.now()): WebhookEndpoint {
  const previousLive =
    row.previous_secret_jwe !== null && (row.previous_secret_expires_at ?? 0) > now;
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as EventType[],
    disabled: row.disabled_at !== null,
    disabledReason: row.disabled_reason,
    previousSecretExpiresAt: previousLive ? iso(row.previous_secret_expires_at) : null,
    lastSuccessAt: iso(row.last_success_at),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** Checks an endpoint's fields; throws validation_failed naming each wrong one. */
function checked(
  tenant: EndpointTenant,
  input: { url?: unknown; events?: unknown },
): { url?: string; events?: EventType[] } {
  const errors: FieldError[] = [];
  let url: string | undefined;
  if (input.url !== undefined) {
    const problem =
      typeof input.url === 'string'
        ? urlProblem(input.url, tenant.environment === 'production')
        : 'url must be a string';
    if (problem) errors.push({ path: '/url', code: 'url_invalid', message: problem });
    else url = input.url as string;
  }
  let events: EventType[] | undefined;
  if (input.events !== undefined) {
    if (!Array.isArray(input.events)) {
      errors.push({ path: '/events', code: 'events_invalid', message: 'events must be a list' });
    } else {
      input.events.forEach((event, i) => {
        if (typeof event !== 'string' || !isEventType(event))
          errors.push({
            path: `/events/${i}`,
            code: 'event_unknown',
            message: `${String(event).slice(0, 64)} is not an event; the events are ${EVENT_TYPES.join(', ')}`,
          });
      });
      events = [...new Set(input.events as EventType[])];
    }
  }
  if (errors.length)
    throw new LatchkeyError('validation_failed', errors.map((e) => e.message).join('; '), {
      errors,
    });
  return { ...(url !== undefined && { url }), ...(events !== undefined && { events }) };
}

async function endpointRow(
  db: Kysely<Schema>,
  tenantId: string,
  id: string,
): Promise<WebhookEndpointRow> {
  const row = isUuid(id)
    ? await db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new LatchkeyError('not_found', `No webhook endpoint ${id}`);
  return row;
}

/** A new endpoint, and its secret (shown once: it is kept sealed, never shown again). */
export async function createEndpoint(
  deps: { db: Kysely<Schema>; box: SecretBox },
  tenant: EndpointTenant,
  input: { url: unknown; events?: unknown },
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  if (input.url === undefined)
    throw new LatchkeyError('validation_failed', 'url is required', {
      errors: [{ path: '/url', code: 'url_required', message: 'url is required' }],
    });
  const fields = checked(tenant, { url: input.url, events: input.events ?? [] });
  const id = randomUUID();
  const secret = newSecret();
  const now = Date.now();
  const row: WebhookEndpointRow = {
    id,
    tenant_id: tenant.id,
    url: fields.url as string,
    events: JSON.stringify(fields.events ?? []),
    secret_jwe: await deps.box.seal(secret, PURPOSE, subjectOf(tenant.id, id)),
    previous_secret_jwe: null,
    previous_secret_expires_at: null,
    disabled_at: null,
    disabled_reason: null,
    last_success_at: null,
    created_at: now,
    updated_at: now,
  };
  await deps.db.insertInto('webhook_endpoints').values(row).execute();
  return { endpoint: toEndpoint(row, now), secret };
}

export async function listEndpoints(
  db: Kysely<Schema>,
  tenantId: string,
): Promise<WebhookEndpoint[]> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => toEndpoint(row));
}

export async function getEndpoint(
  db: Kysely<Schema>,
  tenantId: string,
  id: string,
): Promise<WebhookEndpoint> {
  return toEndpoint(await endpointRow(db, tenantId, id));
}

/** Changes the address or the events, or disables (by an operator) or enables an endpoint. */
export async function updateEndpoint(
  db: Kysely<Schema>,
  tenant: EndpointTenant,
  id: string,
  input: { url?: unknown; events?: unknown; disabled?: unknown },
): Promise<WebhookEndpoint> {
  const fields = checked(tenant, input);
  if (input.disabled !== undefined && typeof input.disabled !== 'boolean')
    throw new LatchkeyError('validation_failed', 'disabled must be true or false', {
      errors: [
        { path: '/disabled', code: 'disabled_invalid', message: 'disabled must be true or false' },
      ],
    });
  const row = await endpointRow(db, tenant.id, id);
  const now = Date.now();
  const update: Partial<WebhookEndpointRow> = { updated_at: now };
  if (fields.url !== undefined) update.url = fields.url;
  if (fields.events !== undefined) update.events = JSON.stringify(fields.events);
  if (input.disabled === true && row.disabled_at === null) {
    update.disabled_at = now;
    update.disabled_reason = 'operator';
  }
  if (input.disabled === false) {
    update.disabled_at = null;
    update.disabled_reason = null;
  }
  await db.updateTable('webhook_endpoints').set(update).where('id', '=', row.id).execute();
  return toEndpoint({ ...row, ...update }, now);
}

export async function deleteEndpoint(db: Kysely<Schema>, tenantId: string, id: string) {
  const row = await endpointRow(db, tenantId, id);
  await db.deleteFrom('webhook_endpoints').where('id', '=', row.id).execute();
}

/**
 * A new secret; the one before keeps signing beside it for `graceMs` (both signatures in
 * `webhook-signature`), so receivers can take the new one without missing an event.
 */
export async function rotateEndpointSecret(
  deps: { db: Kysely<Schema>; box: SecretBox },
  tenantId: string,
  id: string,
  graceMs: number = defaults.webhooks.secretGraceMs,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const row = await endpointRow(deps.db, tenantId, id);
  const secret = newSecret();
  const now = Date.now();
  const update = {
    secret_jwe: await deps.box.seal(secret, PURPOSE, subjectOf(tenantId, id)),
    previous_secret_jwe: graceMs > 0 ? row.secret_jwe : null,
    previous_secret_expires_at: graceMs > 0 ? now + graceMs : null,
    updated_at: now,
  };
  await deps.db.updateTable('webhook_endpoints').set(update).where('id', '=', id).execute();
  return { endpoint: toEndpoint({ ...row, ...update }, now), secret };
}

/** The secrets that sign an attempt now: the current one, and the previous one in its grace. */
export async function signingSecrets(
  box: SecretBox,
  row: Pick<
    WebhookEndpointRow,
    'id' | 'tenant_id' | 'secret_jwe' | 'previous_secret_jwe' | 'previous_secret_expires_at'
  >,
  now: number,
): Promise<string[]> {
  const subject = subjectOf(row.tenant_id, row.id);
  const secrets = [await box.open(row.secret_jwe, PURPOSE, subject)];
  if (row.previous_secret_jwe && (row.previous_secret_expires_at ?? 0) > now)
    secrets.push(await box.open(row.previous_secret_jwe, PURPOSE, subject));
  return secrets;
}

/** Every endpoint's secrets, for master-secret checks and rotation. */
export const sealedWebhookSecrets: SealedStore = {
  what: 'webhook secrets',
  async list(db) {
    const rows = await db
      .selectFrom('webhook_endpoints')
      .select(['id', 'tenant_id', 'secret_jwe', 'previous_secret_jwe'])
      .execute();
    return rows.flatMap((r) => [
      { id: r.id, jwe: r.secret_jwe, purpose: PURPOSE, subject: subjectOf(r.tenant_id, r.id) },
      ...(r.previous_secret_jwe
        ? [
            {
              id: `${r.id}#previous`,
              jwe: r.previous_secret_jwe,
              purpose: PURPOSE,
              subject: subjectOf(r.tenant_id, r.id),
            },
          ]
        : []),
    ]);
  },
  async replace(db, id, jwe) {
    const [endpointId, which] = id.split('#');
    await db
      .updateTable('webhook_endpoints')
      .set(which === 'previous' ? { previous_secret_jwe: jwe } : { secret_jwe: jwe })
      .where('id', '=', endpointId as string)
      .execute();
  },
};

// ----- Deliveries -----

export interface WebhookDelivery {
  id: string;
  /** The `webhook-id`: the same in every attempt and every resend. */
  messageId: string;
  endpointId: string;
  type: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  /** When the next attempt is due (pending only). */
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookAttempt {
  startedAt: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
}

export interface WebhookDeliveryDetail extends WebhookDelivery {
  /** The JSON body sent. */
  body: string;
  attemptList: WebhookAttempt[];
}

/** What a delivery is shown with: its row and its message's type. */
const DELIVERY_COLUMNS = [
  'd.id',
  'd.message_id',
  'd.endpoint_id',
  'm.type',
  'd.status',
  'd.attempts',
  'd.next_attempt_at',
  'd.created_at',
  'd.updated_at',
] as const;

const toDelivery = (
  r: Pick<
    WebhookDeliveryRow,
    | 'id'
    | 'message_id'
    | 'endpoint_id'
    | 'status'
    | 'attempts'
    | 'next_attempt_at'
    | 'created_at'
    | 'updated_at'
  > & { type: string },
): WebhookDelivery => ({
  id: r.id,
  messageId: r.message_id,
  endpointId: r.endpoint_id,
  type: r.type,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.status === 'pending' ? iso(r.next_attempt_at) : null,
  createdAt: new Date(r.created_at).toISOString(),
  updatedAt: new Date(r.updated_at).toISOString(),
});

/** An endpoint's deliveries, newest first. */
export async function listDeliveries(
  db: Kysely<Schema>,
  tenantId: string,
  endpointId: string,
  options: { limit: number; status?: WebhookDeliveryStatus },
): Promise<WebhookDelivery[]> {
  const endpoint = await endpointRow(db, tenantId, endpointId);
  let query = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_messages as m', 'm.id', 'd.message_id')
    .select(DELIVERY_COLUMNS)
    .where('d.endpoint_id', '=', endpoint.id);
  if (options.status) query = query.where('d.status', '=', options.status);
  const rows = await query
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(options.limit)
    .execute();
  return rows.map(toDelivery);
}

const toAttempt = (a: WebhookAttemptRow): WebhookAttempt => ({
  startedAt: new Date(a.started_at).toISOString(),
  durationMs: a.duration_ms,
  statusCode: a.status_code,
  error: a.error,
  responseBody: a.response_body,
});

/** One delivery with its body and every attempt, oldest first. */
export async function getDelivery(
  db: Kysely<Schema>,
  tenantId: string,
  deliveryId: string,
): Promise<WebhookDeliveryDetail> {
  const row = isUuid(deliveryId)
    ? await db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_messages as m', 'm.id', 'd.message_id')
        .select([...DELIVERY_COLUMNS, 'm.body'])
        .where('d.tenant_id', '=', tenantId)
        .where('d.id', '=', deliveryId)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new LatchkeyError('not_found', `No webhook delivery ${deliveryId}`);
  const attempts = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', '=', row.id)
    .orderBy('started_at')
    .orderBy('id')
    .execute();
  return { ...toDelivery(row), body: row.body, attemptList: attempts.map(toAttempt) };
}

/**
 * Sends a delivery's message again, now, with the same `webhook-id`: a new delivery of the
 * same message to the same endpoint, with a retry schedule of its own.
 */
export async function resendDelivery(
  db: Kysely<Schema>,
  tenantId: string,
  deliveryId: string,
): Promise<WebhookDelivery> {
  const original = await getDelivery(db, tenantId, deliveryId);
  const row = newDelivery(tenantId, original.messageId, original.endpointId, Date.now());
  await db.transaction().execute(async (trx) => {
    const held = await holdingEndpoints(
      trx,
      trx
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('id', '=', original.endpointId),
    ).executeTakeFirst();
    if (!held) throw new LatchkeyError('not_found', `No webhook delivery ${deliveryId}`);
    await trx.insertInto('webhook_deliveries').values(row).execute();
  });
  return toDelivery({ ...row, type: original.type });
}
