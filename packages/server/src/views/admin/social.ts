import type { ProfileOutcome, ProviderSettingsView } from '../../modules/social/index.js';
import type { Tenant } from '../../modules/tenants/index.js';
import { type Html, html } from '../html.js';
import { type Alert, alertBox, copyable, csrfField, field, textarea } from '../kit.js';
import { barePage, layout, tenantPath, type Viewer } from './layout.js';
import { reauthField } from './sign-in.js';

export interface ProviderPanel {
  id: string;
  name: string;
  callbackUrl: string;
  settings: ProviderSettingsView | undefined;
  /** This panel's own answer after a save that failed. */
  alert?: Alert;
}

function panel(p: { viewer: Viewer; tenant: Tenant; reauth: boolean }, pr: ProviderPanel): Html {
  const s = pr.settings;
  const base = `${tenantPath(p.tenant.id, 'social')}/${pr.id}`;
  // Field ids must be unique on the page: each panel's fields live in their own form, so
  // the ids carry the provider.
  const id = (name: string) => `${pr.id}-${name}`;
  const saved = s?.hasSecret
    ? 'Saved. Leave empty to keep it; type a new one to replace it.'
    : 'Not set yet.';
  const credentials =
    pr.id === 'apple'
      ? html`${field({ name: 'teamId', id: id('teamId'), label: 'Team ID', value: s?.teamId })}
${field({ name: 'keyId', id: id('keyId'), label: 'Key ID', value: s?.keyId })}
${textarea({ name: 'privateKey', id: id('privateKey'), label: 'Private key', hint: `The .p8 file's text; the server signs each short-lived client secret with it. ${saved}` })}`
      : field({
          name: 'clientSecret',
          id: id('clientSecret'),
          label: 'Client secret',
          type: 'password',
          autocomplete: 'new-password',
          hint: saved,
        });
  const audience =
    pr.id === 'microsoft' &&
    field({
      name: 'audience',
      id: id('audience'),
      label: 'Audience',
      value: s?.audience ?? 'common',
      hint: 'common, organizations, consumers, or your directory (tenant) id.',
    });
  const mode = s?.mode ?? 'off';
  const development = p.tenant.environment === 'development';
  const notYet = mode === 'off' && ` Users cannot sign in with ${pr.name} until it is Live.`;
  const testButton = html`<form class="test-sign-in" method="post" action="${base}/test">${csrfField(p.viewer.csrf)}<button type="submit" class="plain">Test sign-in<span class="visually-hidden"> with ${pr.name}</span></button></form>`;
  const test =
    mode === 'development' && development
      ? html`${testButton}
<p class="hint"><span class="badge">dev</span> In development mode: opens Latchkey's development page, where you type what ${pr.name} would return, and shows what would happen; creates nothing. No request goes to ${pr.name}.</p>`
      : s?.hasSecret
        ? html`${testButton}
<p class="hint">Runs the real ${pr.name} sign-in with the saved credentials and shows what it returns; creates nothing.${notYet}</p>`
        : html`<p class="hint">Test sign-in works once the credentials are saved, Live or not.</p>`;
  const modes = [
    ['off', 'Off', `Users cannot sign in with ${pr.name}.`],
    [
      'development',
      'Development mode',
      development
        ? `No credentials: the button leads to a Latchkey page where you type the e-mail and name ${pr.name} would return. Nothing goes to ${pr.name}. Whoever reaches that page can sign in as any address: keep this tenant's users to test users, on a server others cannot reach.`
        : 'Only for development tenants: this is a production tenant.',
    ],
    ['live', 'Live', `The real ${pr.name} sign-in, with the credentials below.`],
  ] as const;
  const modeChoice = html`<fieldset class="modes"><legend>Sign-in with ${pr.name}</legend>${modes.map(
    ([value, label, hint]) =>
      html`<label class="inline" for="${id(`mode-${value}`)}"><input type="radio" id="${id(`mode-${value}`)}" name="mode" value="${value}"${mode === value && html` checked`}${value === 'development' && !development && mode !== 'development' && html` disabled`} aria-describedby="${id(`mode-${value}-hint`)}"> ${label}</label><p class="hint" id="${id(`mode-${value}-hint`)}">${hint}</p>`,
  )}</fieldset>`;
  const badge =
    mode === 'development'
      ? html` <span class="badge">dev</span>`
      : mode === 'live'
        ? html` <span class="badge">live</span>`
        : undefined;
  return html`<section class="card" aria-labelledby="h-${pr.id}"><h2 id="h-${pr.id}">${pr.name}${badge}</h2>
${alertBox(pr.alert)}
${copyable('Callback URL', pr.callbackUrl, id('callback'))}
<form method="post" action="${base}">${csrfField(p.viewer.csrf)}
${modeChoice}
${field({ name: 'clientId', id: id('clientId'), label: 'Client ID', value: s?.clientId, hint: 'Needed for Live; development mode uses no credentials.' })}
${credentials}
${audience}
${reauthField(p.reauth, pr.id)}
<button type="submit">Save ${pr.name}</button></form>
${test}</section>`;
}

