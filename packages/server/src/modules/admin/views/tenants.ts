import { defaults, ENVIRONMENTS, PLANS } from '../../../config/defaults.js';
import type { Tenant } from '../../tenants/index.js';
import {
  type Alert,
  checkbox,
  copyable,
  csrfField,
  e,
  field,
  layout,
  select,
  table,
  tenantPath,
  textarea,
  type Viewer,
} from './kit.js';

export function tenantsPage(p: {
  viewer: Viewer;
  tenants: Tenant[];
  alert?: Alert;
  form?: { name?: string; environment?: string; plan?: string };
}): string {
  const rows = p.tenants.map((t) => [
    `<a href="${tenantPath(t.id)}">${e(t.name)}</a>`,
    e(t.environment),
    e(t.plan),
    `<code>${e(t.id)}</code>`,
  ]);
  const create = p.viewer.superuser
    ? `<h2>Create a tenant</h2><form method="post" action="/admin/tenants" class="card">${csrfField(p.viewer.csrf)}
${field({ name: 'name', label: 'Name', value: p.form?.name, required: true, attrs: ` maxlength="${defaults.tenants.nameMaxLength}"` })}
${select('environment', 'Environment', ENVIRONMENTS, p.form?.environment ?? 'development')}
${select('plan', 'Plan', PLANS, p.form?.plan ?? 'free')}
<button type="submit">Create tenant</button></form>`
    : '';
  return layout({
    viewer: p.viewer,
    title: 'Tenants',
    top: 'tenants',
    alert: p.alert,
    body: `${table('Tenants', ['Name', 'Environment', 'Plan', 'Id'], rows)}${create}`,
  });
}

/** The snippets of docs/design.md §1, filled with this tenant's values. */
function snippets(tenant: Tenant, authUrl: string, publishableKey: string | undefined): string {
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
  return items
    .map(
      ([title, code], i) =>
        `<h3>${e(title)}</h3><pre id="snippet-${i}">${e(code)}</pre><button type="button" class="plain" data-copy="snippet-${i}">Copy<span class="visually-hidden"> ${e(title)}</span></button>`,
    )
    .join('');
}

export function tenantPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  publishableKey: string | undefined;
  authUrl: string;
  alert?: Alert;
}): string {
  const t = p.tenant;
  const body = `<section class="card"><h2>Keys for your app</h2>
${copyable('Tenant id', t.id, 'tenant-id')}
${p.publishableKey ? copyable('Publishable key', p.publishableKey, 'publishable-key') : '<p>No live publishable key: create one in API Keys.</p>'}
</section>
<section><h2>Settings</h2><form method="post" action="${tenantPath(t.id)}" class="card">${csrfField(p.viewer.csrf)}
${field({ name: 'name', label: 'Name', value: t.name, required: true })}
${select('plan', 'Plan', [...(p.viewer.superuser ? PLANS : [t.plan])], t.plan)}
${field({ name: 'rps', label: 'Custom limit: requests per second', type: 'number', value: t.limits.rps, hint: 'Enterprise plan only; other plans use their fixed limits.', attrs: ` min="1" max="${defaults.tenants.customRateMax.rps}"` })}
${field({ name: 'rpm', label: 'Custom limit: requests per minute', type: 'number', value: t.limits.rpm, attrs: ` min="1" max="${defaults.tenants.customRateMax.rpm}"` })}
${textarea({ name: 'allowedOrigins', label: 'Allowed origins', value: t.allowedOrigins.join('\n'), hint: 'One origin per line, e.g. https://app.example.com. http only for localhost on development tenants.' })}
${field({ name: 'accessTokenTtl', label: 'Token lifetime (seconds)', type: 'number', value: t.accessTokenTtl, attrs: ` min="${defaults.tenants.accessTokenTtlSeconds.min}" max="${defaults.tenants.accessTokenTtlSeconds.max}"` })}
${checkbox('requireEmailVerification', 'Require e-mail verification', t.requireEmailVerification)}
${checkbox('passwordEnabled', 'Password sign-in', t.passwordEnabled)}
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
