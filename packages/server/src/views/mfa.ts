import QRCode from 'qrcode';
import { defaults } from '../config/defaults.js';
import { layout, type PageContext, passkeyBox, passkeyScript } from './hosted.js';
import { type Html, html, trusted } from './html.js';
import { type Alert, alertBox, csrfField, field, hiddenFields } from './kit.js';

/**
 * The second-factor pieces of the hosted pages (docs/design.md §13): the code form of
 * `/sign-in/verify`, an authenticator app's enrolment (QR code, secret, first code) and the
 * recovery codes shown once, used by `/sign-in/setup` and `/account` alike. No script:
 * the QR code is drawn on the server as inline SVG (presentation attributes only, which
 * the pages' CSP allows), the codes download through a `data:` link.
 */

/** The QR code of an `otpauth://` URI, as inline SVG with its text alternative. */
export async function qrCode(uri: string): Promise<Html> {
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  // The library's own markup, from the URI the server made: no user text reaches it raw.
  return trusted(
    svg.replace(
      '<svg ',
      '<svg role="img" aria-label="QR code for your authenticator app" focusable="false" ',
    ),
  );
}

/** A base32 secret grouped in fours, as people type it into an app. */
const grouped = (secret: string) => secret.replace(/(.{4})(?=.)/g, '$1 ');

const codeField = (invalid: boolean) =>
  field({
    name: 'code',
    id: 'code',
    label: 'Authentication code',
    autocomplete: 'one-time-code',
    required: true,
    hint: `The ${defaults.mfa.totp.digits}-digit code your authenticator app shows now.`,
    attrs: { inputmode: 'numeric', maxlength: 8, spellcheck: 'false' },
    autofocus: true,
    invalid,
  });

/**
 * An authenticator app to set up: scan the QR code or type the secret, then confirm with
 * a first code (posted with `factor` to `action`).
 */
export function totpEnrolment(p: {
  qr: Html;
  secret: string;
  factorId: string;
  action: string;
  csrf: string;
  alert?: Alert;
  button?: string;
}): Html {
  return html`<ol class="steps">
<li>Open an authenticator app on your phone (such as 1Password, Google Authenticator or Microsoft Authenticator) and add an account by scanning this QR code:
<div class="qr">${p.qr}</div></li>
<li>Or type this key into the app:
<p class="secret"><code>${grouped(p.secret)}</code></p></li>
<li>Enter the code the app shows to finish.</li>
</ol>
${alertBox(p.alert, 'alert')}<form method="post" action="${p.action}" novalidate>
${csrfField(p.csrf)}${hiddenFields({ factor: p.factorId })}
${codeField(!!p.alert)}
<button type="submit">${p.button ?? 'Confirm'}</button>
</form>`;
}

/** Ten recovery codes, shown once, with a download of the same as a text file. */
export function recoveryCodesList(codes: string[], tenantName: string): Html {
  const file = `Recovery codes for ${tenantName}\nEach code works once, in place of a code of your authenticator app.\n\n${codes.join('\n')}\n`;
  return html`<div class="alert notice" role="status">Save these recovery codes somewhere safe. Each works once, if you lose your phone. They are shown only now.</div>
<ol class="codes">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ol>
<a class="provider" download="recovery-codes.txt" href="data:text/plain;charset=utf-8,${encodeURIComponent(file)}">Download the codes</a>`;
}

/**
 * `/sign-in/verify`: a code of the user's authenticator app, one of their passkeys (with
 * JavaScript and WebAuthn), or one of their recovery codes.
 */
export function verifyPage(p: {
  ctx: PageContext;
  query: string;
  csrf: string;
  recovery: boolean;
  /** Whether the user has an authenticator app. */
  app: boolean;
  /** Whether the user has a passkey the page may offer. */
  passkey: boolean;
  /** Whether the user has recovery codes left to offer. */
  recoveryOffered: boolean;
  alert?: Alert;
}): Html {
  const codeForm = p.recovery || p.app;
  const input = p.recovery
    ? field({
        name: 'code',
        id: 'code',
        label: 'Recovery code',
        required: true,
        hint: 'One of the codes you saved when you set up two-step verification, like abcd-efgh-ijkl. Each works once.',
        attrs: { spellcheck: 'false', autocapitalize: 'none', maxlength: 20 },
        autofocus: true,
        invalid: p.alert?.kind === 'error',
      })
    : codeForm && codeField(p.alert?.kind === 'error');
  const other = p.recovery
    ? (p.app || p.passkey) &&
      html`<a href="/sign-in/verify?${p.query}">${p.app ? 'Use your authenticator app' : 'Use your passkey'}</a>`
    : p.recoveryOffered &&
      html`<a href="/sign-in/verify?${p.query}&amp;method=recovery">Use a recovery code</a>`;
  const passkey =
    p.passkey &&
    !p.recovery &&
    passkeyBox({
      kind: 'sign-in',
      options: `/sign-in/verify/passkey/options?${p.query}`,
      verify: `/sign-in/verify/passkey?${p.query}`,
      csrf: p.csrf,
      button: 'Use your passkey',
    });
  const lead = p.recovery
    ? 'Enter one of your recovery codes.'
    : p.app
      ? 'Open your authenticator app and enter the code it shows for this account.'
      : p.passkey
        ? 'Confirm it is you with your passkey.'
        : `Your second step is a passkey, and passkeys are turned off here. ${p.recoveryOffered ? 'Use one of your recovery codes, or ask' : 'Ask'} the administrator of this application to reset your second factor.`;
  return layout(
    p.ctx,
    'Two-step verification',
    html`${alertBox(p.alert, 'alert')}<p>${lead}</p>
${
  codeForm &&
  html`<form method="post" action="/sign-in/verify?${p.query}" novalidate>
${csrfField(p.csrf)}${p.recovery && hiddenFields({ method: 'recovery' })}
${input}
<button type="submit">Verify</button>
</form>`
}${passkey}${passkey && !p.app && html`<p class="hint" data-passkey-fallback>A passkey needs a browser that supports passkeys, with JavaScript on.</p>`}
<nav>${other}<a href="/sign-in?${p.query}">Back to sign in</a></nav>`,
    passkey ? passkeyScript(p.ctx) : undefined,
  );
}

/** `/sign-in/setup`: the `required` policy asks for an authenticator app before any token. */
export function setupPage(p: {
  ctx: PageContext;
  query: string;
  enrolment: Parameters<typeof totpEnrolment>[0];
}): Html {
  return layout(
    p.ctx,
    'Set up two-step verification',
    html`<p>${p.ctx.tenant?.name ?? 'This service'} asks for a second step at sign-in: a code from an authenticator app.</p>
${totpEnrolment(p.enrolment)}
<nav><a href="/sign-in?${p.query}">Back to sign in</a></nav>`,
  );
}

/** After setup: the recovery codes, once, and the way on. */
export function recoveryCodesPage(p: {
  ctx: PageContext;
  codes: string[];
  action: string;
  csrf: string;
}): Html {
  return layout(
    p.ctx,
    'Your recovery codes',
    html`${recoveryCodesList(p.codes, p.ctx.tenant?.name ?? 'your account')}
<form method="post" action="${p.action}">${csrfField(p.csrf)}<button type="submit">Continue</button></form>`,
  );
}
