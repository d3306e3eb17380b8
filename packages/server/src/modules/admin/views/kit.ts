import escapeHtml from 'escape-html';
import type { Tenant } from '../../tenants/index.js';

/** Escapes any value for HTML text and attribute values. */
export const e = (value: unknown) => escapeHtml(String(value ?? ''));

export interface Viewer {
  email: string;
  superuser: boolean;
  nonce: string;
  csrf: string;
}

export interface Alert {
  kind: 'error' | 'notice';
  message: string;
  details?: string[];
}

export type TenantSection = 'settings' | 'branding' | 'social' | 'keys' | 'users';
type TopSection = 'tenants' | 'audit' | 'outbox';

const STYLES = `*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f6f8fa;color:#1f2328}
header.top{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem;padding:.6rem 1rem;background:#1f2328;color:#fff}
header.top a{color:#fff}
.brand{font-weight:700;text-decoration:none}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem .9rem}
header.top .who{margin-left:auto;display:flex;align-items:center;gap:.75rem;font-size:.9rem}
header.top button{margin:0;padding:.3rem .7rem;background:#fff;color:#1f2328}
main{max-width:62rem;margin:0 auto;padding:1rem}
h1{font-size:1.6rem;margin:.5rem 0 1rem}
h2{font-size:1.2rem;margin:1.75rem 0 .5rem}
.crumb{margin:.25rem 0;color:#57606a}
nav.sub{border-bottom:1px solid #d0d7de;margin-bottom:1rem;padding-bottom:.5rem}
a{color:#0550ae}
[aria-current=page]{font-weight:700;text-decoration:none}
header.top [aria-current=page]{text-decoration:underline}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:1rem;margin:0 0 1rem}
label{display:block;font-weight:600;margin:.8rem 0 .25rem}
label.inline{display:flex;gap:.5rem;align-items:center;font-weight:600}
input,select,textarea{width:100%;max-width:36rem;padding:.5rem .6rem;font:inherit;color:inherit;border:1px solid #6e7781;border-radius:6px;background:#fff}
input[type=checkbox]{width:auto}
input[type=color]{width:4rem;height:2.4rem;padding:.1rem}
textarea{min-height:6rem;font-family:ui-monospace,monospace;font-size:.85rem}
.hint{font-size:.875rem;color:#57606a;margin:.2rem 0 0}
button{margin-top:1rem;padding:.5rem 1rem;font:inherit;font-weight:600;border:0;border-radius:6px;background:#0550ae;color:#fff;cursor:pointer}
button.danger{background:#a40e26}
button.plain{background:#eaeef2;color:#1f2328;margin:0}
:focus-visible{outline:3px solid #fb8f44;outline-offset:2px}
.row{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.row form{margin:0}
.row button{margin:0}
code,.mono{font-family:ui-monospace,monospace;font-size:.88rem;overflow-wrap:anywhere}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.6rem;overflow-x:auto;font-size:.82rem;white-space:pre-wrap;overflow-wrap:anywhere}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #d0d7de;vertical-align:top}
.alert{border-radius:6px;padding:.6rem .9rem;margin:0 0 1rem}
.error{background:#ffebe9;color:#82071e;border:1px solid #ff8182}
.notice{background:#ddf4ff;color:#0a3069;border:1px solid #54aeff}
.alert ul{margin:.25rem 0 0;padding-left:1.25rem}
.secret{font-size:1rem;background:#fff8c5;border:1px solid #d4a72c;padding:.5rem;border-radius:6px}
.badge{display:inline-block;padding:0 .4rem;border-radius:1rem;background:#eaeef2;font-size:.8rem}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(17rem,1fr));gap:1rem}
.preview{margin:0;border:1px dashed #6e7781;border-radius:8px;padding:.75rem;background:#f6f8fa}
.preview figcaption{font-weight:600;margin:0 0 .5rem}
.preview iframe{display:block;width:100%;height:40rem;border:1px solid #d0d7de;border-radius:6px;background:#f3f4f6}
.preview-grid{grid-template-columns:minmax(0,3fr) minmax(0,2fr);align-items:start}
@media (max-width:56rem){.preview-grid{grid-template-columns:minmax(0,1fr)}}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
form.card>button{display:block}
@media (max-width:40rem){main{padding:.6rem}header.top .who{margin-left:0}
table,tbody,tr,td{display:block}thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
tr{border-bottom:2px solid #d0d7de;padding:.3rem 0}td{border:0;padding:.15rem .3rem}
td[data-label]::before{content:attr(data-label) ": ";font-weight:600}}`;

