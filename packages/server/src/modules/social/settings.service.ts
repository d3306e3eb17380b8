import type { Kysely } from 'kysely';
import { socialDefaults } from '../../config/defaults.js';
import type { SealedStore, SecretBox } from '../../crypto/secret-box.js';
import { type FieldError, LatchkeyError, validationFailed } from '../../errors/index.js';
import type { ProviderSettingsRow, Schema } from '../../storage/index.js';
import { getTenant, type Tenant } from '../tenants/index.js';
import {
  type ExtraSetting,
  PROVIDER_IDS,
  PROVIDERS,
  type ProviderCredentials,
  type ProviderId,
} from './providers/index.js';

/**
 * How a tenant offers a provider: not at all, in development mode (Latchkey's own page
 * stands in for the provider; development tenants only, no credentials), or for real.
 */
export type ProviderMode = 'off' | 'development' | 'live';
export const PROVIDER_MODES: readonly ProviderMode[] = ['off', 'development', 'live'];

export interface ProviderSettingsInput {
  /** Wins over `enabled`; `enabled: true` means live, `false` off. */
  mode?: ProviderMode;
  enabled?: boolean;
  clientId?: string;
  clientSecret?: string;
  /** Which of these a provider takes is in its definition (providers/*.ts). */
  teamId?: string;
  keyId?: string;
  privateKeyPem?: string;
  audience?: string;
}

/** How settings are shown: never the secret itself. */
export interface ProviderSettingsView {
  provider: ProviderId;
  name: string;
  /** True in development mode too. */
  enabled: boolean;
  mode: ProviderMode;
  clientId: string;
  hasSecret: boolean;
  teamId: string | null;
  keyId: string | null;
  audience: string | null;
  updatedAt: string;
}

export function isProviderId(value: string): value is ProviderId {
  return (PROVIDER_IDS as readonly string[]).includes(value);
}

/** The column of each extra setting. */
const COLUMN = { teamId: 'team_id', keyId: 'key_id', audience: 'audience' } as const;
const EXTRA = Object.keys(COLUMN) as ExtraSetting[];

function modeOf(row: Pick<ProviderSettingsRow, 'enabled' | 'development'>): ProviderMode {
  if (row.enabled !== 1) return 'off';
  return row.development === 1 ? 'development' : 'live';
}

