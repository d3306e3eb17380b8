import { textOn } from '../../hosted/index.js';
import type { Tenant } from '../../tenants/index.js';
import { type Alert, csrfField, e, field, layout, tenantPath, type Viewer } from './kit.js';

export const DEFAULT_COLOR = '#4f46e5';

export function brandingPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  providers: { id: string; name: string }[];
  /** The real hosted page for this tenant, when it has a publishable key and an origin. */
  hostedUrl: string | undefined;
  form?: { name: string; logoUrl: string; primaryColor: string };
  alert?: Alert;
}): string {
  const t = p.tenant;
  const values = p.form ?? {
    name: t.name,
    logoUrl: t.branding.logoUrl ?? '',
    primaryColor: t.branding.primaryColor ?? DEFAULT_COLOR,
  };
  const color = /^#[0-9a-fA-F]{6}$/.test(values.primaryColor) ? values.primaryColor : DEFAULT_COLOR;
  const logo = values.logoUrl.startsWith('https://')
    ? `<img class="pv-logo" data-pv="logo" src="${e(values.logoUrl)}" alt="">`
    : '<img class="pv-logo" data-pv="logo" alt="" hidden>';
  const buttons = [
    ...p.providers.map((pr) => `<span class="pv-button">Continue with ${e(pr.name)}</span>`),
    t.passwordEnabled ? '<span class="pv-button pv-primary">Continue with e-mail</span>' : '',
  ].join('');
  const preview = `<style nonce="${e(p.viewer.nonce)}">.pv-primary{background:${color};color:${textOn(color)}}</style>
<div id="preview" class="grid">
<figure class="preview"><figcaption>Hosted sign-in page</figcaption><div class="pv-card">${logo}<p data-pv="name">${e(values.name)}</p><p><strong>Sign in</strong></p><span class="pv-button pv-primary">Sign in</span></div></figure>
<figure class="preview"><figcaption>Script buttons (<code>latchkey.mount</code>)</figcaption><div class="pv-card">${logo}<p data-pv="name">${e(values.name)}</p>${buttons}</div></figure>
</div>`;
  const form = `<form method="post" action="${tenantPath(t.id, 'branding')}" class="card">${csrfField(p.viewer.csrf)}
${field({ name: 'name', label: 'Name', value: values.name, required: true })}
${field({ name: 'logoUrl', label: 'Logo URL', type: 'url', value: values.logoUrl, hint: 'https only; shown above the sign-in form. Empty: no logo.', attrs: ' pattern="https://.*"' })}
${field({ name: 'primaryColor', label: 'Primary color', type: 'color', value: color })}
<button type="submit">Save branding</button></form>`;
  const open = p.hostedUrl
    ? `<p><a href="${e(p.hostedUrl)}">Open the hosted sign-in page</a></p>`
    : '';
  return layout({
    viewer: p.viewer,
    title: 'Branding',
    top: 'tenants',
    tenant: { tenant: t, section: 'branding' },
    alert: p.alert,
    body: `${form}<h2>Preview</h2>${preview}${open}`,
  });
}
