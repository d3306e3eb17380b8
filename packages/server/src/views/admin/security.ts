import type { MfaPolicy } from '../../config/defaults.js';
import type { Tenant } from '../../modules/tenants/index.js';
import { type Html, html } from '../html.js';
import { type Alert, checkbox, csrfField } from '../kit.js';
import { layout, tenantPath, type Viewer } from './layout.js';

/** The Security form as typed: a refused policy is shown unchosen, not as the saved one. */
export interface SecurityForm {
  mfaPolicy: string;
  passkeysEnabled: boolean;
}

const POLICIES: readonly (readonly [MfaPolicy, string, string])[] = [
  ['off', 'Off', 'No second factors: nobody is asked for a code after signing in.'],
  [
    'optional',
    'Optional',
    'Users may add an authenticator app; whoever has one is asked for a code at each sign-in.',
  ],
  [
    'required',
    'Required',
    'Every user sets up a second factor at their next sign-in, before getting a token.',
  ],
];

/** Security (docs/design.md §13): the second-factor policy and the passkey switch. */
export function securityPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  form?: SecurityForm;
  alert?: Alert;
}): Html {
  const t = p.tenant;
  const values = p.form ?? { mfaPolicy: t.mfaPolicy, passkeysEnabled: t.passkeysEnabled };
  const policy = html`<fieldset class="modes"><legend>Second factors</legend>${POLICIES.map(
    ([value, label, hint]) =>
      html`<label class="inline" for="mfa-${value}"><input type="radio" id="mfa-${value}" name="mfaPolicy" value="${value}"${values.mfaPolicy === value && html` checked`} aria-describedby="mfa-${value}-hint"> ${label}</label><p class="hint" id="mfa-${value}-hint">${hint}</p>`,
  )}</fieldset>`;
  const form = html`<form id="security" method="post" action="${tenantPath(t.id, 'security')}" class="card">${csrfField(p.viewer.csrf)}
${policy}
${checkbox({ name: 'passkeysEnabled', label: 'Passkeys', checked: values.passkeysEnabled, hint: 'Users may add passkeys on their account page and sign in with one instead of a password.' })}
<button type="submit">Save security</button></form>`;
  return layout({
    viewer: p.viewer,
    title: 'Security',
    top: 'tenants',
    tenant: { tenant: t, section: 'security' },
    alert: p.alert,
    body: html`${form}<p class="hint">A user who lost a device: reset the factor on their page under <a href="${tenantPath(t.id, 'users')}">Users</a>; under Required they set up a new one at their next sign-in.</p>`,
  });
}
