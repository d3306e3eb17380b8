import { defaults } from '../config/defaults.js';
import type { Factor } from '../modules/mfa/index.js';
import { layout, type PageContext } from './hosted.js';
import { type AccountPage, staleNotice } from './hosted-account.js';
import { type Html, html } from './html.js';
import { type Alert, alertBox, csrfField, field, when } from './kit.js';
import { recoveryCodesList, totpEnrolment } from './mfa.js';

/**
 * The /account sections of the second factors and the password (docs/design.md §13):
 * authenticator apps (set up, remove), recovery codes (how many are left, new ones) and the
 * password (change). Changes need a recent sign-in; without one each section says how.
 */

type Section = Pick<AccountPage, 'query' | 'csrf' | 'recent'>;

const post = (p: Section, path: string, button: string, cls = 'secondary', label = '') =>
  html`<form method="post" action="${path}?${p.query}">${csrfField(p.csrf)}<button type="submit" class="${cls}">${button}${label && html`<span class="visually-hidden"> ${label}</span>`}</button></form>`;

export function totpSection(p: Section, factors: Factor[]): Html {
  const apps = factors.filter((f) => f.type === 'totp' && f.confirmed);
  const items = apps.map(
    (a) => html`<li>
<p class="name">${a.name}</p>
<p class="hint">Added ${when(a.createdAt)}; last used ${a.lastUsedAt ? when(a.lastUsedAt) : 'never'}.</p>
${p.recent && post(p, `/account/factors/${a.id}/remove`, 'Remove', 'danger', a.name)}
</li>`,
  );
  const room = apps.length < defaults.mfa.maxTotpFactors;
  return html`<section aria-labelledby="totp-heading">
<h2 id="totp-heading">Authenticator app</h2>
<p class="hint">A code from an app on your phone, asked for after your password.</p>
${apps.length > 0 ? html`<ul class="factors">${items}</ul>` : html`<p>You have no authenticator app set up.</p>`}
${staleNotice(p, 'add or remove an authenticator app')}${p.recent && room && post(p, '/account/totp', apps.length > 0 ? 'Set up another app' : 'Set up an authenticator app')}
</section>`;
}

export function recoveryCodesSection(p: Section, factors: Factor[]): Html {
  const codes = factors.find((f) => f.type === 'recovery_code');
  const hasApp = factors.some((f) => (f.type === 'totp' && f.confirmed) || f.type === 'passkey');
  const left = codes?.remaining ?? 0;
  const status = !hasApp
    ? html`<p>Recovery codes come with an authenticator app or a passkey.</p>`
    : html`<p>${left === 0 ? 'You have no recovery codes left.' : `${left} of ${defaults.mfa.recoveryCodes} codes left.`}</p>`;
  return html`<section aria-labelledby="codes-heading">
<h2 id="codes-heading">Recovery codes</h2>
<p class="hint">Single-use codes for when you cannot use your app or passkey. New codes replace the old ones.</p>
${status}${hasApp && staleNotice(p, 'make new recovery codes')}${hasApp && p.recent && post(p, '/account/recovery-codes', 'Make new codes')}
</section>`;
}

export function passwordSection(
  p: Section & { alert?: Alert; invalid?: string },
  hasPassword: boolean,
): Html {
  if (!hasPassword)
    return html`<section aria-labelledby="password-heading">
<h2 id="password-heading">Password</h2>
<p>You sign in without a password.</p>
</section>`;
  const input = (name: string, label: string, autocomplete: string, hint?: string) =>
    field({
      name,
      id: name,
      label,
      type: 'password',
      autocomplete,
      required: true,
      hint,
      invalid: p.invalid === name,
    });
  const form =
    p.recent &&
    html`<form method="post" action="/account/password?${p.query}" novalidate>
${csrfField(p.csrf)}
${input('current', 'Current password', 'current-password')}
${input('password', 'New password', 'new-password', `At least ${defaults.password.minLength} characters.`)}
${input('confirm', 'New password again', 'new-password')}
<button type="submit" class="secondary">Change password</button>
</form>`;
  return html`<section aria-labelledby="password-heading">
<h2 id="password-heading">Password</h2>
${staleNotice(p, 'change your password')}${form}
</section>`;
}

/** `/account`'s setup of an authenticator app (its own page: the QR code needs the room). */
export function accountAppPage(p: {
  ctx: PageContext;
  query: string;
  enrolment: Parameters<typeof totpEnrolment>[0];
}): Html {
  return layout(
    p.ctx,
    'Set up an authenticator app',
    html`${totpEnrolment(p.enrolment)}
<nav><a href="/account?${p.query}">Back to your account</a></nav>`,
  );
}

/** New recovery codes, shown once on their own page. */
export function accountCodesPage(p: {
  ctx: PageContext;
  query: string;
  codes: string[];
  alert?: Alert;
}): Html {
  return layout(
    p.ctx,
    'Your recovery codes',
    html`${alertBox(p.alert)}${recoveryCodesList(p.codes, p.ctx.tenant?.name ?? 'your account')}
<nav><a href="/account?${p.query}">Back to your account</a></nav>`,
  );
}
