import type { ProfileOutcome, ProviderSettingsView } from '../../social/index.js';
import type { Tenant } from '../../tenants/index.js';
import {
  type Alert,
  checkbox,
  copyable,
  csrfField,
  e,
  field,
  layout,
  tenantPath,
  textarea,
  type Viewer,
} from './kit.js';
import { reauthField } from './sign-in.js';

export interface ProviderPanel {
  id: string;
  name: string;
  callbackUrl: string;
  settings: ProviderSettingsView | undefined;
  /** This panel's own answer after a save that failed. */
  alert?: Alert;
}

function panel(p: { viewer: Viewer; tenant: Tenant; reauth: boolean }, pr: ProviderPanel): string {
  const s = pr.settings;
  const base = `${tenantPath(p.tenant.id, 'social')}/${pr.id}`;
  const saved = s?.hasSecret
    ? 'Saved. Leave empty to keep it; type a new one to replace it.'
    : 'Not set yet.';
  const credentials =
    pr.id === 'apple'
      ? `${field({ name: 'teamId', label: 'Team ID', value: s?.teamId })}
${field({ name: 'keyId', label: 'Key ID', value: s?.keyId })}
${textarea({ name: 'privateKey', label: 'Private key', hint: `The .p8 file's text; the server signs each short-lived client secret with it. ${saved}` })}`
      : field({
          name: 'clientSecret',
          label: 'Client secret',
          type: 'password',
          autocomplete: 'new-password',
          hint: saved,
        });
  const audience =
    pr.id === 'microsoft'
      ? field({
          name: 'audience',
          label: 'Audience',
          value: s?.audience ?? 'common',
          hint: 'common, organizations, consumers, or your directory (tenant) id.',
        })
      : '';
  const notYet = s?.enabled ? '' : ` Users cannot sign in with ${e(pr.name)} until it is Enabled.`;
  const test = s?.hasSecret
    ? `<form method="post" action="${base}/test">${csrfField(p.viewer.csrf)}<button type="submit" class="plain">Test sign-in<span class="visually-hidden"> with ${e(pr.name)}</span></button></form>
<p class="hint">Runs the real ${e(pr.name)} sign-in with the saved credentials and shows what it returns; creates nothing.${notYet}</p>`
    : '<p class="hint">Test sign-in works once the credentials are saved, Enabled or not.</p>';
  // Field ids must be unique on the page: each panel's fields live in their own form, so
  // the ids carry the provider.
  const scoped = (html: string) => html.replaceAll('"f-', `"${pr.id}-`);
  return `<section class="card" aria-labelledby="h-${pr.id}"><h2 id="h-${pr.id}">${e(pr.name)}</h2>
${pr.alert ? `<div class="alert ${pr.alert.kind}" role="alert">${e(pr.alert.message)}${pr.alert.details?.length ? `<ul>${pr.alert.details.map((d) => `<li>${e(d)}</li>`).join('')}</ul>` : ''}</div>` : ''}
${copyable('Callback URL', pr.callbackUrl, `${pr.id}-callback`)}
<form method="post" action="${base}">${csrfField(p.viewer.csrf)}
${scoped(`${checkbox('enabled', 'Enabled', s?.enabled ?? false)}
${field({ name: 'clientId', label: 'Client ID', value: s?.clientId })}
${credentials}
${audience}
${reauthField(p.reauth)}`)}
<button type="submit">Save ${e(pr.name)}</button></form>
${test}</section>`;
}

export function socialPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  panels: ProviderPanel[];
  reauth: boolean;
  alert?: Alert;
}): string {
  return layout({
    viewer: p.viewer,
    title: 'Social Login',
    top: 'tenants',
    tenant: { tenant: p.tenant, section: 'social' },
    alert: p.alert,
    body: `<p>Register each callback URL with its provider, then enter the credentials it gives you.</p>${p.panels.map((pr) => panel(p, pr)).join('')}`,
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

export function testResultPage(p: {
  viewer: Viewer;
  tenant: Tenant;
  providerName: string;
  result: TestResult;
}): string {
  const r = p.result;
  const body = r.ok
    ? `<div class="alert notice" role="status">${e(p.providerName)} signed you in. Nothing was created or changed.</div>
<h2>Profile returned</h2><dl class="card">
<dt>Issuer</dt><dd><code>${e(r.profile.issuer)}</code></dd>
<dt>Subject</dt><dd><code>${e(r.profile.subject)}</code></dd>
<dt>E-mail</dt><dd>${e(r.profile.email ?? '— (none shared)')}</dd>
<dt>E-mail verified by the provider</dt><dd>${r.profile.emailVerified ? 'yes' : 'no'}</dd>
<dt>Name</dt><dd>${e(r.profile.name ?? '—')}</dd></dl>
<h2>Outcome</h2><p class="card"><strong>${e(OUTCOME[r.outcome.action])}</strong>${
        r.outcome.action === 'refuse'
          ? `: ${e(r.outcome.reason)}`
          : r.outcome.action === 'create'
            ? ` for ${e(r.outcome.email)}.`
            : `: <a href="${tenantPath(p.tenant.id, 'users')}/${e(r.outcome.userId)}">${e(r.outcome.email)}</a>.`
      }</p>`
    : `<div class="alert error" role="alert">The test did not get a profile: ${e(r.message)}</div>`;
  return layout({
    viewer: p.viewer,
    title: `Test sign-in: ${p.providerName}`,
    top: 'tenants',
    tenant: { tenant: p.tenant, section: 'social' },
    body: `${body}<p><a href="${tenantPath(p.tenant.id, 'social')}">Back to Social Login</a></p>`,
  });
}
