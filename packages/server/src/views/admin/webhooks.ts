import type { Tenant } from '../../modules/tenants/index.js';
import {
  EVENT_TYPES,
  type WebhookDeliveryDetail,
  type WebhookEndpoint,
} from '../../modules/webhooks/index.js';
import { type Html, html } from '../html.js';
import {
  type Alert,
  actionButton,
  copyable,
  csrfField,
  field,
  select,
  table,
  when,
} from '../kit.js';
import { GRACE_CHOICES } from './apps.js';
import { layout, tenantPath, type Viewer } from './layout.js';
import { reauthField } from './sign-in.js';

/** The add and edit forms as typed: refused values are shown again, not the saved ones. */
export interface EndpointForm {
  url: string;
  events: string[];
  /** The fields the refusal names (`url`, `events`): marked invalid, described by the alert. */
  invalid?: string[];
}

export const webhooksPath = (tenantId: string, endpointId?: string) =>
  `${tenantPath(tenantId, 'webhooks')}${endpointId ? `/${endpointId}` : ''}`;

const eventList = (events: string[]) =>
  events.length
    ? events.map((e, i) => html`${i > 0 && html` `}<code class="kind">${e}</code>`)
    : html`all events`;

/** Active, disabled by an operator, or disabled because it only failed. */
export function endpointStatus(e: WebhookEndpoint): Html {
  if (!e.disabled) return html`<span class="badge ok">active</span>`;
  return e.disabledReason === 'failing'
    ? html`<span class="badge bad">disabled: it only failed</span>`
    : html`<span class="badge">disabled by an operator</span>`;
}

/**
 * The warning shown on the tenant's page and on the Webhooks list while an endpoint is
 * disabled because every delivery failed for the whole retry period, with "Enable" each.
 */
export function failingNotice(tenant: Tenant, endpoints: WebhookEndpoint[], csrf: string) {
  const failing = endpoints.filter((e) => e.disabled && e.disabledReason === 'failing');
  if (failing.length === 0) return undefined;
  return html`<section class="alert error" aria-labelledby="failing-heading"><h2 id="failing-heading">${failing.length === 1 ? 'A webhook endpoint was disabled' : `${failing.length} webhook endpoints were disabled`}</h2>
<p>A delivery failed at every attempt of its retry period (about three days) and nothing got through since, so Latchkey stopped sending events there. Fix the receiver, then enable it again: events from then on are delivered, and a failed delivery can be sent again with Resend.</p>
<ul class="failing">${failing.map(
    (e) =>
      html`<li><a href="${webhooksPath(tenant.id, e.id)}"><code>${e.url}</code></a>${actionButton(csrf, `${webhooksPath(tenant.id, e.id)}/enable`, 'Enable')}</li>`,
  )}</ul></section>`;
}

function urlField(form: EndpointForm, idPrefix: string): Html {
  return field({
    name: 'url',
    id: `${idPrefix}-url`,
    label: 'Endpoint URL',
    type: 'url',
    value: form.url,
    required: true,
    invalid: form.invalid?.includes('url'),
    hint: 'Where events are POSTed. Production tenants: https, and no loopback or private address.',
    attrs: { maxlength: 2048, inputmode: 'url' },
  });
}

/** A checkbox per event type (`event_{type}`); none checked: every event. */
function eventBoxes(form: EndpointForm, idPrefix: string): Html {
  const invalid = form.invalid?.includes('events');
  return html`<fieldset class="events" aria-describedby="${invalid ? 'alert ' : ''}${idPrefix}-events-hint"><legend>Events</legend>
<p class="hint" id="${idPrefix}-events-hint">None checked: every event, including ones added later.</p>
${EVENT_TYPES.map(
  (type) =>
    html`<label class="inline" for="${idPrefix}-event-${type}"><input type="checkbox" id="${idPrefix}-event-${type}" name="event_${type}" value="on"${form.events.includes(type) && html` checked`}> <code class="kind">${type}</code></label>`,
)}</fieldset>`;
}

