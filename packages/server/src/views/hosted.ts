import { MARKS } from '@latchkey/js/marks';
import { defaults } from '../config/defaults.js';
import { shownLogo, type Tenant } from '../modules/tenants/index.js';
import { type Child, type Html, html } from './html.js';
import { type Alert, alertBox, csrfField, documentOf, field, hiddenFields, onward } from './kit.js';
import { PASSKEY_SCRIPT_PATH } from './passkey-script.js';
import { DEFAULT_BRAND, hostedStyles } from './styles.js';

/** The hosted pages: sign-in, sign-up, password reset and the one-click pages of mailed links. */

export interface Provider {
  id: string;
  name: string;
  /** Development mode: Latchkey's own page stands in for the provider (marked "dev"). */
  mode?: 'development' | 'live';
}

/**
 * A provider's mark, inline (the page's CSP allows no other image source): the very paths
 * the browser library draws (`@latchkey/js/marks`).
 */
export function providerMark(id: string): Html | undefined {
  const spec = (MARKS as Record<string, string[] | undefined>)[id];
  if (!spec || id === 'email') return undefined;
  const paths: Html[] = [];
  for (let i = 1; i < spec.length; i += 2)
    paths.push(html`<path fill="${spec[i]}" d="${spec[i + 1]}"/>`);
  return html`<svg viewBox="${spec[0]}" aria-hidden="true" focusable="false">${paths}</svg>`;
}

/** The small "dev" mark of a provider in development mode. */
const devTag = html`<span class="tag"><span aria-hidden="true">dev</span><span class="visually-hidden"> (development mode)</span></span>`;

export interface PageContext {
  /** The tenant whose branding the page shows, once known. */
  tenant: Tenant | undefined;
  nonce: string;
}

export function layout(ctx: PageContext, title: string, body: Child, head?: Html): Html {
  const brand = ctx.tenant?.branding.primaryColor ?? DEFAULT_BRAND;
  const logo = ctx.tenant && shownLogo(ctx.tenant);
  // The logo stands for the tenant's name, its alt text: one that fails to load shows the
  // name in its place (no empty band, no name twice). Without a logo, the name as text.
  const header =
    ctx.tenant &&
    (logo
      ? html`<img class="logo" src="${logo}" alt="${ctx.tenant.name}">`
      : html`<p class="tenant">${ctx.tenant.name}</p>`);
  return documentOf({
    title: ctx.tenant ? `${title} · ${ctx.tenant.name}` : title,
    nonce: ctx.nonce,
    styles: hostedStyles(brand),
    referrer: 'no-referrer',
    head,
    body: html`<main>
${header}
<h1>${title}</h1>
${body}
</main>`,
  });
}

export interface FormPage {
  ctx: PageContext;
  /** The hosted request as a query string (pk, redirect_url, state, code_challenge…). */
  query: string;
  csrf: string;
  alert?: Alert;
  email?: string;
  /** Which field the error is about, to focus it. */
  invalid?: 'email' | 'password' | 'name';
}

/** The e-mail field of the hosted forms; focused unless the error is about another field. */
const emailField = (
  p: FormPage,
  autocomplete: 'username' | 'username webauthn' | 'email',
  focus = !p.invalid,
) =>
  field({
    name: 'email',
    id: 'email',
    label: 'E-mail address',
    type: 'email',
    autocomplete,
    required: true,
    value: p.email,
    autofocus: focus || p.invalid === 'email',
    invalid: p.invalid === 'email',
  });

const newPasswordField = (label: string, focus: boolean, invalid: boolean) =>
  field({
    name: 'password',
    id: 'password',
    label,
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    hint: `At least ${defaults.password.minLength} characters.`,
    attrs: { minlength: defaults.password.minLength },
    autofocus: focus,
    invalid,
  });

/** The passkey script, under the page's nonce (the only script of the hosted pages). */
export const passkeyScript = (ctx: PageContext) =>
  html`\n<script src="${PASSKEY_SCRIPT_PATH}" nonce="${ctx.nonce}" defer></script>`;

/**
 * The passkey button of a page and what its script needs (endpoints, CSRF token); hidden
 * until the script finds WebAuthn in the browser, with a place for its error.
 */
export const passkeyBox = (p: {
  kind: 'sign-in' | 'register';
  options: string;
  verify: string;
  csrf: string;
  button: string;
  /** Also offer the passkeys in the e-mail field's autofill (conditional mediation). */
  autofill?: boolean;
}) =>
  html`<div class="passkey" data-passkey="${p.kind}" data-options="${p.options}" data-verify="${p.verify}" data-csrf="${p.csrf}"${p.autofill && html` data-autofill="on"`} hidden><div class="alert error" role="alert" hidden></div><button type="button" class="secondary">${p.button}</button></div>`;

