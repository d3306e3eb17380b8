import { defaults } from '../../config/defaults.js';
import type { App } from '../../modules/oauth/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import type { AppType } from '../../storage/index.js';
import { type Html, html } from '../html.js';
import { type Alert, copyable, csrfField, field, select, table, textarea, when } from '../kit.js';
import { layout, tenantPath, type Viewer } from './layout.js';
import { reauthField } from './sign-in.js';

/** The create and edit forms as typed: refused values are shown again, not the saved ones. */
export interface AppForm {
  name: string;
  type: string;
  redirectUris: string;
  postLogoutRedirectUris: string;
}

/** The grace periods offered when a secret is rotated (docs/design.md §14), default first. */
export const GRACE_CHOICES: readonly (readonly [string, string, number])[] = [
  ['24h', '24 hours', 24 * 3_600_000],
  ['1h', '1 hour', 3_600_000],
  ['7d', '7 days', 7 * 86_400_000],
  ['0', 'None: the old secret stops working now', 0],
];

const TYPES: readonly (readonly [AppType, string, string])[] = [
  [
    'web',
    'Web server app (web)',
    'A server that keeps a client secret (shown once): sign-in with the authorization code flow.',
  ],
  [
    'spa',
    'Single-page app (spa)',
    'Runs in the browser: a public client, no secret; PKCE protects its codes.',
  ],
  [
    'native',
    'Native or desktop app (native)',
    'A public client, no secret; redirect URIs may be http://127.0.0.1 or a scheme such as com.example.app:/callback.',
  ],
  [
    'm2m',
    'Machine to machine (m2m)',
    'A service that gets tokens for itself with its client secret (client credentials); no one signs in, no redirect URIs.',
  ],
];

const TYPE_NAMES: Record<AppType, string> = {
  web: 'web (confidential)',
  spa: 'spa (public)',
  native: 'native (public)',
  m2m: 'm2m (confidential)',
};

export const appsPath = (tenantId: string, appId?: string) =>
  `${tenantPath(tenantId, 'apps')}${appId ? `/${appId}` : ''}`;

/** The issuer of a tenant's OpenID Provider and its discovery document (docs/design.md §14). */
function providerUrls(tenant: Tenant, authUrl: string): Html {
  const issuer = `${authUrl}/t/${tenant.id}`;
  return html`${copyable('Issuer', issuer, 'issuer')}
${copyable('Discovery URL', `${issuer}/.well-known/openid-configuration`, 'discovery')}`;
}

const uriList = (uris: string[]) =>
  uris.length ? uris.map((u, i) => html`${i > 0 && html`<br>`}<code>${u}</code>`) : html`&mdash;`;

const lines = (uris: string[]) => uris.join('\n');

const uriHint =
  'One per line, matched exactly. https; http only for localhost on development tenants (native apps: also http://127.0.0.1 and com.example.app:/callback). No # fragment.';

function uriFields(form: AppForm, idPrefix: string): Html {
  return html`${textarea({ name: 'redirectUris', id: `${idPrefix}-redirectUris`, label: 'Redirect URIs', value: form.redirectUris, hint: `Where sign-in returns. ${uriHint}` })}
${textarea({ name: 'postLogoutRedirectUris', id: `${idPrefix}-postLogoutRedirectUris`, label: 'Post-logout redirect URIs', value: form.postLogoutRedirectUris, hint: 'Where sign-out may return; optional, the same rules.' })}`;
}

const nameField = (form: AppForm, idPrefix: string) =>
  field({
    name: 'name',
    id: `${idPrefix}-name`,
    label: 'Name',
    value: form.name,
    required: true,
    hint: 'Shown to people when they sign in.',
    attrs: { maxlength: defaults.oauth.appNameMaxLength },
  });