/** Webhooks: the tenant's endpoints and the add form. */
export function webhooksPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  endpoints: WebhookEndpoint[];
  reauth: boolean;
  form?: EndpointForm;
  alert?: Alert;
}): Html {
  const t = p.tenant;
  const form = p.form ?? { url: '', events: [] };
  const rows = p.endpoints.map((e) => [
    html`<a href="${webhooksPath(t.id, e.id)}"><code>${e.url}</code></a>`,
    eventList(e.events),
    endpointStatus(e),
    when(e.lastSuccessAt),
  ]);
  const add = html`<form method="post" action="${webhooksPath(t.id)}" class="card" aria-labelledby="add-endpoint">${csrfField(p.viewer.csrf)}
<h2 id="add-endpoint">Add an endpoint</h2>
${urlField(form, 'new')}
${eventBoxes(form, 'new')}
${p.reauth && html`<p class="hint">The endpoint's signing secret is shown when it is added:</p>`}${reauthField(p.reauth)}
<button type="submit">Add endpoint</button></form>`;
  return layout({
    viewer: p.viewer,
    title: 'Webhooks',
    top: 'tenants',
    tenant: { tenant: t, section: 'webhooks' },
    alert: p.alert,
    body: html`${failingNotice(t, p.endpoints, p.viewer.csrf)}<p class="hint">Latchkey POSTs each event to your endpoints, signed as <a href="https://www.standardwebhooks.com/">Standard Webhooks</a> says (headers <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>); a 2xx answer within 15 seconds is success, anything else is retried for about three days with the same <code>webhook-id</code>.</p>
<h2>Endpoints</h2>
${rows.length ? table('Endpoints', ['URL', 'Events', 'Status', 'Last success'], rows) : html`<p>No endpoints yet: add one below.</p>`}
${add}`,
  });
}

/** A signing secret just made (by adding the endpoint or rotating), shown this once. */
export interface ShownSecret {
  secret: string;
  rotated: boolean;
}

function secretCard(endpoint: WebhookEndpoint, shown: ShownSecret): Html {
  const old = !shown.rotated
    ? undefined
    : endpoint.previousSecretExpiresAt
      ? html`<p>Until ${when(endpoint.previousSecretExpiresAt)} every delivery is signed with the old secret too, so your receiver can take the new one without missing an event.</p>`
      : html`<p>The old secret no longer signs deliveries.</p>`;
  return html`<section class="card" aria-labelledby="new-secret-heading"><h2 id="new-secret-heading">${shown.rotated ? 'The new signing secret' : 'Your signing secret'}</h2>
<p>Copy it now into your receiver's configuration: it is shown only this once. Your receiver verifies each delivery's <code>webhook-signature</code> with it.</p>${old}
<p class="secret"><code id="new-secret">${shown.secret}</code></p>
<button type="button" class="plain" data-copy="new-secret">Copy<span class="visually-hidden"> the signing secret</span></button></section>`;
}

function attemptResult(a: WebhookDeliveryDetail['attemptList'][number]): Html {
  if (a.statusCode !== null)
    return html`<span class="badge${a.statusCode >= 200 && a.statusCode < 300 ? ' ok' : ' bad'}">${a.statusCode}</span>${a.error && html` ${a.error}`}`;
  return html`<span class="badge bad">no answer</span> ${a.error ?? ''}`;
}

/** The JSON body sent, indented for reading (as stored if it were not JSON). */
function indented(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

const STATUS_BADGE: Record<string, string> = { succeeded: ' ok', failed: ' bad', pending: '' };

/** One delivery: what was sent, when it is next tried, each attempt, and "Resend". */
function deliveryCard(base: string, d: WebhookDeliveryDetail, csrf: string, n: number): Html {
  const attempts = table(
    'Attempts',
    ['Time', 'Result', 'Response time', 'Response body'],
    d.attemptList.map((a) => [
      when(a.startedAt),
      attemptResult(a),
      html`${a.durationMs} ms`,
      a.responseBody ? html`<pre class="body">${a.responseBody}</pre>` : html`&mdash;`,
    ]),
  );
  return html`<section class="card delivery" aria-labelledby="delivery-${n}"><h3 id="delivery-${n}"><code class="kind">${d.type}</code> <span class="badge${STATUS_BADGE[d.status] ?? ''}">${d.status}</span></h3>
<dl class="facts"><dt>webhook-id</dt><dd><code>${d.messageId}</code></dd>
<dt>Made</dt><dd>${when(d.createdAt)}</dd>
<dt>Attempts</dt><dd>${d.attempts}</dd>
${d.nextAttemptAt && html`<dt>Next attempt</dt><dd>${when(d.nextAttemptAt)}</dd>`}</dl>
${attempts}
<details><summary>Body sent</summary><pre>${indented(d.body)}</pre></details>
<div class="row">${actionButton(csrf, `${base}/deliveries/${d.id}/resend`, 'Resend')}<span class="hint">A new delivery of the same event, with the same webhook-id.</span></div></section>`;
}

/** One endpoint: status, the edit form, disable or enable, secret rotation, deletion, deliveries. */
export function endpointPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  endpoint: WebhookEndpoint;
  deliveries: WebhookDeliveryDetail[];
  reauth: boolean;
  shown?: ShownSecret;
  form?: EndpointForm;
  alert?: Alert;
}): Html {
  const { endpoint: e, tenant: t } = p;
  const csrf = p.viewer.csrf;
  const base = webhooksPath(t.id, e.id);
  const form = p.form ?? { url: e.url, events: e.events };
  const facts = html`<section class="card" aria-labelledby="details-heading"><h2 id="details-heading">Details</h2>
${copyable('URL', e.url, 'endpoint-url')}
<dl class="facts"><dt>Status</dt><dd>${endpointStatus(e)}</dd>
<dt>Events</dt><dd>${eventList(e.events)}</dd>
<dt>Last success</dt><dd>${when(e.lastSuccessAt)}</dd>
<dt>Added</dt><dd>${when(e.createdAt)}</dd>
${e.previousSecretExpiresAt && html`<dt>Old secret</dt><dd>also signs until ${when(e.previousSecretExpiresAt)}</dd>`}</dl>
<div class="row">${
    e.disabled
      ? actionButton(csrf, `${base}/enable`, 'Enable')
      : actionButton(csrf, `${base}/disable`, 'Disable')
  }<span class="hint">${e.disabled ? 'Events from now on are sent again once it is enabled.' : 'While disabled, no event is sent to it.'}</span></div></section>`;
  const edit = html`<form method="post" action="${base}" class="card" aria-labelledby="edit-endpoint">${csrfField(csrf)}
<h2 id="edit-endpoint">Address and events</h2>
${urlField(form, 'edit')}
${eventBoxes(form, 'edit')}
<button type="submit">Save endpoint</button></form>`;
  const rotate = html`<form method="post" action="${base}/rotate-secret" class="card" aria-labelledby="rotate">${csrfField(csrf)}
<h2 id="rotate">Signing secret</h2>
<p class="hint">A new secret is shown once. The old one can keep signing beside it for a while (both signatures are sent), so your receiver can be given the new one first.</p>
${select({ name: 'grace', label: 'Keep signing with the old secret for', options: GRACE_CHOICES.map(([value, text]) => [value, text] as const), value: '24h' })}
${reauthField(p.reauth, 'rotate')}
<button type="submit">Rotate secret</button></form>`;
  const remove = html`<form method="get" action="${base}/delete" class="card" aria-labelledby="delete-endpoint">
<h2 id="delete-endpoint">Delete</h2>
<p class="hint">No more events are sent to it, and its deliveries are deleted; you are asked to confirm first.</p>
<button type="submit" class="danger">Delete endpoint</button></form>`;
  const deliveries = html`<h2 id="deliveries">Deliveries</h2>
${
  p.deliveries.length
    ? html`<p class="hint">The latest ${p.deliveries.length}, newest first.</p>${p.deliveries.map((d, i) => deliveryCard(base, d, csrf, i))}`
    : html`<p>No deliveries yet: they appear here when an event this endpoint takes happens.</p>`
}`;
  return layout({
    viewer: p.viewer,
    title: 'Webhook endpoint',
    top: 'tenants',
    tenant: { tenant: t, section: 'webhooks' },
    alert: p.alert,
    body: html`${p.shown && secretCard(e, p.shown)}${facts}${deliveries}${edit}${rotate}${remove}
<p><a href="${webhooksPath(t.id)}">All endpoints</a></p>`,
  });
}

/** The confirmation asked before an endpoint is deleted (it works without the script). */
export function deleteEndpointPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  endpoint: WebhookEndpoint;
}): Html {
  const { endpoint: e, tenant: t } = p;
  const base = webhooksPath(t.id, e.id);
  return layout({
    viewer: p.viewer,
    title: 'Delete this endpoint?',
    top: 'tenants',
    tenant: { tenant: t, section: 'webhooks' },
    body: html`<div class="alert error" role="alert">Deleted, <code>${e.url}</code> gets no more events, and the record of its deliveries and attempts is deleted with it. Its signing secret is forgotten. This cannot be undone.</div>
<div class="row"><form method="post" action="${base}/delete">${csrfField(p.viewer.csrf)}<button type="submit" class="danger">Delete endpoint</button></form>
<a href="${base}">Keep the endpoint</a></div>`,
  });
}