export function signInPage(
  p: FormPage & {
    providers: Provider[];
    passwordEnabled: boolean;
    /** Passkeys offered: the button, and in the e-mail field's autofill. */
    passkeys?: boolean;
  },
): Html {
  // Links, not forms: Chrome applies form-action to the redirect to the provider.
  const providers = p.providers.map(
    (provider) =>
      html`<a class="provider" href="/oauth/${provider.id}/start?q=${encodeURIComponent(p.query)}">${providerMark(provider.id)}<span>Continue with ${provider.name}</span>${provider.mode === 'development' && devTag}</a>`,
  );
  const password =
    p.passwordEnabled &&
    html`<form method="post" action="/sign-in?${p.query}" novalidate>
${csrfField(p.csrf)}
${emailField(p, p.passkeys ? 'username webauthn' : 'username')}
${field({ name: 'password', id: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true, autofocus: p.invalid === 'password', invalid: p.invalid === 'password' })}
<button type="submit">Sign in</button>
</form>`;
  const passkey =
    p.passkeys &&
    passkeyBox({
      kind: 'sign-in',
      options: `/sign-in/passkey/options?${p.query}`,
      verify: `/sign-in/passkey?${p.query}`,
      csrf: p.csrf,
      button: 'Sign in with a passkey',
      autofill: true,
    });
  return layout(
    p.ctx,
    'Sign in',
    html`${alertBox(p.alert, 'alert')}${providers}${providers.length > 0 && password && html`<p class="or">or</p>`}${password}${passkey}
<nav><a href="/sign-up?${p.query}">Create an account</a><a href="/forgot-password?${p.query}">Forgot your password?</a></nav>`,
    p.passkeys ? passkeyScript(p.ctx) : undefined,
  );
}

export function signUpPage(p: FormPage): Html {
  return layout(
    p.ctx,
    'Create your account',
    html`${alertBox(p.alert, 'alert')}<form method="post" action="/sign-up?${p.query}" novalidate>
${csrfField(p.csrf)}
${emailField(p, 'email')}
${newPasswordField('Password', p.invalid === 'password', p.invalid === 'password')}
<button type="submit">Create account</button>
</form>
<nav><a href="/sign-in?${p.query}">Already have an account? Sign in</a></nav>`,
  );
}

export function forgotPage(p: FormPage): Html {
  const intro: Alert = {
    kind: 'notice',
    message: 'Enter your e-mail address and we will send you a link to choose a new password.',
  };
  return layout(
    p.ctx,
    'Reset your password',
    html`${alertBox(p.alert ?? intro, 'alert')}<form method="post" action="/forgot-password?${p.query}" novalidate>
${csrfField(p.csrf)}
${emailField(p, 'email', true)}
<button type="submit">Send the link</button>
</form>
<nav><a href="/sign-in?${p.query}">Back to sign in</a></nav>`,
  );
}

export function resetPage(p: {
  ctx: PageContext;
  token: string;
  csrf: string;
  alert?: Alert;
}): Html {
  return layout(
    p.ctx,
    'Choose a new password',
    html`${alertBox(p.alert, 'alert')}<form method="post" action="/reset-password" novalidate>
${csrfField(p.csrf)}${hiddenFields({ token: p.token })}
${newPasswordField('New password', true, !!p.alert)}
<button type="submit">Save the new password</button>
</form>`,
  );
}

/** A message, and maybe a link onwards (refusals, "check your inbox", "done"). */
export function messagePage(
  ctx: PageContext,
  title: string,
  message: string,
  link?: { href: string; text: string },
  kind: Alert['kind'] = 'notice',
): Html {
  return layout(ctx, title, html`${alertBox({ kind, message }, 'alert')}${onward(link)}`);
}

/**
 * A hosted link that was refused (docs/design.md §4.3): why, the way back to the page the
 * user came from, and, on a development tenant whose allowed origins lack the return
 * address's, how its developer allows it.
 */
export function refusedLinkPage(
  ctx: PageContext,
  p: {
    message: string;
    back: string | undefined;
    allow?: { origin: string; tenantId: string; adminUrl: string };
  },
): Html {
  const fix =
    p.allow &&
    html`<div class="fix"><p>To allow it (development tenants only), run:</p>
<p><code class="command">latchkey tenant update ${p.allow.tenantId} --add-origin ${p.allow.origin}</code></p>
<p>or add <code>${p.allow.origin}</code> to <a href="${p.allow.adminUrl}">Allowed origins</a> in the admin area.</p></div>`;
  const back = p.back ? { href: p.back, text: `Go back to ${new URL(p.back).host}` } : undefined;
  return layout(
    ctx,
    'This sign-in link does not work',
    html`${alertBox({ kind: 'error', message: p.message }, 'alert')}${fix}${back ? onward(back) : html`<p class="hint">Use your browser's Back button to return.</p>`}`,
  );
}

/** One button that POSTs (with CSRF) to `action`, and maybe a link elsewhere. */
export function buttonPage(p: {
  ctx: PageContext;
  title: string;
  message: string;
  action: string;
  csrf: string;
  button: string;
  link?: { href: string; text: string };
  /** Hidden form fields (e.g. a one-time link token). */
  hidden?: Record<string, string>;
}): Html {
  return layout(
    p.ctx,
    p.title,
    html`<p>${p.message}</p><form method="post" action="${p.action}">${csrfField(p.csrf)}${hiddenFields(p.hidden ?? {})}<button type="submit" autofocus>${p.button}</button></form>${onward(p.link)}`,
  );
}

