import type { Tenant } from '../../modules/tenants/index.js';
import { type Html, html } from '../html.js';
import { type Alert, csrfField, field } from '../kit.js';
import { DEFAULT_BRAND } from '../styles.js';
import { layout, tenantPath, type Viewer } from './layout.js';

export function brandingPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  providers: { id: string; name: string }[];
  /** The real hosted page for this tenant, when it has a publishable key and an origin. */
  hostedUrl: string | undefined;
  form?: { name: string; logoUrl: string; primaryColor: string };
  alert?: Alert;
}): Html {
  const t = p.tenant;
  const dev = t.environment === 'development';
  const values = p.form ?? {
    name: t.name,
    logoUrl: t.branding.logoUrl ?? '',
    primaryColor: t.branding.primaryColor ?? DEFAULT_BRAND,
  };
  const color = /^#[0-9a-fA-F]{6}$/.test(values.primaryColor) ? values.primaryColor : DEFAULT_BRAND;
  const previewPath = `${tenantPath(t.id, 'branding')}/preview`;
  // What /public/config answers for this tenant: the buttons are drawn from it.
  const config = {
    tenantId: t.id,
    name: t.name,
    environment: t.environment,
    branding: t.branding,
    providers: p.providers,
    passwordEnabled: t.passwordEnabled,
    signInUrl: p.hostedUrl ?? '',
  };
  // The hosted page is the server's own rendering (saved values until admin.js sends the
  // typed ones); the buttons are latchkey.js's own, drawn by its preview build.
  const preview = html`<div class="grid preview-grid">
<figure class="preview"><figcaption id="hosted-caption">Hosted sign-in page</figcaption>
<iframe id="hosted-preview" src="${previewPath}" data-src="${previewPath}" sandbox="" title="Preview of the hosted sign-in page" aria-describedby="hosted-caption"></iframe></figure>
<figure class="preview"><figcaption>Script buttons (<code>latchkey.mount</code>)</figcaption>
<div id="buttons-preview" data-config="${JSON.stringify(config)}"><p class="hint">The buttons are drawn by the browser library; they show when JavaScript runs.</p></div></figure>
</div>
<script nonce="${p.viewer.nonce}" src="/admin/assets/latchkey-preview.js"></script>`;
  const form = html`<form id="branding" method="post" action="${tenantPath(t.id, 'branding')}" class="card">${csrfField(p.viewer.csrf)}
${field({ name: 'name', label: 'Name', value: values.name, required: true })}
${field({ name: 'logoUrl', label: 'Logo URL', type: 'url', value: values.logoUrl, hint: dev ? 'https, or http://localhost and http://127.0.0.1 on this development tenant; shown above the sign-in form. Empty: no logo.' : 'https only; shown above the sign-in form. Empty: no logo.', attrs: { pattern: dev ? 'https://.*|http://(localhost|127\\.0\\.0\\.1)(:.*|/.*)?' : 'https://.*' } })}
${field({ name: 'primaryColor', label: 'Primary color', type: 'color', value: color })}
<button type="submit">Save branding</button></form>`;
  const open =
    p.hostedUrl && html`<p><a href="${p.hostedUrl}">Open the hosted sign-in page</a></p>`;
  return layout({
    viewer: p.viewer,
    title: 'Branding',
    top: 'tenants',
    tenant: { tenant: t, section: 'branding' },
    alert: p.alert,
    body: html`${form}<h2>Preview</h2><p class="hint">As you type, before you save.</p>${preview}${open}`,
  });
}
