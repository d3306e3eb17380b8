import { getTenant } from '../modules/tenants/index.js';
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  resendDelivery,
  rotateEndpointSecret,
  updateEndpoint,
  type WebhookEndpoint,
} from '../modules/webhooks/index.js';
import { integer, parse, required, UsageError } from './args.js';
import type { OpenedDatabase } from './opened.js';
import { json, type Output } from './output.js';

const FLAGS = {
  tenant: { type: 'string' },
  id: { type: 'string' },
  url: { type: 'string' },
  event: { type: 'string', multiple: true },
  'all-events': { type: 'boolean' },
  disable: { type: 'boolean' },
  enable: { type: 'boolean' },
  'grace-hours': { type: 'string' },
  delivery: { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
} as const;

const HOUR = 3_600_000;
const MAX_GRACE_HOURS = 720;

function describeEndpoint(output: Output, e: WebhookEndpoint): void {
  output.out(`endpoint     ${e.id}`);
  output.out(`url          ${e.url}`);
  output.out(`events       ${e.events.join(' ') || '(every event)'}`);
  const state = e.disabled
    ? `disabled (${e.disabledReason === 'failing' ? 'every delivery failed' : 'by an operator'})`
    : 'enabled';
  output.out(`state        ${state}`);
  if (e.previousSecretExpiresAt)
    output.out(`old secret   still signs until ${e.previousSecretExpiresAt}`);
  if (e.lastSuccessAt) output.out(`last success ${e.lastSuccessAt}`);
}

/** `latchkey webhook …` (docs/design.md §17): a tenant's webhook endpoints and deliveries. */
export async function webhookCommand(database: OpenedDatabase, args: string[], output: Output) {
  const [sub, ...rest] = args;
  const { values } = parse(rest, FLAGS);
  const tenant = await getTenant(database.db, required(values.tenant, '--tenant'));
  const { db } = database;
  const endpointId = () => required(values.id, '--id');
  switch (sub) {
    case 'create': {
      const made = await createEndpoint(database, tenant, {
        url: required(values.url, '--url'),
        events: values.event ?? [],
      });
      if (values.json) return json(output, made);
      describeEndpoint(output, made.endpoint);
      output.out(`secret       ${made.secret}`);
      output.out('');
      output.out(
        'Keep the secret now: it is shown only this once (rotate-secret makes a new one).',
      );
      return;
    }
    case 'list': {
      const endpoints = await listEndpoints(db, tenant.id);
      if (values.json) return json(output, endpoints);
      for (const e of endpoints)
        output.out(
          `${e.id}  ${e.disabled ? 'disabled' : 'enabled '}  ${e.url}  ${e.events.join(',') || '*'}`,
        );
      return;
    }
    case 'update': {
      if (values.enable && values.disable) throw new UsageError('give --enable or --disable');
      if (values.event && values['all-events'])
        throw new UsageError('give --event or --all-events');
      const disabled = values.disable ? true : values.enable ? false : undefined;
      const events = values['all-events'] ? [] : values.event;
      if (values.url === undefined && events === undefined && disabled === undefined)
        throw new UsageError(
          'nothing to update: give --url, --event, --all-events, --enable or --disable',
        );
      const endpoint = await updateEndpoint(db, tenant, endpointId(), {
        url: values.url,
        events,
        disabled,
      });
      return values.json ? json(output, endpoint) : describeEndpoint(output, endpoint);
    }
    case 'delete': {
      const endpoint = await getEndpoint(db, tenant.id, endpointId());
      await deleteEndpoint(db, tenant.id, endpoint.id);
      if (values.json) return json(output, endpoint);
      output.out(`deleted ${endpoint.id} (${endpoint.url})`);
      return;
    }
    case 'rotate-secret': {
      const hours = integer(values['grace-hours'], '--grace-hours');
      if (hours !== undefined && hours > MAX_GRACE_HOURS)
        throw new UsageError(`--grace-hours must be at most ${MAX_GRACE_HOURS} (30 days)`);
      const made = await rotateEndpointSecret(
        database,
        tenant.id,
        endpointId(),
        hours === undefined ? undefined : hours * HOUR,
      );
      if (values.json) return json(output, made);
      describeEndpoint(output, made.endpoint);
      output.out(`secret       ${made.secret}`);
      output.out('');
      output.out(
        made.endpoint.previousSecretExpiresAt
          ? 'Keep the secret now: it is shown only this once. Until the old secret stops, each delivery carries both signatures.'
          : 'Keep the secret now: it is shown only this once. The old secret no longer signs.',
      );
      return;
    }
    case 'deliveries': {
      const deliveries = await listDeliveries(db, tenant.id, endpointId(), {
        limit: integer(values.limit, '--limit') ?? 20,
      });
      if (values.json) return json(output, deliveries);
      for (const d of deliveries)
        output.out(
          `${d.id}  ${d.createdAt}  ${d.type.padEnd(19)}  ${d.status.padEnd(9)}  ${d.attempts} attempt(s)  ${d.messageId}`,
        );
      return;
    }
    case 'resend': {
      const delivery = await resendDelivery(db, tenant.id, required(values.delivery, '--delivery'));
      if (values.json) return json(output, delivery);
      output.out(`queued ${delivery.id}: ${delivery.type} ${delivery.messageId} again`);
      return;
    }
    default:
      throw new UsageError(
        'usage: latchkey webhook create|list|update|delete|rotate-secret|deliveries|resend --tenant ID …',
      );
  }
}
