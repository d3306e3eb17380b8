import type { Kysely } from 'kysely';
import type { SecretBox } from '../../crypto/secret-box.js';
import { type FieldError, LatchkeyError, validationFailed } from '../../errors/index.js';
import type { ProviderSettingsRow, Schema } from '../../storage/index.js';
import { getTenant } from '../tenants/index.js';
import { PROVIDER_IDS, PROVIDERS, type ProviderId } from './providers/index.js';

export interface ProviderSettingsInput {
  enabled?: boolean;
  clientId?: string;
  clientSecret?: string;
  /** Apple */
  teamId?: string;
  keyId?: string;
  privateKeyPem?: string;
  /** Microsoft: common, organizations, consumers, or a directory (tenant) id */
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

const AUDIENCE =
  /^(common|organizations|consumers|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

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

const subject = (tenantId: string, provider: ProviderId) => `${tenantId}/${provider}`;

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
  if (!clientId || clientId.length > 512)
    errors.push({
      path: '/clientId',
      code: 'client_id_invalid',
      message: 'a client id is required',
    });
  let secret: string | undefined;
  if (provider === 'apple') {
    if (input.privateKeyPem !== undefined) {
      if (!/-----BEGIN PRIVATE KEY-----/.test(input.privateKeyPem)) {
        errors.push({
          path: '/privateKey',
          code: 'private_key_invalid',
          message: 'the Apple key must be a PKCS#8 PEM (.p8 file)',
        });
      }
      secret = input.privateKeyPem;
    }
    for (const [field, value] of [
      ['teamId', input.teamId ?? existing?.team_id],
      ['keyId', input.keyId ?? existing?.key_id],
    ] as const) {
      if (!value || !/^[A-Z0-9]{10}$/.test(value)) {
        errors.push({
          path: `/${field}`,
          code: `${field === 'teamId' ? 'team_id' : 'key_id'}_invalid`,
          message: `${field} must be Apple's 10-character id`,
        });
      }
    }
  } else if (input.clientSecret !== undefined) {
    secret = input.clientSecret;
  }
  if (provider === 'microsoft' && input.audience !== undefined && !AUDIENCE.test(input.audience)) {
    errors.push({
      path: '/audience',
      code: 'audience_invalid',
      message: 'audience is common, organizations, consumers or a directory id',
    });
  }
  const sealed =
    secret === undefined
      ? (existing?.secret_jwe ?? null)
      : await box.seal(secret, 'provider-secret', subject(tenantId, provider));
  if ((input.enabled ?? existing?.enabled === 1) && !sealed) {
    errors.push({
      path: '/clientSecret',
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
    team_id: provider === 'apple' ? (input.teamId ?? existing?.team_id ?? null) : null,
    key_id: provider === 'apple' ? (input.keyId ?? existing?.key_id ?? null) : null,
    audience: provider === 'microsoft' ? (input.audience ?? existing?.audience ?? 'common') : null,
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

/** The settings with the secret opened, for a sign-in flow. */
export async function providerCredentials(
  db: Kysely<Schema>,
  box: SecretBox,
  tenantId: string,
  provider: ProviderId,
) {
  const row = await db
    .selectFrom('provider_settings')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('provider', '=', provider)
    .executeTakeFirst();
  if (row?.enabled !== 1 || !row.secret_jwe) return undefined;
  return {
    clientId: row.client_id,
    secret: await box.open(row.secret_jwe, 'provider-secret', subject(tenantId, provider)),
    teamId: row.team_id,
    keyId: row.key_id,
    audience: row.audience,
  };
}