function topNav(current: TopSection | undefined): string {
  const links: [TopSection, string, string][] = [
    ['tenants', 'Tenants', '/admin/tenants'],
    ['audit', 'Audit log', '/admin/audit'],
    ['outbox', 'Outbox', '/admin/outbox'],
  ];
  return `<nav aria-label="Main"><ul>${links
    .map(
      ([id, text, href]) =>
        `<li><a href="${href}"${id === current ? ' aria-current="page"' : ''}>${text}</a></li>`,
    )
    .join('')}</ul></nav>`;
}

/** The names of docs/design.md §12.2, in the order of the tenant's navigation. */
export const SECTION_NAMES: Record<TenantSection, string> = {
  settings: 'Settings',
  branding: 'Branding',
  social: 'Social Login',
  keys: 'API Keys',
  users: 'Users',
};
const SECTION_PATHS: Record<TenantSection, string> = {
  settings: '',
  branding: '/branding',
  social: '/social',
  keys: '/keys',
  users: '/users',
};
export const tenantPath = (tenantId: string, section: TenantSection = 'settings') =>
  `/admin/tenants/${tenantId}${SECTION_PATHS[section]}`;

function tenantNav(tenant: Tenant, current: TenantSection): string {
  const items = (Object.keys(SECTION_NAMES) as TenantSection[]).map(
    (id) =>
      `<li><a href="${tenantPath(tenant.id, id)}"${id === current ? ' aria-current="page"' : ''}>${SECTION_NAMES[id]}</a></li>`,
  );
  return `<p class="crumb"><a href="/admin/tenants">Tenants</a> / ${e(tenant.name)} <span class="badge">${e(tenant.environment)}</span></p>
<nav class="sub" aria-label="Tenant"><ul>${items.join('')}</ul></nav>`;
}

export function alertBox(a: Alert | undefined): string {
  if (!a) return '';
  const list = a.details?.length
    ? `<ul>${a.details.map((d) => `<li>${e(d)}</li>`).join('')}</ul>`
    : '';
  return `<div class="alert ${a.kind}" role="${a.kind === 'error' ? 'alert' : 'status'}">${e(a.message)}${list}</div>`;
}

export interface LayoutInput {
  viewer: Viewer;
  title: string;
  body: string;
  top?: TopSection;
  tenant?: { tenant: Tenant; section: TenantSection };
  alert?: Alert;
}

export function layout(p: LayoutInput): string {
  const nonce = e(p.viewer.nonce);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${e(p.title)} · Latchkey admin</title>
<style nonce="${nonce}">${STYLES}</style>
</head>
<body>
<header class="top"><a class="brand" href="/admin/tenants">Latchkey admin</a>${topNav(p.top)}
<div class="who"><span>${e(p.viewer.email)}${p.viewer.superuser ? ' (superuser)' : ''}</span><form method="post" action="/admin/sign-out">${csrfField(p.viewer.csrf)}<button type="submit">Sign out</button></form></div>
</header>
<main>
${p.tenant ? tenantNav(p.tenant.tenant, p.tenant.section) : ''}
<h1>${e(p.title)}</h1>
${alertBox(p.alert)}
${p.body}
</main>
<script nonce="${nonce}" src="/admin/assets/admin.js"></script>
</body>
</html>`;
}

/** A page outside the signed-in area (sign-in itself). */
export function barePage(nonce: string, title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="same-origin">${head}
<title>${e(title)} · Latchkey admin</title>
<style nonce="${e(nonce)}">${STYLES}
main{max-width:26rem;margin:2.5rem auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:1.5rem}</style>
</head>
<body><main><h1>${e(title)}</h1>${body}</main></body>
</html>`;
}