export function socialPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  panels: ProviderPanel[];
  reauth: boolean;
  alert?: Alert;
}): Html {
  return layout({
    viewer: p.viewer,
    title: 'Social Login',
    top: 'tenants',
    tenant: { tenant: p.tenant, section: 'social' },
    alert: p.alert,
    body: html`<p>Register each callback URL with its provider, then enter the credentials it gives you.</p>${p.panels.map((pr) => panel(p, pr))}`,
  });
}

export type TestResult =
  | {
      ok: true;
      profile: {
        issuer: string;
        subject: string;
        email: string | null;
        emailVerified: boolean;
        name: string | null;
        /** Absent in a result saved before pictures were read. */
        picture?: string | null;
      };
      outcome: ProfileOutcome;
    }
  | { ok: false; message: string };

const OUTCOME: Record<ProfileOutcome['action'], string> = {
  sign_in: 'Would sign in the existing account',
  link: 'Would link this identity to the existing account',
  create: 'Would create a new account',
  refuse: 'Would refuse the sign-in',
};

function outcomeOf(tenant: Tenant, outcome: ProfileOutcome): Html {
  if (outcome.action === 'refuse') return html`: ${outcome.reason}`;
  if (outcome.action === 'create') return html` for ${outcome.email}.`;
  return html`: <a href="${tenantPath(tenant.id, 'users')}/${outcome.userId}">${outcome.email}</a>.`;
}

export function testResultPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  providerName: string;
  result: TestResult;
  /** The profile was typed on development mode's page: no request went to the provider. */
  development?: boolean;
}): Html {
  const r = p.result;
  const signedInBy = p.development
    ? `Development mode: no request went to ${p.providerName}; this is the profile you typed. Nothing was created or changed.`
    : `${p.providerName} signed you in. Nothing was created or changed.`;
  const body = r.ok
    ? html`${alertBox({ kind: 'notice', message: signedInBy })}
<h2>Profile returned</h2><dl class="card">
<dt>Issuer</dt><dd><code>${r.profile.issuer}</code></dd>
<dt>Subject</dt><dd><code>${r.profile.subject}</code></dd>
<dt>E-mail</dt><dd>${r.profile.email ?? '— (none shared)'}</dd>
<dt>E-mail verified by the provider</dt><dd>${r.profile.emailVerified ? 'yes' : 'no'}</dd>
<dt>Name</dt><dd>${r.profile.name ?? '—'}</dd>
<dt>Picture</dt><dd>${r.profile.picture ? html`<code>${r.profile.picture}</code>` : '—'}</dd></dl>
<h2>Outcome</h2><p class="card"><strong>${OUTCOME[r.outcome.action]}</strong>${outcomeOf(p.tenant, r.outcome)}</p>`
    : alertBox({ kind: 'error', message: `The test did not get a profile: ${r.message}` });
  return layout({
    viewer: p.viewer,
    title: `Test sign-in: ${p.providerName}`,
    top: 'tenants',
    tenant: { tenant: p.tenant, section: 'social' },
    body: html`${body}<p><a href="${tenantPath(p.tenant.id, 'social')}">Back to Social Login</a></p>`,
  });
}

/**
 * The page the provider's answer to a test lands on: the admin's SameSite=Strict cookie
 * does not ride a redirect from the provider, so the browser goes on by a same-site step.
 */
export const testFinishedPage = (nonce: string, next: string) =>
  barePage(
    nonce,
    'Test sign-in finished',
    html`<p><a id="next" href="${next}">Show the result</a></p>`,
    html`<meta http-equiv="refresh" content="0;url=${next}">`,
  );
