import escapeHtml from 'escape-html';
import { defaults } from '../../config/defaults.js';
import type { Tenant } from '../tenants/index.js';

export interface Provider {
  id: string;
  name: string;
}

export interface PageContext {
  tenant: Tenant | undefined;
  nonce: string;
}

const DEFAULT_BRAND = '#4f46e5';
const e = (value: unknown) => escapeHtml(String(value ?? ''));

/** WCAG 2.x relative luminance of a #rrggbb colour. */
function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** Black or white, whichever reads better on the brand colour (WCAG contrast ratio). */
export function textOn(hex: string): '#000000' | '#ffffff' {
  const l = luminance(hex);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? '#000000' : '#ffffff';
}

function styles(brand: string): string {
  return `:root{--brand:${brand};--on-brand:${textOn(brand)}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f4f6;color:#1f2328}
main{max-width:26rem;margin:2.5rem auto;padding:2rem 1.5rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.14)}
@media (max-width:30rem){main{margin:0;border-radius:0;min-height:100vh;box-shadow:none}}
.logo{display:block;max-height:3rem;max-width:12rem;margin:0 auto 1rem}
.tenant{text-align:center;color:#57606a;margin:0 0 .25rem;font-size:.95rem}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 1.25rem;text-align:center}
label{display:block;font-weight:600;margin:1rem 0 .3rem}
input{width:100%;padding:.65rem .75rem;font:inherit;color:inherit;border:1px solid #6e7781;border-radius:8px;background:#fff}
input:focus{outline:3px solid var(--brand);outline-offset:1px}
.hint{font-size:.875rem;color:#57606a;margin:.25rem 0 0}
button{display:block;width:100%;margin-top:1.5rem;padding:.75rem;font:inherit;font-weight:600;border:0;border-radius:8px;background:var(--brand);color:var(--on-brand);cursor:pointer}
button:focus-visible,a:focus-visible{outline:3px solid #1f2328;outline-offset:2px}
.provider{display:block;text-align:center;text-decoration:none;padding:.7rem;border-radius:8px;font-weight:600;background:#fff;color:#1f2328;border:1px solid #6e7781;margin-top:.75rem}
.alert{border-radius:8px;padding:.75rem 1rem;margin:0 0 1rem}
.error{background:#ffebe9;color:#82071e;border:1px solid #ff8182}
.notice{background:#ddf4ff;color:#0a3069;border:1px solid #54aeff}
.alert ul{margin:.25rem 0 0;padding-left:1.25rem}
nav{margin-top:1.5rem;text-align:center;font-size:.95rem;display:flex;flex-direction:column;gap:.5rem}
a{color:#0550ae}
.or{text-align:center;color:#57606a;margin:1.25rem 0 0}`;
}

export function layout(ctx: PageContext, title: string, body: string): string {
  const brand = ctx.tenant?.branding.primaryColor ?? DEFAULT_BRAND;
  const logo = ctx.tenant?.branding.logoUrl;
  // The logo is decorative: the name follows as text (read once, and shown if the logo fails).
  const header = ctx.tenant
    ? `${logo ? `<img class="logo" src="${e(logo)}" alt="">` : ''}<p class="tenant">${e(ctx.tenant.name)}</p>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${e(title)}${ctx.tenant ? ` · ${e(ctx.tenant.name)}` : ''}</title>
<style nonce="${e(ctx.nonce)}">${styles(brand)}</style>
</head>
<body>
<main>
${header}
<h1>${e(title)}</h1>
${body}
</main>
</body>
</html>`;
}

export interface Alert {
  kind: 'error' | 'notice';
  message: string;
  details?: string[];
}

function alert(a: Alert | undefined): string {
  if (!a) return '';
  const list = a.details?.length
    ? `<ul>${a.details.map((d) => `<li>${e(d)}</li>`).join('')}</ul>`
    : '';
  // role=alert: screen readers announce it as soon as the page loads.
  return `<div class="alert ${a.kind}" role="${a.kind === 'error' ? 'alert' : 'status'}" id="alert">${e(a.message)}${list}</div>`;
}

function field(opts: {
  name: string;
  label: string;
  type: string;
  autocomplete: string;
  value?: string;
  hint?: string;
  autofocus?: boolean;
  invalid?: boolean;
  minlength?: number;
}): string {
  const hintId = opts.hint ? `${opts.name}-hint` : '';
  const described = [hintId, opts.invalid ? 'alert' : ''].filter(Boolean).join(' ');
  return `<label for="${opts.name}">${e(opts.label)}</label>
<input id="${opts.name}" name="${opts.name}" type="${opts.type}" autocomplete="${opts.autocomplete}" required${
    opts.minlength ? ` minlength="${opts.minlength}"` : ''
  }${opts.value ? ` value="${e(opts.value)}"` : ''}${opts.autofocus ? ' autofocus' : ''}${opts.invalid ? ' aria-invalid="true"' : ''}${
    described ? ` aria-describedby="${described}"` : ''
  }>${opts.hint ? `<p class="hint" id="${hintId}">${e(opts.hint)}</p>` : ''}`;
}

