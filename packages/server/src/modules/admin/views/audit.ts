import type { AuditEvent } from '../../audit/index.js';
import type { Tenant } from '../../tenants/index.js';
import { e, field, layout, table, type Viewer, when } from './kit.js';

export interface AuditFilterForm {
  tenant: string;
  actor: string;
  kind: string;
}

export const AUDIT_KINDS = [
  'tenant_created',
  'tenant_updated',
  'branding_updated',
  'provider_updated',
  'key_created',
  'key_revoked',
  'user_disabled',
  'user_enabled',
  'user_deleted',
  'user_signed_out_everywhere',
  'session_revoked',
  'verification_sent',
  'password_reset_sent',
  'sign_in_failures',
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
  tenants: Tenant[];
  filter: AuditFilterForm;
  events: AuditEvent[];
}): string {
  const names = new Map(p.tenants.map((t) => [t.id, t.name]));
  const options = (values: [string, string][], current: string) =>
    values
      .map(
        ([v, text]) =>
          `<option value="${e(v)}"${v === current ? ' selected' : ''}>${e(text)}</option>`,
      )
      .join('');
  const form = `<form method="get" action="/admin/audit" class="card" role="search">
<label for="f-tenant">Tenant</label><select id="f-tenant" name="tenant">${options(
    [['', 'All tenants'], ...p.tenants.map((t): [string, string] => [t.id, t.name])],
    p.filter.tenant,
  )}</select>
${field({ name: 'actor', label: 'Actor (admin e-mail)', type: 'email', value: p.filter.actor })}
<label for="f-kind">Kind</label><select id="f-kind" name="kind">${options(
    [['', 'All kinds'], ...AUDIT_KINDS.map((k): [string, string] => [k, k])],
    p.filter.kind,
  )}</select>
<button type="submit">Filter</button></form>`;
  const rows = p.events.map((ev) => [
    when(ev.createdAt),
    e(ev.tenantId ? (names.get(ev.tenantId) ?? ev.tenantId) : '—'),
    e(ev.actor ?? (ev.kind.includes('sign_in') ? 'system' : 'user')),
    `<code>${e(ev.kind)}</code>`,
    `<span class="mono">${e(detailText(ev.detail))}</span>`,
  ]);
  return layout({
    viewer: p.viewer,
    title: 'Audit log',
    top: 'audit',
    body: `${form}${table('Audit events, newest first', ['Time', 'Tenant', 'Actor', 'Kind', 'Detail'], rows)}`,
  });
}

/** Escaped text with its http(s) links made clickable. */
function linkify(text: string): string {
  return text
    .split(/(https?:\/\/[^\s<>"]+)/)
    .map((part, i) => (i % 2 === 1 ? `<a href="${e(part)}">${e(part)}</a>` : e(part)))
    .join('');
}

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
}): string {
  const body = p.smtp
    ? '<p>Mail goes out through SMTP_URL, so the dev outbox is not used.</p>'
    : p.mails.length === 0
      ? '<p>No mail yet. Without SMTP_URL every mail the service sends is kept here.</p>'
      : p.mails
          .map(
            (m) => `<article class="card"><h2>${e(m.subject)}</h2>
<p>To <strong>${e(m.recipient)}</strong> · ${e(m.tenant)} · ${when(m.createdAt)}</p>
<pre>${linkify(m.body)}</pre></article>`,
          )
          .join('');
  return layout({ viewer: p.viewer, title: 'Outbox', top: 'outbox', body });
}
