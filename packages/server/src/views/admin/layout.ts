import type { Tenant } from '../../modules/tenants/index.js';
import { type Child, type Html, html } from '../html.js';
import { type Alert, alertBox, csrfField, documentOf } from '../kit.js';
import { ADMIN_STYLES } from '../styles.js';

/** The signed-in admin a page is drawn for. */
export interface Viewer {
  email: string;
  superuser: boolean;
  nonce: string;
  csrf: string;
}

export type TenantSection =
  | 'settings'
  | 'branding'
  | 'social'
  | 'security'
  | 'keys'
  | 'apps'
  | 'webhooks'
  | 'users';
type TopSection = 'tenants' | 'audit' | 'outbox';

function topNav(current: TopSection | undefined): Html {
  const links: [TopSection, string, string][] = [
    ['tenants', 'Tenants', '/admin/tenants'],
    ['audit', 'Audit log', '/admin/audit'],
    ['outbox', 'Outbox', '/admin/outbox'],
  ];
  return html`<nav aria-label="Main"><ul>${links.map(
    ([id, text, href]) =>
      html`<li><a href="${href}"${id === current && html` aria-current="page"`}>${text}</a></li>`,
  )}</ul></nav>`;
}

/** The names of a tenant's sections (docs/design.md §12), in the order of its navigation. */
export const SECTION_NAMES: Record<TenantSection, string> = {
  settings: 'Settings',
  branding: 'Branding',
  social: 'Social Login',
  security: 'Security',
  keys: 'API Keys',
  apps: 'Applications',
  webhooks: 'Webhooks',
  users: 'Users',
};
const SECTION_PATHS: Record<TenantSection, string> = {
  settings: '',
  branding: '/branding',
  social: '/social',
  security: '/security',
  keys: '/keys',
  apps: '/apps',
  webhooks: '/webhooks',
  users: '/users',
};
export const tenantPath = (tenantId: string, section: TenantSection = 'settings') =>
  `/admin/tenants/${tenantId}${SECTION_PATHS[section]}`;

function tenantNav(tenant: Tenant, current: TenantSection): Html {
  const items = (Object.keys(SECTION_NAMES) as TenantSection[]).map(
    (id) =>
      html`<li><a href="${tenantPath(tenant.id, id)}"${id === current && html` aria-current="page"`}>${SECTION_NAMES[id]}</a></li>`,
  );
  return html`<p class="crumb"><a href="/admin/tenants">Tenants</a> / ${tenant.name} <span class="badge">${tenant.environment}</span></p>
<nav class="sub" aria-label="Tenant"><ul>${items}</ul></nav>`;
}

export interface LayoutInput {
  viewer: Viewer;
  title: string;
  body: Child;
  top?: TopSection;
  tenant?: { tenant: Tenant; section: TenantSection };
  alert?: Alert;
}

/** A page of the signed-in area: the top bar, the tenant's navigation, the page. */
export function layout(p: LayoutInput): Html {
  const nonce = p.viewer.nonce;
  return documentOf({
    title: `${p.title} · Latchkey admin`,
    nonce,
    styles: ADMIN_STYLES,
    referrer: 'same-origin',
    body: html`<header class="top"><a class="brand" href="/admin/tenants">Latchkey admin</a>${topNav(p.top)}
<div class="who"><span>${p.viewer.email}${p.viewer.superuser && ' (superuser)'}</span><form method="post" action="/admin/sign-out">${csrfField(p.viewer.csrf)}<button type="submit">Sign out</button></form></div>
</header>
<main>
${p.tenant && tenantNav(p.tenant.tenant, p.tenant.section)}
<h1>${p.title}</h1>
${alertBox(p.alert, 'alert')}
${p.body}
</main>
<script nonce="${nonce}" src="/admin/assets/admin.js"></script>`,
  });
}

/** A page outside the signed-in area (sign-in, refusals): one narrow card. */
export function barePage(nonce: string, title: string, body: Child, head?: Html): Html {
  return documentOf({
    title: `${title} · Latchkey admin`,
    nonce,
    styles: ADMIN_STYLES,
    referrer: 'same-origin',
    head,
    body: html`<main class="narrow"><p class="product">Latchkey admin</p><h1>${title}</h1>${body}</main>`,
  });
}
