import type { AuditEvent } from '../../modules/audit/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import { type Html, html } from '../html.js';
import { field, select, table, when } from '../kit.js';
import { layout, type Viewer } from './layout.js';

export interface AuditFilterForm {
  tenant: string;
  actor: string;
  kind: string;
}

export const AUDIT_KINDS = [
  'tenant_created',
  'tenant_updated',
  'branding_updated',
  'security_updated',
  'provider_updated',
  'key_created',
  'key_revoked',
  'app_created',
  'app_updated',
  'app_secret_rotated',
  'app_deleted',
  'webhook.endpoint_created',
  'webhook.endpoint_updated',
  'webhook.endpoint_disabled',
  'webhook.endpoint_enabled',
  'webhook.endpoint_deleted',
  'webhook.secret_rotated',
  'webhook.delivery_resent',
  'user_disabled',
  'user_enabled',
  'user_deleted',
  'users_exported',
  'user_signed_out_everywhere',
  'session_revoked',
  'verification_sent',
  'password_reset_sent',
  'factor_reset',
  'factor_added',
  'factor_removed',
  'recovery_codes_replaced',
  'password_changed',
  'sign_in_failures',
  'second_factor_failures',
  'admin_sign_in_failures',
  'identity_created',
  'identity_linked',
  'identities_dropped',
];

const detailText = (detail: Record<string, unknown>) =>
  Object.entries(detail)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join('; ');

export function auditPage(p: {
  viewer: Viewer;
  /** Every tenant the admin sees, when they fit one page; null: too many, the id is typed. */
  picker: Tenant[] | null;
  /** The names of the events' tenants. */
  names: Map<string, string>;
  filter: AuditFilterForm;
  events: AuditEvent[];
}): Html {
  const names = p.names;
  const tenantFilter = p.picker
    ? select({
        name: 'tenant',
        label: 'Tenant',
        options: [['', 'All tenants'], ...p.picker.map((t) => [t.id, t.name] as const)],
        value: p.filter.tenant,
      })
    : field({
        name: 'tenant',
        label: 'Tenant id',
        value: p.filter.tenant,
        hint: 'Empty: all tenants. Find an id under Tenants.',
      });
  const form = html`<form method="get" action="/admin/audit" class="card" role="search">
${tenantFilter}
${field({ name: 'actor', label: 'Actor (admin e-mail)', type: 'email', value: p.filter.actor })}
${select({ name: 'kind', label: 'Kind', options: [['', 'All kinds'], ...AUDIT_KINDS], value: p.filter.kind })}
<button type="submit">Filter</button></form>`;
  const rows = p.events.map((ev) => [
    when(ev.createdAt),
    ev.tenantId ? (names.get(ev.tenantId) ?? ev.tenantId) : '—',
    ev.actor ?? (ev.kind.includes('sign_in') ? 'system' : 'user'),
    html`<code class="kind">${ev.kind}</code>`,
    html`<span class="mono">${detailText(ev.detail)}</span>`,
  ]);
  return layout({
    viewer: p.viewer,
    title: 'Audit log',
    top: 'audit',
    body: html`${form}${table('Audit events, newest first', ['Time', 'Tenant', 'Actor', 'Kind', 'Detail'], rows)}`,
  });
}

/** Text with its http(s) links made clickable. */
const linkify = (text: string) =>
  text
    .split(/(https?:\/\/[^\s<>"]+)/)
    .map((part, i) => (i % 2 === 1 ? html`<a href="${part}">${part}</a>` : part));

export function outboxPage(p: {
  viewer: Viewer;
  smtp: boolean;
  mails: {
    id: string;
    recipient: string;
    subject: string;
    body: string;
    createdAt: string;
    tenant: string;
  }[];
}): Html {
  const body = p.smtp
    ? html`<p>Mail goes out through SMTP_URL, so the dev outbox is not used.</p>`
    : p.mails.length === 0
      ? html`<p>No mail yet. Without SMTP_URL every mail the service sends is kept here.</p>`
      : p.mails.map(
          (m) => html`<article class="card"><h2>${m.subject}</h2>
<p>To <strong>${m.recipient}</strong> &middot; ${m.tenant} &middot; ${when(m.createdAt)}</p>
<pre>${linkify(m.body)}</pre></article>`,
        );
  return layout({ viewer: p.viewer, title: 'Outbox', top: 'outbox', body });
}