const csrfField = (csrf: string) => `<input type="hidden" name="_csrf" value="${e(csrf)}">`;

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

export function signInPage(
  p: FormPage & { providers: Provider[]; passwordEnabled: boolean },
): string {
  const providers = p.providers
    .map(
      (provider) =>
        // A link, not a form: Chrome applies form-action to the redirect to the provider.
        `<a class="provider" href="/oauth/${e(provider.id)}/start?q=${e(encodeURIComponent(p.query))}">Continue with ${e(provider.name)}</a>`,
    )
    .join('');
  const password = p.passwordEnabled
    ? `<form method="post" action="/sign-in?${e(p.query)}" novalidate>
${csrfField(p.csrf)}
${field({ name: 'email', label: 'E-mail address', type: 'email', autocomplete: 'username', value: p.email, autofocus: !p.invalid || p.invalid === 'email', invalid: p.invalid === 'email' })}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', autofocus: p.invalid === 'password', invalid: p.invalid === 'password' })}
<button type="submit">Sign in</button>
</form>`
    : '';
  return layout(
    p.ctx,
    'Sign in',
    `${alert(p.alert)}${providers}${providers && password ? '<p class="or">or</p>' : ''}${password}
<nav><a href="/sign-up?${e(p.query)}">Create an account</a><a href="/forgot-password?${e(p.query)}">Forgot your password?</a></nav>`,
  );
}

export function signUpPage(p: FormPage & { name?: string }): string {
  return layout(
    p.ctx,
    'Create your account',
    `${alert(p.alert)}<form method="post" action="/sign-up?${e(p.query)}" novalidate>
${csrfField(p.csrf)}
${field({ name: 'email', label: 'E-mail address', type: 'email', autocomplete: 'email', value: p.email, autofocus: !p.invalid || p.invalid === 'email', invalid: p.invalid === 'email' })}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', hint: `At least ${defaults.password.minLength} characters.`, minlength: defaults.password.minLength, autofocus: p.invalid === 'password', invalid: p.invalid === 'password' })}
<button type="submit">Create account</button>
</form>
<nav><a href="/sign-in?${e(p.query)}">Already have an account? Sign in</a></nav>`,
  );
}

export function forgotPage(p: FormPage): string {
  return layout(
    p.ctx,
    'Reset your password',
    `${alert(p.alert ?? { kind: 'notice', message: 'Enter your e-mail address and we will send you a link to choose a new password.' })}<form method="post" action="/forgot-password?${e(p.query)}" novalidate>
${csrfField(p.csrf)}
${field({ name: 'email', label: 'E-mail address', type: 'email', autocomplete: 'email', value: p.email, autofocus: true, invalid: p.invalid === 'email' })}
<button type="submit">Send the link</button>
</form>
<nav><a href="/sign-in?${e(p.query)}">Back to sign in</a></nav>`,
  );
}

export function resetPage(p: {
  ctx: PageContext;
  token: string;
  csrf: string;
  alert?: Alert;
}): string {
  return layout(
    p.ctx,
    'Choose a new password',
    `${alert(p.alert)}<form method="post" action="/reset-password" novalidate>
${csrfField(p.csrf)}<input type="hidden" name="token" value="${e(p.token)}">
${field({ name: 'password', label: 'New password', type: 'password', autocomplete: 'new-password', hint: `At least ${defaults.password.minLength} characters.`, minlength: defaults.password.minLength, autofocus: true, invalid: !!p.alert })}
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
): string {
  return layout(
    ctx,
    title,
    `${alert({ kind, message })}${link ? `<nav><a href="${e(link.href)}">${e(link.text)}</a></nav>` : ''}`,
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
}): string {
  const hidden = Object.entries(p.hidden ?? {})
    .map(([name, value]) => `<input type="hidden" name="${e(name)}" value="${e(value)}">`)
    .join('');
  return layout(
    p.ctx,
    p.title,
    `<p>${e(p.message)}</p><form method="post" action="${e(p.action)}">${csrfField(p.csrf)}${hidden}<button type="submit" autofocus>${e(p.button)}</button></form>${
      p.link ? `<nav><a href="${e(p.link.href)}">${e(p.link.text)}</a></nav>` : ''
    }`,
  );
}
