import type { ApiKey } from '../../modules/keys/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import { type Html, html } from '../html.js';
import { type Alert, actionButton, csrfField, field, table, when } from '../kit.js';
import { layout, tenantPath, type Viewer } from './layout.js';
import { reauthField } from './sign-in.js';

export function keysPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  keys: ApiKey[];
  scopes: readonly string[];
  reauth: boolean;
  /** A secret key just made: shown this once. */
  created?: string;
  alert?: Alert;
}): Html {
  const base = tenantPath(p.tenant.id, 'keys');
  const rows = p.keys.map((k) => [
    html`${k.kind}${k.name && html` <span class="badge">${k.name}</span>`}`,
    html`<code>${k.publishableKey ?? k.display}</code>`,
    k.scopes.join(' ') || '—',
    when(k.lastUsedAt),
    k.revokedAt
      ? html`revoked ${when(k.revokedAt)}`
      : actionButton(p.viewer.csrf, `${base}/${k.id}/revoke`, 'Revoke', {
          danger: true,
          confirm: 'Revoke this key? Requests with it stop at once.',
        }),
  ]);
  const created =
    p.created &&
    html`<section class="card" aria-labelledby="new-key"><h2 id="new-key">Your new secret key</h2>
<p>Copy it now: it is shown only this once, and only its first and last characters are kept for the list.</p>
<p class="secret"><code id="new-secret">${p.created}</code></p>
<button type="button" class="plain" data-copy="new-secret">Copy<span class="visually-hidden"> the new secret key</span></button></section>`;
  const scopeBoxes = p.scopes.map(
    (s, i) =>
      html`<label class="inline" for="scope-${i}"><input type="checkbox" id="scope-${i}" name="scope_${s}" value="on" checked> <code>${s}</code></label>`,
  );
  const form = html`<h2>Create a secret key</h2><form method="post" action="${base}" class="card">${csrfField(p.viewer.csrf)}
${field({ name: 'keyName', label: 'Name', hint: 'For you: where this key is deployed.', attrs: { maxlength: 100 } })}
<fieldset><legend>Scopes</legend>${scopeBoxes}</fieldset>
${reauthField(p.reauth)}
<button type="submit">Create secret key</button></form>`;
  return layout({
    viewer: p.viewer,
    title: 'API Keys',
    top: 'tenants',
    tenant: { tenant: p.tenant, section: 'keys' },
    alert: p.alert,
    body: html`${created}${table('Keys', ['Kind', 'Key', 'Scopes', 'Last used', ''], rows)}${form}`,
  });
}
