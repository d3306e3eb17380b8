import { randomBytes, randomUUID } from 'node:crypto';
import { type Kysely, PostgresAdapter, sql } from 'kysely';
import { prepared, type Schema, type WebhookDeliveryRow } from '../../storage/index.js';

/** The events of docs/design.md §17; their `data` schemas are in events.ts. */
export const EVENT_TYPES = [
  'user.created',
  'user.updated',
  'user.deleted',
  'session.created',
  'session.ended',
  'user.factor_added',
  'user.factor_removed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (value: string): value is EventType =>
  (EVENT_TYPES as readonly string[]).includes(value);

/** `msg_` and 22 base64url characters: the `webhook-id` of every attempt of this event. */
const messageId = () => `msg_${randomBytes(16).toString('base64url')}`;

/**
 * Records one event in the outbox, on the handle of the change's own transaction: it is
 * delivered if and only if the change commits (docs/design.md §17). Written only when an
 * enabled endpoint of the tenant takes this type: a tenant without webhooks pays one
 * indexed read. `data` may be a function, run only then (a re-read of the changed row).
 * Returns the message id, or undefined when no endpoint takes the event.
 */
export async function emitEvent(
  db: Kysely<Schema>,
  tenantId: string,
  type: EventType,
  data: unknown | (() => Promise<unknown>),
): Promise<string | undefined> {
  if (typeof data !== 'function' && db.getExecutor().adapter instanceof PostgresAdapter)
    return writeInOne(db, tenantId, type, data);
  const takers = await takersOf(db, tenantId, type);
  if (takers.length === 0) return undefined;
  const payload = typeof data === 'function' ? await (data as () => Promise<unknown>)() : data;
  return write(db, tenantId, type, payload, takers);
}

/**
 * PostgreSQL: the look-up, the message and its deliveries in one statement (each statement
 * is a round trip and its parsing on the server's one core; the benchmark's outbox cost).
 * The takers' rows are held as `holdingEndpoints` holds them.
 */
async function writeInOne(
  db: Kysely<Schema>,
  tenantId: string,
  type: EventType,
  data: unknown,
): Promise<string | undefined> {
  const now = Date.now();
  const id = messageId();
  const body = JSON.stringify({ type, timestamp: new Date(now).toISOString(), data });
  const { rows } = await writeInOneStatement(db, { tenantId, type, id, body, now });
  return rows[0]?.message_id;
}

/** Every sign-in runs it on PostgreSQL: compiled once (storage/prepared.ts). */
const writeInOneStatement = prepared<
  { tenantId: string; type: EventType; id: string; body: string; now: number },
  { message_id: string }
>(
  (_db, value) => sql<{ message_id: string }>`
    with takers as (
      select id from webhook_endpoints
      where tenant_id = ${value('tenantId')} and disabled_at is null
        and (events = '[]' or events::jsonb ? ${value('type')})
      for key share
    ), message as (
      insert into webhook_messages (id, tenant_id, type, body, created_at)
      select ${value('id')}, ${value('tenantId')}, ${value('type')}, ${value('body')}, ${value('now')}
      where exists (select 1 from takers)
      returning id
    )
    insert into webhook_deliveries (id, tenant_id, message_id, endpoint_id, status, attempts,
      next_attempt_at, locked_until, created_at, updated_at)
    select gen_random_uuid()::text, ${value('tenantId')}, message.id, takers.id, 'pending', 0,
      ${value('now')}, null, ${value('now')}, ${value('now')}
    from message cross join takers
    returning message_id`,
);

/**
 * One event of `type` per item (the sessions one revocation ends, an import's batch), one
 * read for them all; `toData` makes each one's data, only when an endpoint takes them.
 */
export async function emitEach<T>(
  db: Kysely<Schema>,
  tenantId: string,
  type: EventType,
  items: readonly T[],
  toData: (item: T) => unknown | Promise<unknown> = (item) => item,
): Promise<void> {
  if (items.length === 0) return;
  const takers = await takersOf(db, tenantId, type);
  if (takers.length === 0) return;
  for (const item of items) await write(db, tenantId, type, await toData(item), takers);
}

/**
 * `query` over webhook_endpoints with the rows it finds held `for key share` on PostgreSQL
 * (the lock a delivery's foreign key takes anyway; SQLite has one writer): an endpoint being
 * deleted is waited for and then not found, so the delivery written next is left out or
 * refused, never a foreign-key error.
 */
export function holdingEndpoints<Q extends { forKeyShare(): Q }>(db: Kysely<Schema>, query: Q): Q {
  return db.getExecutor().adapter instanceof PostgresAdapter ? query.forKeyShare() : query;
}

/** Every event asks (every sign-in on SQLite): compiled once (storage/prepared.ts). */
const endpointsOf = prepared<{ tenantId: string }, { id: string; events: string }>((db, value) =>
  holdingEndpoints(
    db,
    db
      .selectFrom('webhook_endpoints')
      .select(['id', 'events'])
      .where('tenant_id', '=', value('tenantId'))
      .where('disabled_at', 'is', null),
  ),
);

/** The enabled endpoints of the tenant that take `type`, held (`holdingEndpoints`). */
async function takersOf(db: Kysely<Schema>, tenantId: string, type: EventType) {
  const { rows: endpoints } = await endpointsOf(db, { tenantId });
  return endpoints.filter((e) => {
    const events = JSON.parse(e.events) as string[];
    return events.length === 0 || events.includes(type);
  });
}

async function write(
  db: Kysely<Schema>,
  tenantId: string,
  type: EventType,
  data: unknown,
  takers: { id: string }[],
): Promise<string> {
  const now = Date.now();
  const id = messageId();
  const body = JSON.stringify({ type, timestamp: new Date(now).toISOString(), data });
  await db
    .insertInto('webhook_messages')
    .values({ id, tenant_id: tenantId, type, body, created_at: now })
    .execute();
  await db
    .insertInto('webhook_deliveries')
    .values(takers.map((e) => newDelivery(tenantId, id, e.id, now)))
    .execute();
  return id;
}

/** A delivery of a message to an endpoint, due now: what an event and a resend write. */
export const newDelivery = (
  tenantId: string,
  messageId: string,
  endpointId: string,
  now: number,
): WebhookDeliveryRow => ({
  id: randomUUID(),
  tenant_id: tenantId,
  message_id: messageId,
  endpoint_id: endpointId,
  status: 'pending',
  attempts: 0,
  next_attempt_at: now,
  locked_until: null,
  created_at: now,
  updated_at: now,
});
