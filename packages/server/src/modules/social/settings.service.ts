import type { Kysely } from 'kysely';
import { socialDefaults } from '../../config/defaults.js';
import type { SealedStore, SecretBox } from '../../crypto/secret-box.js';
import { type FieldError, LatchkeyError, validationFailed } from '../../errors/index.js';
import type { ProviderSettingsRow, Schema } from '../../storage/index.js';
import { getTenant } from '../tenants/index.js';
import {
  type ExtraSetting,
  PROVIDER_IDS,
  PROVIDERS,
  type ProviderCredentials,
  type ProviderId,
} from './providers/index.js';

export interface ProviderSettingsInput {
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
  enabled: boolean;
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

function view(row: ProviderSettingsRow): ProviderSettingsView {
  const id = row.provider as ProviderId;
  return {
    provider: id,
    name: PROVIDERS[id].name,
    enabled: row.enabled === 1,
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
  await getTenant(db, tenantId);
  const existing = await db
    .selectFrom('provider_settings')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('provider', '=', provider)
    .executeTakeFirst();
  const errors: FieldError[] = [];
  const clientId = input.clientId ?? existing?.client_id;
  if (!clientId || clientId.length > socialDefaults.clientIdMaxLength)
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
    if (error) errors.push(error);
  }
  const sealed =
    secret === undefined
      ? (existing?.secret_jwe ?? null)
      : await box.seal(secret, PURPOSE, subject(tenantId, provider));
  if ((input.enabled ?? existing?.enabled === 1) && !sealed) {
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
    enabled: (input.enabled ?? existing?.enabled === 1) ? 1 : 0,
    client_id: clientId as string,
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

/** The providers the hosted page and /public/config offer, in a stable order. */
export async function enabledProviders(
  db: Kysely<Schema>,
  tenantId: string,
): Promise<{ id: ProviderId; name: string }[]> {
  return (await listProviderSettings(db, tenantId))
    .filter((p) => p.enabled)
    .map((p) => ({ id: p.provider, name: p.name }));
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
  if (!row?.secret_jwe || (row.enabled !== 1 && !disabledToo)) return undefined;
  return {
    clientId: row.client_id,
    secret: await box.open(row.secret_jwe, PURPOSE, subject(tenantId, provider)),
    teamId: row.team_id,
    keyId: row.key_id,
    audience: row.audience,
  };
}
