import { defaults } from '../config/defaults.js';
import { layout, type PageContext, passkeyBox, passkeyScript } from './hosted.js';
import { type Html, html } from './html.js';
import { type Alert, alertBox, csrfField, when } from './kit.js';

/**
 * The hosted account page (docs/design.md §13): who is signed in, then one section per kind
 * of factor (passkeys, and the others as they come), each drawn by its own function.
 */

export interface AccountPage {
  ctx: PageContext;
  email: string;
  /** The hosted request as a query string: every form and link keeps it. */
  query: string;
  csrf: string;
  /** Where "Back to the application" leads. */
  back: string;
  /** Whether this browser signed in recently enough to add or remove a factor. */
  recent: boolean;
  alert?: Alert;
  sections: Html[];
  /** The passkey script is loaded (a section has a passkey ceremony). */
  script: boolean;
}

/** Where a browser whose sign-in is too old signs in again, and comes back here. */
const signInAgain = (query: string) => `/sign-in?${query}&prompt=login&return_to=account`;

/** The notice of a section whose changes need a recent sign-in. */
export const staleNotice = (p: Pick<AccountPage, 'query' | 'recent'>, what: string) =>
  !p.recent &&
  html`<p class="alert notice">To ${what}, <a href="${signInAgain(p.query)}">sign in again</a>: your last sign-in on this browser was over ${defaults.mfa.stepUpMs / 60_000} minutes ago.</p>`;

export function accountPage(p: AccountPage): Html {
  return layout(
    p.ctx,
    'Your account',
    html`${alertBox(p.alert, 'alert')}<p>Signed in as <strong>${p.email}</strong>.</p>
<div class="account">${p.sections}</div>
<nav><a href="${p.back}">Back to the application</a><a href="/sign-out?${p.query}">Sign out</a></nav>`,
    p.script ? passkeyScript(p.ctx) : undefined,
  );
}

export interface PasskeyItem {
  id: string;
  name: string;
  synced: boolean;
  createdAt: number;
  lastUsedAt: number | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The passkeys section: each passkey (rename, remove), and "Add a passkey". */
export function passkeySection(
  p: Pick<AccountPage, 'query' | 'csrf' | 'recent'>,
  passkeys: PasskeyItem[],
): Html {
  const items = passkeys.map(
    (k) => html`<li>
<p class="name">${k.name}</p>
<p class="hint">${k.synced ? 'Synced between devices' : 'On one device'}. Added ${when(iso(k.createdAt))}; last used ${k.lastUsedAt === null ? 'never' : when(iso(k.lastUsedAt))}.</p>
<form method="post" action="/account/passkeys/${k.id}/rename?${p.query}">${csrfField(p.csrf)}
<label for="name-${k.id}">Name</label>
<div class="row"><input id="name-${k.id}" name="name" value="${k.name}" required maxlength="${defaults.passkeys.nameMaxLength}" autocomplete="off"><button type="submit" class="secondary">Rename<span class="visually-hidden"> ${k.name}</span></button></div>
</form>${p.recent && html`<form method="post" action="/account/passkeys/${k.id}/remove?${p.query}">${csrfField(p.csrf)}<button type="submit" class="danger">Remove<span class="visually-hidden"> ${k.name}</span></button></form>`}
</li>`,
  );
  const add =
    p.recent &&
    html`${passkeyBox({
      kind: 'register',
      options: `/account/passkeys/options?${p.query}`,
      verify: `/account/passkeys?${p.query}`,
      csrf: p.csrf,
      button: 'Add a passkey',
    })}<p class="hint" data-passkey-fallback>Adding a passkey needs a browser that supports passkeys, with JavaScript on.</p>`;
  return html`<section aria-labelledby="passkeys-heading">
<h2 id="passkeys-heading">Passkeys</h2>
<p class="hint">Sign in with your fingerprint, face or screen lock instead of a password.</p>
${passkeys.length > 0 ? html`<ul class="factors">${items}</ul>` : html`<p>You have no passkeys yet.</p>`}
${staleNotice(p, 'add or remove a passkey')}${add}
</section>`;
}
