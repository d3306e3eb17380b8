import { defaults, ENVIRONMENTS, PLANS } from '../../config/defaults.js';
import type { Tenant } from '../../modules/tenants/index.js';
import type { WebhookEndpoint } from '../../modules/webhooks/index.js';
import { type Html, html } from '../html.js';
import {
  type Alert,
  checkbox,
  copyable,
  csrfField,
  field,
  select,
  table,
  textarea,
} from '../kit.js';
import { layout, tenantPath, type Viewer } from './layout.js';
import { failingNotice } from './webhooks.js';

export function tenantsPage(p: {
  viewer: Viewer;
  /** One page (docs/design.md §21), and what it was searched for. */
  tenants: Tenant[];
  search: { query: string; after: string };
  /** The id to continue after, when there is another page. */
  next: string | null;
  alert?: Alert;
  form?: { name?: string; environment?: string; plan?: string };
}): Html {
  const rows = p.tenants.map((t) => [
    html`<a href="${tenantPath(t.id)}">${t.name}</a>`,
    t.environment,
    t.plan,
    html`<code>${t.id}</code>`,
  ]);
  const create =
    p.viewer.superuser &&
    html`<h2>Create a tenant</h2><form method="post" action="/admin/tenants" class="card">${csrfField(p.viewer.csrf)}
${field({ name: 'name', label: 'Name', value: p.form?.name, required: true, attrs: { maxlength: defaults.tenants.nameMaxLength } })}
${select({ name: 'environment', label: 'Environment', options: ENVIRONMENTS, value: p.form?.environment ?? 'development' })}
${select({ name: 'plan', label: 'Plan', options: PLANS, value: p.form?.plan ?? 'free' })}
<button type="submit">Create tenant</button></form>`;
  return layout({
    viewer: p.viewer,
    title: 'Tenants',
    top: 'tenants',
    alert: p.alert,
    body: html`${searchForm(p.search.query)}${p.search.query && p.tenants.length === 0 && !p.search.after ? html`<p>No tenant's name or id contains &ldquo;${p.search.query}&rdquo;.</p>` : table('Tenants', ['Name', 'Environment', 'Plan', 'Id'], rows)}${pager(p.search, p.next)}${create}`,
  });
}

const searchForm = (query: string) =>
  html`<form method="get" action="/admin/tenants" class="card" role="search">
${field({ name: 'q', label: 'Search tenants', type: 'search', value: query, hint: 'Part of a name or an id, in any case. Empty: every tenant, oldest first.' })}
<button type="submit">Search</button></form>`;

/** "Next" continues after the page's last tenant; "First page" goes back to the start. */
function pager(search: { query: string; after: string }, next: string | null): Html | false {
  const link = (after?: string) =>
    `/admin/tenants?${new URLSearchParams({ ...(search.query ? { q: search.query } : {}), ...(after ? { after } : {}) })}`;
  if (!next && !search.after) return false;
  return html`<nav class="pager" aria-label="Pages of tenants">${search.after ? html`<a href="${link()}">First page</a> ` : ''}${next ? html`<a href="${link(next)}" rel="next">Next</a>` : ''}</nav>`;
}

/** The integration snippets (docs/design.md §1), filled with this tenant's values. */
function snippets(tenant: Tenant, authUrl: string, publishableKey: string | undefined): Html[] {
  const pk = publishableKey ?? 'pk_…';
  const origin = tenant.allowedOrigins[0] ?? 'https://app.example.com';
  const hosted = `${authUrl}/sign-in?${new URLSearchParams({ pk, redirect_url: `${origin}/callback` })}`;
  const items: [string, string][] = [
    ['Hosted page link', hosted],
    [
      'Script tag',
      `<script src="${authUrl}/sdk/latchkey.js"></script>
<div id="sign-in"></div>
<script>
  const latchkey = Latchkey({ publishableKey: '${pk}' });
  latchkey.mount('#sign-in', { redirectUrl: location.origin + '/callback' });
</script>`,
    ],
    [
      'React',
      `import { LatchkeyProvider, SignIn } from '@latchkey/react';

<LatchkeyProvider publishableKey="${pk}" authUrl="${authUrl}">
  <SignIn redirectUrl={location.origin + '/callback'} />
</LatchkeyProvider>`,
    ],
    [
      'curl (REST API, with a secret key from API Keys)',
      `curl ${authUrl}/api/auth/introspect \\
  -H 'authorization: Bearer sk_…' \\
  -H 'content-type: application/json' \\
  -d '{"token":"ACCESS_TOKEN"}'`,
    ],
  ];
  return items.map(
    ([title, code], i) =>
      html`<h3>${title}</h3><pre id="snippet-${i}">${code}</pre><button type="button" class="plain" data-copy="snippet-${i}">Copy<span class="visually-hidden"> ${title}</span></button>`,
  );
}

