import { type Html, html } from '../html.js';
import { type Alert, alertBox, csrfField, field, hiddenFields } from '../kit.js';
import { barePage } from './layout.js';

export function signInPage(p: {
  nonce: string;
  csrf: string;
  next: string;
  email?: string;
  alert?: Alert;
}): Html {
  return barePage(
    p.nonce,
    'Sign in',
    html`${alertBox(p.alert)}<form method="post" action="/admin/sign-in">
${csrfField(p.csrf)}${hiddenFields({ next: p.next })}
${field({ name: 'email', label: 'E-mail address', type: 'email', value: p.email, required: true, autocomplete: 'username', autofocus: !p.email })}
${field({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'current-password', autofocus: !!p.email })}
<button type="submit">Sign in</button>
</form>`,
  );
}

/** The password field a sensitive form carries when the last sign-in is too old. */
export function reauthField(needed: boolean, idPrefix = 'f'): Html | undefined {
  if (!needed) return undefined;
  return html`<div class="alert notice" role="status">Your last sign-in is more than 10 minutes old: type your password again to do this.</div>
${field({ name: 'reauth_password', id: `${idPrefix}-reauth_password`, label: 'Your password', type: 'password', required: true, autocomplete: 'current-password' })}`;
}

/** A refusal or a failure, outside the signed-in layout. */
export const refusalPage = (nonce: string, title: string, message: string) =>
  barePage(
    nonce,
    title,
    html`${alertBox({ kind: 'error', message })}<p><a href="/admin/tenants">Back to the admin area</a></p>`,
  );