/**
 * Development mode's stand-in for a provider (docs/design.md §20): the person types what
 * the provider would return, and the answer takes the real callback's path.
 */
export function developmentProviderPage(p: {
  ctx: PageContext;
  provider: { id: string; name: string };
  state: string;
  csrf: string;
  email?: string;
  name?: string;
  emailVerified: boolean;
  alert?: Alert;
  invalid?: 'email' | 'name';
  link?: { href: string; text: string };
}): Html {
  const { id, name } = p.provider;
  return layout(
    p.ctx,
    `Continue with ${name}`,
    html`<div class="alert dev" role="note"><strong>Development mode:</strong> no request goes to ${name}; type what ${name} would return.</div>
${alertBox(p.alert, 'alert')}<form method="post" action="/oauth/${id}/development" novalidate>
${csrfField(p.csrf)}${hiddenFields({ state: p.state })}
${field({ name: 'email', id: 'email', label: `E-mail address ${name} returns`, type: 'email', autocomplete: 'email', required: true, value: p.email, autofocus: p.invalid !== 'name', invalid: p.invalid === 'email' })}
${field({ name: 'name', id: 'name', label: 'Name', autocomplete: 'name', value: p.name, hint: 'Optional.', autofocus: p.invalid === 'name', invalid: p.invalid === 'name' })}
<label class="check" for="emailVerified"><input type="checkbox" id="emailVerified" name="emailVerified" value="on"${p.emailVerified && html` checked`} aria-describedby="emailVerified-hint"> ${name} says the address is verified</label>
<p class="hint" id="emailVerified-hint">${name} vouches for the addresses of most accounts. Untick it to see how an address it does not vouch for is handled.</p>
<button type="submit">${providerMark(id)}<span>Continue as this ${name} user</span></button>
</form>${onward(p.link)}`,
  );
}

/** What each scope an app may ask for lets it have, in the words the consent page uses. */
const SCOPE_WORDS: Record<string, string> = {
  openid: 'Know who you are (your account id)',
  email: 'See your e-mail address',
  profile: 'See your name',
  offline_access: 'Stay connected when you are away (a refresh token)',
};

/**
 * The consent page of an OpenID Provider's sign-in (docs/design.md §14): which app asks,
 * what for, as which account, where it returns; Allow or Deny.
 */
export function consentPage(p: {
  ctx: PageContext;
  app: string;
  email: string;
  scopes: string[];
  returnsTo: string;
  action: string;
  csrf: string;
  /** The sign-in page for another account, which comes back here. */
  switchTo: string;
  /** The APIs (RFC 8707 resources) its access token will open, as the user. */
  apis: string[];
  /** It registered itself (RFC 7591): nobody at the tenant vouched for it. */
  registered: boolean;
}): Html {
  const asks = [
    ...p.scopes.map((scope) => SCOPE_WORDS[scope] ?? scope),
    ...p.apis.map((api) => `Use ${api} as you, with your account's permissions`),
  ];
  return layout(
    p.ctx,
    `Allow ${p.app}?`,
    html`<p><strong>${p.app}</strong> asks to:</p>
<ul class="asks">${asks.map((ask) => html`<li>${ask}</li>`)}</ul>
${p.registered && html`<p class="hint">${p.app} registered itself; ${p.ctx.tenant?.name ?? 'this service'} has not checked who made it. Allow it only if you started this sign-in.</p>`}
<p>You are signed in as <strong>${p.email}</strong>. Allowing takes you to ${p.returnsTo}.</p>
<form method="post" action="${p.action}">${csrfField(p.csrf)}<button type="submit" name="decision" value="allow" autofocus>Allow</button><button type="submit" name="decision" value="deny" class="secondary">Deny</button></form>
${onward({ href: p.switchTo, text: 'Use another account' })}`,
  );
}

/**
 * RP-initiated logout's question (docs/design.md §14), around node-oidc-provider's own
 * form (its action and anti-forgery field, `form`): sign out of the tenant, or stay.
 */
export function logoutPage(p: {
  ctx: PageContext;
  form: Html;
  app: string | undefined;
  /** Marks the sign-out as the user's own choice on this page (provider.ts). */
  signOutField: { name: string; value: string };
}): Html {
  const name = p.ctx.tenant?.name ?? 'this service';
  return layout(
    p.ctx,
    'Sign out',
    html`<p>${p.app ? `${p.app} asks to sign you out of ${name} on this browser.` : `Sign out of ${name} on this browser?`}</p>
${p.form}<input type="hidden" form="op.logoutForm" name="${p.signOutField.name}" value="${p.signOutField.value}"><button type="submit" form="op.logoutForm" name="logout" value="yes" autofocus>Sign out</button><button type="submit" form="op.logoutForm" class="secondary">Stay signed in</button>`,
  );
}