/**
 * Rate limits: editable by a superuser on an enterprise tenant; otherwise the plan's
 * fixed limits, read-only (the server refuses custom limits on other plans too).
 */
function limitsFields(t: Tenant, superuser: boolean): Html {
  if (superuser && t.plan === 'enterprise')
    return html`${field({ name: 'rps', label: 'Custom limit: requests per second', type: 'number', value: t.limits.rps, hint: 'Enterprise plan: empty for the plan default.', attrs: { min: 1, max: defaults.tenants.customRateMax.rps } })}
${field({ name: 'rpm', label: 'Custom limit: requests per minute', type: 'number', value: t.limits.rpm, attrs: { min: 1, max: defaults.tenants.customRateMax.rpm } })}`;
  const why =
    t.plan === 'enterprise'
      ? 'Set by a superuser.'
      : superuser
        ? 'Custom limits are for the enterprise plan: choose Enterprise above and save, then set them here.'
        : `The ${t.plan} plan's limits; custom limits come with the enterprise plan.`;
  return html`<p class="label" id="limits-label">Rate limits</p>
<p class="limits" aria-describedby="limits-hint"><span id="f-rps-value">${t.limits.rps}</span> requests per second, <span id="f-rpm-value">${t.limits.rpm}</span> per minute</p><p class="hint" id="limits-hint">${why}</p>`;
}

export function tenantPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  publishableKey: string | undefined;
  /** The tenant's webhook endpoints: one disabled because it only failed is announced here. */
  endpoints: WebhookEndpoint[];
  authUrl: string;
  alert?: Alert;
}): Html {
  const t = p.tenant;
  const body = html`${failingNotice(t, p.endpoints, p.viewer.csrf)}<section class="card"><h2>Keys for your app</h2>
${copyable('Tenant id', t.id, 'tenant-id')}
${p.publishableKey ? copyable('Publishable key', p.publishableKey, 'publishable-key') : html`<p>No live publishable key: the hosted page, the script tag and React apps cannot sign anyone in. <a href="${tenantPath(t.id, 'keys')}">Create one in API Keys</a>.</p>`}
</section>
<section><h2>Settings</h2><form method="post" action="${tenantPath(t.id)}" class="card">${csrfField(p.viewer.csrf)}
${field({ name: 'name', label: 'Name', value: t.name, required: true })}
${select({ name: 'plan', label: 'Plan', options: p.viewer.superuser ? PLANS : [t.plan], value: t.plan })}
${limitsFields(t, p.viewer.superuser)}
${textarea({ name: 'allowedOrigins', label: 'Allowed origins', value: t.allowedOrigins.join('\n'), hint: 'One origin per line, e.g. https://app.example.com. http only for localhost on development tenants.' })}
${field({ name: 'accessTokenTtl', label: 'Token lifetime (seconds)', type: 'number', value: t.accessTokenTtl, attrs: { min: defaults.tenants.accessTokenTtlSeconds.min, max: defaults.tenants.accessTokenTtlSeconds.max } })}
${checkbox({ name: 'requireEmailVerification', label: 'Require e-mail verification', checked: t.requireEmailVerification })}
${checkbox({ name: 'passwordEnabled', label: 'Password sign-in', checked: t.passwordEnabled })}
<button type="submit">Save settings</button></form></section>
<section><h2>Integration snippets</h2>${snippets(t, p.authUrl, p.publishableKey)}</section>`;
  return layout({
    viewer: p.viewer,
    title: t.name,
    top: 'tenants',
    tenant: { tenant: t, section: 'settings' },
    alert: p.alert,
    body,
  });
}
