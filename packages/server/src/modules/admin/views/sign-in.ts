import { type Alert, alertBox, barePage, csrfField, e, field } from './kit.js';

export function signInPage(p: {
  nonce: string;
  csrf: string;
  next: string;
  email?: string;
  alert?: Alert;
}): string {
  return barePage(
    p.nonce,
    'Sign in to the admin area',
    `${alertBox(p.alert)}<form method="post" action="/admin/sign-in">
${csrfField(p.csrf)}<input type="hidden" name="next" value="${e(p.next)}">
${field({ name: 'email', label: 'E-mail address', type: 'email', value: p.email, required: true, autocomplete: 'username', attrs: p.email ? '' : ' autofocus' })}
${field({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'current-password', attrs: p.email ? ' autofocus' : '' })}
<button type="submit">Sign in</button>
</form>`,
  );
}

/** The password field a sensitive form carries when the last sign-in is too old. */
export function reauthField(needed: boolean): string {
  if (!needed) return '';
  return `<div class="alert notice" role="status">Your last sign-in is more than 10 minutes old: type your password again to do this.</div>
${field({ name: 'reauth_password', label: 'Your password', type: 'password', required: true, autocomplete: 'current-password' })}`;
}
