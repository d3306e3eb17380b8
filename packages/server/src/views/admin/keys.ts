import type { ApiKey } from '../../modules/keys/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import { type Html, html } from '../html.js';
import { type Alert, actionButton, csrfField, field, table, when } from '../kit.js';
import { layout, tenantPath, type Viewer } from './layout.js';
import { reauthField } from './sign-in.js';

/** What stops working when a tenant has no live publishable key left (said before it happens). */
export const LAST_PUBLISHABLE_EFFECT =
  'This is the last live publishable key. Revoked, sign-in stops at once everywhere it is used: hosted sign-in page links with pk= answer an error, and the script tag (latchkey.js) and React apps (LatchkeyProvider) that carry it cannot sign anyone in, until you create a new publishable key and put it in them.';

const keyLabel = (k: ApiKey) => `${k.display}${k.name ? ` (${k.name})` : ''}`;

/** Live keys first, each group oldest first (as listed). */
const liveFirst = (keys: ApiKey[]) => [
  ...keys.filter((k) => !k.revokedAt),
  ...keys.filter((k) => k.revokedAt),
];

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
  const csrf = p.viewer.csrf;
  const publishable = liveFirst(p.keys.filter((k) => k.kind === 'publishable'));
  const secret = liveFirst(p.keys.filter((k) => k.kind === 'secret'));
  const livePublishable = publishable.filter((k) => !k.revokedAt).length;
  const revoke = (k: ApiKey, confirm: string | undefined) =>
    k.revokedAt
      ? html`revoked ${when(k.revokedAt)}`
      : actionButton(csrf, `${base}/${k.id}/revoke`, 'Revoke', { danger: true, confirm });
  const nameOf = (k: ApiKey) => k.name ?? html`&mdash;`;

  // The last live publishable key is confirmed on a page of its own (it works without
  // the script), which says what stops working; the others by the script's dialog.
  const publishableRows = publishable.map((k) => [
    html`<code>${k.publishableKey ?? k.display}</code>`,
    nameOf(k),
    when(k.createdAt),
    when(k.lastUsedAt),
    revoke(
      k,
      livePublishable > 1
        ? `Revoke publishable key ${k.display}? Hosted page links, script tags and React apps that use this key stop signing in; your other live publishable key keeps working.`
        : undefined,
    ),
  ]);
  const secretRows = secret.map((k) => [
    html`<code class="short">${k.display}</code>`,
    nameOf(k),
    k.scopes.join(' ') || html`&mdash;`,
    when(k.lastUsedAt),
    revoke(
      k,
      `Revoke secret key ${keyLabel(k)}? Servers that call the API with it are refused (401) at once.`,
    ),
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
  const publishableForm = html`<form method="post" action="${base}" class="card" aria-labelledby="create-publishable">${csrfField(csrf)}<input type="hidden" name="kind" value="publishable">
<h3 id="create-publishable">Create a publishable key</h3>
${field({ name: 'keyName', id: 'pk-name', label: 'Name', hint: 'For you: the site or app that will use it.', attrs: { maxlength: 100 } })}
<button type="submit">Create publishable key</button></form>`;
  const secretForm = html`<form method="post" action="${base}" class="card" aria-labelledby="create-secret">${csrfField(csrf)}<input type="hidden" name="kind" value="secret">
<h3 id="create-secret">Create a secret key</h3>
${field({ name: 'keyName', id: 'sk-name', label: 'Name', hint: 'For you: where this key is deployed.', attrs: { maxlength: 100 } })}
<fieldset><legend>Scopes</legend>${scopeBoxes}</fieldset>
${reauthField(p.reauth)}
<button type="submit">Create secret key</button></form>`;
  const body = html`${created}
<section aria-labelledby="publishable-keys"><h2 id="publishable-keys">Publishable keys</h2>
<p class="hint">Public, for browsers: hosted sign-in page links (<code>pk=</code>), the script tag and React apps. They can only sign people in.</p>
${livePublishable === 0 && html`<div class="alert error" role="alert">This tenant has no live publishable key: the hosted sign-in page, the script tag and React apps cannot sign anyone in. Create one below.</div>`}
${table('Publishable keys', ['Key', 'Name', 'Created', 'Last used', ''], publishableRows)}
${publishableForm}</section>
<section aria-labelledby="secret-keys"><h2 id="secret-keys">Secret keys</h2>
<p class="hint">For your servers only (the REST API), with the scopes you give them; listed by prefix and last four characters.</p>
${table('Secret keys', ['Key', 'Name', 'Scopes', 'Last used', ''], secretRows)}
${secretForm}</section>`;
  return layout({
    viewer: p.viewer,
    title: 'API Keys',
    top: 'tenants',
    tenant: { tenant: p.tenant, section: 'keys' },
    alert: p.alert,
    body,
  });
}

/** The confirmation asked before the last live publishable key is revoked. */
export function revokeLastPublishablePage(p: { viewer: Viewer; tenant: Tenant; key: ApiKey }) {
  const base = tenantPath(p.tenant.id, 'keys');
  return layout({
    viewer: p.viewer,
    title: 'Revoke the last publishable key?',
    top: 'tenants',
    tenant: { tenant: p.tenant, section: 'keys' },
    body: html`<div class="alert error" role="alert">${LAST_PUBLISHABLE_EFFECT}</div>
<p>Key: <code>${p.key.publishableKey ?? p.key.display}</code>${p.key.name && html` (${p.key.name})`}</p>
<div class="row"><form method="post" action="${base}/${p.key.id}/revoke">${csrfField(p.viewer.csrf)}<input type="hidden" name="confirm" value="last-publishable"><button type="submit" class="danger">Revoke it anyway</button></form>
<a href="${base}">Keep the key</a></div>`,
  });
}