function view(row: ProviderSettingsRow): ProviderSettingsView {
  const id = row.provider as ProviderId;
  return {
    provider: id,
    name: PROVIDERS[id].name,
    enabled: row.enabled === 1,
    mode: modeOf(row),
    clientId: row.client_id,
    hasSecret: row.secret_jwe !== null,
    teamId: row.team_id,
    keyId: row.key_id,
    audience: row.audience,
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** What a provider secret is sealed for: the SecretBox purpose, and the subject below. */
const PURPOSE = 'provider-secret';
const subject = (tenantId: string, provider: ProviderId) => `${tenantId}/${provider}`;

/** Every tenant's provider secrets, sealed with the master secret. */
export const sealedProviderSecrets: SealedStore = {
  what: 'provider secrets',
  async list(db) {
    const rows = await db
      .selectFrom('provider_settings')
      .select(['tenant_id', 'provider', 'secret_jwe'])
      .where('secret_jwe', 'is not', null)
      .orderBy('updated_at', 'desc')
      .execute();
    return rows.map((r) => ({
      id: `${r.tenant_id}/${r.provider}`,
      jwe: r.secret_jwe as string,
      purpose: PURPOSE,
      subject: subject(r.tenant_id, r.provider as ProviderId),
    }));
  },
  async replace(db, id, jwe) {
    const [tenantId = '', provider = ''] = id.split('/');
    await db
      .updateTable('provider_settings')
      .set({ secret_jwe: jwe })
      .where('tenant_id', '=', tenantId)
      .where('provider', '=', provider)
      .execute();
  },
};

/** Creates or updates a tenant's settings for one provider; secrets are sealed at rest. */
export async function setProvider(
  db: Kysely<Schema>,
  box: SecretBox,
  tenantId: string,
  provider: string,
  input: ProviderSettingsInput,
): Promise<ProviderSettingsView> {
  if (!isProviderId(provider)) {
    throw new LatchkeyError(
      'not_found',
      `Unknown provider ${provider}; one of ${PROVIDER_IDS.join(', ')}`,
    );
  }
  const tenant = await getTenant(db, tenantId);
  const existing = await db
    .selectFrom('provider_settings')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('provider', '=', provider)
    .executeTakeFirst();
  const errors: FieldError[] = [];
  if (input.mode !== undefined && !PROVIDER_MODES.includes(input.mode))
    errors.push({
      path: '/mode',
      code: 'mode_invalid',
      message: `the mode is one of ${PROVIDER_MODES.join(', ')}`,
    });
  const mode: ProviderMode =
    input.mode ??
    (input.enabled === undefined
      ? existing
        ? modeOf(existing)
        : 'off'
      : input.enabled
        ? 'live'
        : 'off');
  const development = mode === 'development';
  if (development && tenant.environment !== 'development')
    errors.push({
      path: '/mode',
      code: 'development_mode_refused',
      message: `development mode is only for development tenants; ${tenant.name} is a production tenant`,
    });
  // Only live mode needs credentials; whatever is saved stays for later.
  const clientId = input.clientId ?? existing?.client_id ?? '';
  if ((mode === 'live' && !clientId) || clientId.length > socialDefaults.clientIdMaxLength)
    errors.push({
      path: '/clientId',
      code: 'client_id_invalid',
      message: 'a client id is required',
    });
  const rules = PROVIDERS[provider].settings;
  const secret = input[rules.secretField];
  const secretError = secret === undefined ? undefined : rules.checkSecret(secret);
  if (secretError) errors.push(secretError);
  const extra: Record<ExtraSetting, string | null> = { teamId: null, keyId: null, audience: null };
  for (const field of EXTRA) {
    const rule = rules.extra[field];
    if (!rule) continue;
    extra[field] = input[field] ?? existing?.[COLUMN[field]] ?? rule.fallback;
    const error = rule.check(extra[field]);
    // Development mode needs none of them; a value given is still checked.
    if (error && (mode === 'live' || input[field] !== undefined)) errors.push(error);
  }
  const sealed =
    secret === undefined
      ? (existing?.secret_jwe ?? null)
      : await box.seal(secret, PURPOSE, subject(tenantId, provider));
  if (mode === 'live' && !sealed) {
    errors.push({
      // Apple's secret is its private key: point at the field the caller has to fill.
      path: `/${rules.secretField}`,
      code: 'client_secret_required',
      message: 'a secret is needed before the provider can be enabled',
    });
  }
  if (errors.length) throw validationFailed(errors);
  const row: ProviderSettingsRow = {
    tenant_id: tenantId,
    provider,
    enabled: mode === 'off' ? 0 : 1,
    development: development ? 1 : 0,
    client_id: clientId,
    secret_jwe: sealed,
    team_id: extra.teamId,
    key_id: extra.keyId,
    audience: extra.audience,
    updated_at: Date.now(),
  };
  await db
    .insertInto('provider_settings')
    .values(row)
    .onConflict((oc) => oc.columns(['tenant_id', 'provider']).doUpdateSet(row))
    .execute();
  return view(row);
}

export async function listProviderSettings(
  db: Kysely<Schema>,
  tenantId: string,
): Promise<ProviderSettingsView[]> {
  const rows = await db
    .selectFrom('provider_settings')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .execute();
  return rows
    .map(view)
    .sort((a, b) => PROVIDER_IDS.indexOf(a.provider) - PROVIDER_IDS.indexOf(b.provider));
}

/**
 * The providers the hosted page and /public/config offer, in a stable order, each with its
 * mode. A row in development mode on a production tenant offers nothing.
 */
export async function enabledProviders(
  db: Kysely<Schema>,
  tenant: Pick<Tenant, 'id' | 'environment'>,
): Promise<{ id: ProviderId; name: string; mode: 'development' | 'live' }[]> {
  const development = tenant.environment === 'development';
  return (await listProviderSettings(db, tenant.id))
    .filter((p) => p.mode === 'live' || (p.mode === 'development' && development))
    .map((p) => ({ id: p.provider, name: p.name, mode: p.mode as 'development' | 'live' }));
}

/**
 * Whether sign-in with this provider runs in development mode now: the row says so, and
 * the tenant is (still) a development tenant. Never on a production tenant, whatever a
 * row says.
 */
export async function inDevelopmentMode(
  db: Kysely<Schema>,
  tenant: { id: string; environment: string },
  provider: ProviderId,
): Promise<boolean> {
  if (tenant.environment !== 'development') return false;
  const row = await db
    .selectFrom('provider_settings')
    .select(['enabled', 'development'])
    .where('tenant_id', '=', tenant.id)
    .where('provider', '=', provider)
    .executeTakeFirst();
  return row !== undefined && modeOf(row) === 'development';
}

/**
 * The settings with the secret opened, for a sign-in flow: of an enabled provider only,
 * unless `disabledToo` (an admin's "Test sign-in" before the provider is enabled).
 */
export async function providerCredentials(
  db: Kysely<Schema>,
  box: SecretBox,
  tenantId: string,
  provider: ProviderId,
  { disabledToo = false } = {},
): Promise<ProviderCredentials | undefined> {
  const row = await db
    .selectFrom('provider_settings')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('provider', '=', provider)
    .executeTakeFirst();
  if (!row?.secret_jwe || (modeOf(row) !== 'live' && !disabledToo)) return undefined;
  return {
    clientId: row.client_id,
    secret: await box.open(row.secret_jwe, PURPOSE, subject(tenantId, provider)),
    teamId: row.team_id,
    keyId: row.key_id,
    audience: row.audience,
  };
}