/** Applications: a tenant's OAuth clients, its issuer, and the create form. */
export function appsPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  apps: App[];
  authUrl: string;
  reauth: boolean;
  form?: AppForm;
  alert?: Alert;
}): Html {
  const t = p.tenant;
  const form = p.form ?? { name: '', type: 'web', redirectUris: '', postLogoutRedirectUris: '' };
  const rows = p.apps.map((a) => [
    html`<a href="${appsPath(t.id, a.id)}">${a.name}</a>`,
    html`<code class="short">${a.id}</code>`,
    html`<code class="kind">${a.type}</code>`,
    uriList(a.redirectUris),
    when(a.createdAt),
  ]);
  const types = html`<fieldset class="modes"><legend>Type</legend>${TYPES.map(
    ([value, label, hint]) =>
      html`<label class="inline" for="type-${value}"><input type="radio" id="type-${value}" name="type" value="${value}"${form.type === value && html` checked`} aria-describedby="type-${value}-hint"> ${label}</label><p class="hint" id="type-${value}-hint">${hint}</p>`,
  )}</fieldset>`;
  const create = html`<form method="post" action="${appsPath(t.id)}" class="card" aria-labelledby="create-app">${csrfField(p.viewer.csrf)}
<h3 id="create-app">Create an application</h3>
${nameField(form, 'new')}
${types}
${uriFields(form, 'new')}
${p.reauth && html`<p class="hint">A web or m2m app's client secret is shown when it is made:</p>`}${reauthField(p.reauth)}
<button type="submit">Create application</button></form>`;
  const body = html`<section class="card" aria-labelledby="provider"><h2 id="provider">This tenant's OpenID Provider</h2>
<p class="hint">Give your apps' OpenID Connect or OAuth library the issuer (or the discovery URL) and the app's client ID.</p>
${providerUrls(t, p.authUrl)}</section>
${table('Applications', ['Name', 'Client ID', 'Type', 'Redirect URIs', 'Created'], rows)}
${create}`;
  return layout({
    viewer: p.viewer,
    title: 'Applications',
    top: 'tenants',
    tenant: { tenant: t, section: 'apps' },
    alert: p.alert,
    body,
  });
}

/** A client secret just made (by creation or rotation), shown this once. */
export interface ShownSecret {
  secret: string;
  rotated: boolean;
}

function secretCard(app: App, shown: ShownSecret): Html {
  const old = !shown.rotated
    ? undefined
    : app.previousSecretExpiresAt
      ? html`<p>The old secret keeps working until ${when(app.previousSecretExpiresAt)}: give your servers the new one before then.</p>`
      : html`<p>The old secret has stopped working.</p>`;
  return html`<section class="card" aria-labelledby="new-secret-heading"><h2 id="new-secret-heading">${shown.rotated ? 'The new client secret' : 'Your client secret'}</h2>
<p>Copy it now: it is shown only this once, and only a hash of it is kept.</p>${old}
<p class="secret"><code id="new-secret">${shown.secret}</code></p>
<button type="button" class="plain" data-copy="new-secret">Copy<span class="visually-hidden"> the client secret</span></button></section>`;
}

/** One application: its ids and URLs to copy, the edit form, secret rotation, deletion. */
export function appPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  app: App;
  authUrl: string;
  reauth: boolean;
  shown?: ShownSecret;
  form?: AppForm;
  alert?: Alert;
}): Html {
  const { app, tenant: t } = p;
  const base = appsPath(t.id, app.id);
  const form = p.form ?? {
    name: app.name,
    type: app.type,
    redirectUris: lines(app.redirectUris),
    postLogoutRedirectUris: lines(app.postLogoutRedirectUris),
  };
  const facts = html`<dl class="facts"><dt>Type</dt><dd>${TYPE_NAMES[app.type]}</dd>
<dt>Created</dt><dd>${when(app.createdAt)}</dd>
${app.previousSecretExpiresAt && html`<dt>Old secret</dt><dd>accepted until ${when(app.previousSecretExpiresAt)}</dd>`}</dl>`;
  const details = html`<section class="card" aria-labelledby="details"><h2 id="details">Details for your app</h2>
${copyable('Client ID', app.id, 'client-id')}
${providerUrls(t, p.authUrl)}
${facts}</section>`;
  const edit = html`<form method="post" action="${base}" class="card" aria-labelledby="edit-app">${csrfField(p.viewer.csrf)}
<h2 id="edit-app">Name and redirect URIs</h2>
${nameField(form, 'edit')}
${app.type === 'm2m' ? html`<p class="hint">An m2m app signs no one in: it has no redirect URIs.</p>` : uriFields(form, 'edit')}
<button type="submit">Save application</button></form>`;
  const rotate =
    app.confidential &&
    html`<form method="post" action="${base}/rotate-secret" class="card" aria-labelledby="rotate">${csrfField(p.viewer.csrf)}
<h2 id="rotate">Client secret</h2>
<p class="hint">A new secret is shown once. The old one can keep working for a while, so that your servers can be given the new one first.</p>
${select({ name: 'grace', label: 'Keep the old secret working for', options: GRACE_CHOICES.map(([value, text]) => [value, text] as const), value: '24h' })}
${reauthField(p.reauth, 'rotate')}
<button type="submit">Rotate secret</button></form>`;
  const remove = html`<form method="get" action="${base}/delete" class="card" aria-labelledby="delete-app">
<h2 id="delete-app">Delete</h2>
<p class="hint">Its client ID stops working; you are asked to confirm first.</p>
<button type="submit" class="danger">Delete application</button></form>`;
  return layout({
    viewer: p.viewer,
    title: app.name,
    top: 'tenants',
    tenant: { tenant: t, section: 'apps' },
    alert: p.alert,
    body: html`${p.shown && secretCard(app, p.shown)}${details}${edit}${rotate}${remove}
<p><a href="${appsPath(t.id)}">All applications</a></p>`,
  });
}

/** The confirmation asked before an application is deleted (it works without the script). */
export function deleteAppPage(p: { viewer: Viewer; tenant: Tenant; app: App }): Html {
  const { app, tenant: t } = p;
  const base = appsPath(t.id, app.id);
  return layout({
    viewer: p.viewer,
    title: `Delete ${app.name}?`,
    top: 'tenants',
    tenant: { tenant: t, section: 'apps' },
    body: html`<div class="alert error" role="alert">Deleted, its client ID <code>${app.id}</code> stops working at once: no one can sign in through it${app.confidential && ', its secret is refused'}, and its codes, refresh tokens and grants are deleted. Access tokens it already holds work until they expire. This cannot be undone.</div>
<div class="row"><form method="post" action="${base}/delete">${csrfField(p.viewer.csrf)}<button type="submit" class="danger">Delete ${app.name}</button></form>
<a href="${base}">Keep the application</a></div>`,
  });
}
