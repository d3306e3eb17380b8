import type { Factor } from '../../modules/mfa/index.js';
import type { Session } from '../../modules/sessions/index.js';
import type { ListedIdentity } from '../../modules/social/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import type { User } from '../../modules/users/index.js';
import { type Html, html } from '../html.js';
import { type Alert, actionButton, csrfField, field, table, when } from '../kit.js';
import { layout, tenantPath, type Viewer } from './layout.js';
import { reauthField } from './sign-in.js';
import { browserLabel } from './user-agent.js';

export function usersPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  /** What was searched for: part of an address or a name. */
  query: string;
  users: User[];
  more: boolean;
  /** The password again before an export (a sign-in older than 10 minutes). */
  reauth: boolean;
  alert?: Alert;
}): Html {
  const base = tenantPath(p.tenant.id, 'users');
  const rows = p.users.map((u) => [
    html`<a href="${base}/${u.id}">${u.email}</a>`,
    u.name ?? '',
    u.disabled ? 'disabled' : 'active',
    u.emailVerified ? 'yes' : 'no',
    when(u.createdAt),
  ]);
  const search = html`<form method="get" action="${base}" class="card" role="search">
${field({ name: 'q', label: 'E-mail or name', type: 'search', value: p.query, hint: 'Part of an address or a name, in any case. Empty: the oldest users.' })}
<button type="submit">Search</button></form>`;
  // docs/design.md §16: every user, with password hashes, as Latchkey's own export.
  const exporting = html`<form method="post" action="${base}/export" class="card">
<h2>Export</h2>
<p>Every user of this tenant as JSON Lines, one user a line: profile, roles, password hashes as stored, identities, and second factors without their secrets. <code>latchkey import --from latchkey</code> reads it. The file holds password hashes: keep it safe.</p>
${csrfField(p.viewer.csrf)}${reauthField(p.reauth, 'export')}
<button type="submit">Export users</button></form>`;
  return layout({
    viewer: p.viewer,
    title: 'Users',
    top: 'tenants',
    tenant: { tenant: p.tenant, section: 'users' },
    alert: p.alert,
    body: html`${search}${p.query && p.users.length === 0 ? html`<p>No user's address or name contains &ldquo;${p.query}&rdquo;.</p>` : table('Users', ['E-mail', 'Name', 'State', 'Verified', 'Created'], rows)}${p.more && html`<p>Only the first page is shown: search to find someone.</p>`}${exporting}`,
  });
}

/** The browser of a session ("Chrome 131 on macOS"), else the start of what its client sent. */
function sessionClient(userAgent: string | null): Html | string {
  const label = browserLabel(userAgent);
  if (label) return html`<span title="${userAgent ?? ''}">${label}</span>`;
  return userAgent ? html`<span class="mono">${userAgent.slice(0, 60)}</span>` : html`&mdash;`;
}

const RESET_QUESTIONS: Record<Factor['type'], string> = {
  totp: 'Reset this authenticator app? The user can no longer sign in with its codes.',
  passkey: 'Remove this passkey? The user can no longer sign in with it.',
  recovery_code: "Delete this user's recovery codes? None of them works any more.",
};

/**
 * A user's second factors as listFactors gives them (docs/design.md §13): never a secret,
 * each with an operator's Reset.
 */
function factorsTable(csrf: string, base: string, factors: Factor[]): Html {
  return table(
    'Second factors',
    ['Type', 'Name', 'Confirmed', 'Created', 'Last used', 'Codes left', ''],
    factors.map((f) => [
      // The type as the REST API and the audit log name it; the name says it for people.
      html`<code class="kind">${f.type}</code>`,
      f.name,
      f.confirmed ? 'yes' : 'no (setup not finished)',
      when(f.createdAt),
      when(f.lastUsedAt),
      f.remaining === undefined ? html`&mdash;` : String(f.remaining),
      actionButton(csrf, `${base}/factors/${f.id}/reset`, 'Reset', {
        danger: true,
        confirm: RESET_QUESTIONS[f.type],
      }),
    ]),
  );
}

export function userPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  user: User;
  identities: ListedIdentity[];
  factors: Factor[];
  sessions: Session[];
  alert?: Alert;
}): Html {
  const u = p.user;
  const base = `${tenantPath(p.tenant.id, 'users')}/${u.id}`;
  const csrf = p.viewer.csrf;
  const facts = html`<dl class="card facts">
<dt>Id</dt><dd><code>${u.id}</code></dd>
<dt>Name</dt><dd>${u.name ?? '—'}</dd>
<dt>State</dt><dd>${u.disabled ? 'disabled' : 'active'}</dd>
<dt>E-mail verified</dt><dd>${u.emailVerified ? 'yes' : 'no'}</dd>
<dt>Roles</dt><dd>${u.roles.join(', ') || '—'}</dd>
<dt>Created</dt><dd>${when(u.createdAt)}</dd></dl>`;
  const actions = html`<h2>Actions</h2><div class="row">
${
  u.disabled
    ? actionButton(csrf, `${base}/enable`, 'Enable')
    : actionButton(csrf, `${base}/disable`, 'Disable', {
        danger: true,
        confirm: 'Disable this user and end every session?',
      })
}
${actionButton(csrf, `${base}/sign-out-everywhere`, 'Sign out everywhere')}
${!u.emailVerified && actionButton(csrf, `${base}/resend-verification`, 'Resend verification')}
${actionButton(csrf, `${base}/send-password-reset`, 'Send password reset')}
${actionButton(csrf, `${base}/delete`, 'Delete', { danger: true, confirm: 'Delete this user for good?' })}
</div>`;
  const identities = table(
    'Identities',
    ['Provider', 'Subject', 'E-mail', 'Picture', 'Linked', 'Last used'],
    p.identities.map((i) => [
      i.provider,
      html`<code>${i.subject}</code>`,
      html`${i.email ?? '—'}${i.emailVerified && ' (verified)'}`,
      // The URL as text: the admin area's CSP loads no remote image.
      i.picture ? html`<code>${i.picture}</code>` : '—',
      when(i.createdAt),
      when(i.lastUsedAt),
    ]),
  );
  const sessions = table(
    'Sessions',
    ['Started', 'Last activity', 'Client address', 'Browser', 'State', ''],
    p.sessions.map((s) => [
      when(s.createdAt),
      when(s.lastUsedAt),
      html`<code>${s.ip ?? '—'}</code>`,
      sessionClient(s.userAgent),
      s.revokedAt
        ? s.revokedReason && s.revokedReason !== 'revoked'
          ? `ended (${s.revokedReason.replaceAll('_', ' ')})`
          : 'revoked'
        : 'live',
      !s.revokedAt &&
        actionButton(csrf, `${base}/sessions/${s.id}/revoke`, 'Revoke', { danger: true }),
    ]),
  );
  const factors = html`<h2>Second factors</h2>
<p class="hint">This tenant's policy: ${p.tenant.mfaPolicy} (<a href="${tenantPath(p.tenant.id, 'security')}">Security</a>).</p>
${factorsTable(csrf, base, p.factors)}`;
  return layout({
    viewer: p.viewer,
    title: u.email,
    top: 'tenants',
    tenant: { tenant: p.tenant, section: 'users' },
    alert: p.alert,
    body: html`<p><a href="${tenantPath(p.tenant.id, 'users')}">All users</a></p>${facts}${actions}<h2>Identities</h2>${identities}${factors}<h2>Sessions</h2>${sessions}`,
  });
}
