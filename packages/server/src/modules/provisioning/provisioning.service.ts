import type { Kysely } from 'kysely';
import type { Schema } from '../../storage/index.js';
import { createKey, type Scope } from '../keys/index.js';
import type { SigningKeys } from '../sessions/index.js';
import { createTenant, type Tenant, type TenantInput } from '../tenants/index.js';

export interface ProvisionDeps {
  db: Kysely<Schema>;
  signingKeys: SigningKeys;
}

export interface ProvisionedTenant {
  tenant: Tenant;
  /** Shown once; only its hash is stored. */
  secretKey: string;
  publishableKey: string;
}

/**
 * A new tenant, ready for browsers: its signing key exists before anyone can ask for its
 * JWKS, so a verifier that loads the key set at start-up never meets an empty one; and it
 * has a publishable key. The admin area stops here: it makes secret keys where they are
 * shown once, behind a fresh password.
 */
export async function openTenant(
  deps: ProvisionDeps,
  input: TenantInput,
  keyName?: string,
): Promise<{ tenant: Tenant; publishableKey: string }> {
  const tenant = await createTenant(deps.db, input);
  await deps.signingKeys.active(tenant.id);
  const publishable = await createKey(deps.db, tenant.id, { kind: 'publishable', name: keyName });
  return { tenant, publishableKey: publishable.plaintext };
}

/** A new tenant as `openTenant` makes it, plus its first secret key (CLI, first run). */
export async function provisionTenant(
  deps: ProvisionDeps,
  input: TenantInput,
  keys: { name?: string; scopes?: Scope[] } = {},
): Promise<ProvisionedTenant> {
  const { tenant, publishableKey } = await openTenant(deps, input, keys.name);
  const secret = await createKey(deps.db, tenant.id, {
    kind: 'secret',
    name: keys.name,
    scopes: keys.scopes,
  });
  return { tenant, secretKey: secret.plaintext, publishableKey };
}