export const csrfField = (csrf: string) => `<input type="hidden" name="_csrf" value="${e(csrf)}">`;

export interface FieldInput {
  name: string;
  label: string;
  type?: string;
  value?: string | number | null;
  hint?: string;
  required?: boolean;
  autocomplete?: string;
  /** Extra attributes, already safe (e.g. ` min="60"`). */
  attrs?: string;
}

export function field(f: FieldInput): string {
  const id = `f-${f.name}`;
  const hint = f.hint ? `<p class="hint" id="${id}-hint">${e(f.hint)}</p>` : '';
  return `<label for="${id}">${e(f.label)}</label>
<input id="${id}" name="${e(f.name)}" type="${f.type ?? 'text'}"${f.value !== undefined && f.value !== null ? ` value="${e(f.value)}"` : ''}${f.required ? ' required' : ''} autocomplete="${f.autocomplete ?? 'off'}"${f.hint ? ` aria-describedby="${id}-hint"` : ''}${f.attrs ?? ''}>${hint}`;
}

export function textarea(f: FieldInput): string {
  const id = `f-${f.name}`;
  const hint = f.hint ? `<p class="hint" id="${id}-hint">${e(f.hint)}</p>` : '';
  return `<label for="${id}">${e(f.label)}</label>
<textarea id="${id}" name="${e(f.name)}"${f.hint ? ` aria-describedby="${id}-hint"` : ''}${f.attrs ?? ''}>${e(f.value ?? '')}</textarea>${hint}`;
}

export function checkbox(name: string, label: string, checked: boolean, hint?: string): string {
  const id = `f-${name}`;
  return `<label class="inline" for="${id}"><input type="checkbox" id="${id}" name="${e(name)}" value="on"${checked ? ' checked' : ''}${hint ? ` aria-describedby="${id}-hint"` : ''}> ${e(label)}</label>${hint ? `<p class="hint" id="${id}-hint">${e(hint)}</p>` : ''}`;
}

export function select(name: string, label: string, options: string[], value: string): string {
  const id = `f-${name}`;
  return `<label for="${id}">${e(label)}</label>
<select id="${id}" name="${e(name)}">${options
    .map((o) => `<option value="${e(o)}"${o === value ? ' selected' : ''}>${e(o)}</option>`)
    .join('')}</select>`;
}

/** A value with a copy button (the button works through admin.js). */
export function copyable(label: string, value: string, id: string): string {
  return `<div class="row"><span>${e(label)}</span> <code id="${e(id)}">${e(value)}</code><button type="button" class="plain" data-copy="${e(id)}">Copy<span class="visually-hidden"> ${e(label)}</span></button></div>`;
}

/** A one-button form (with CSRF) that changes something. */
export function actionButton(
  csrf: string,
  action: string,
  text: string,
  options: { danger?: boolean; confirm?: string } = {},
): string {
  return `<form method="post" action="${e(action)}"${options.confirm ? ` data-confirm="${e(options.confirm)}"` : ''}>${csrfField(csrf)}<button type="submit"${options.danger ? ' class="danger"' : ' class="plain"'}>${e(text)}</button></form>`;
}

/** A table that scrolls sideways on a phone; the wrapper is focusable so keyboards can scroll it. */
export function table(caption: string, headings: string[], rows: string[][]): string {
  if (rows.length === 0) return `<p>${e(caption)}: none.</p>`;
  return `<div class="scroll" tabindex="0" role="region" aria-label="${e(caption)}"><table><caption class="visually-hidden">${e(caption)}</caption><thead><tr>${headings
    .map((h) => `<th scope="col">${e(h)}</th>`)
    .join('')}</tr></thead><tbody>${rows
    .map(
      (r) =>
        `<tr>${r.map((c, i) => `<td${headings[i] ? ` data-label="${e(headings[i])}"` : ''}>${c}</td>`).join('')}</tr>`,
    )
    .join('')}</tbody></table></div>`;
}

/** A time for people: UTC, to the minute, with the exact value in a <time>. */
export const when = (iso: string | null | undefined) =>
  iso ? `<time datetime="${e(iso)}">${e(iso.slice(0, 16).replace('T', ' '))} UTC</time>` : '—';
