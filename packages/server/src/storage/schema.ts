import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * Column conventions that hold on both SQLite and PostgreSQL:
 * ids are UUID text, times are epoch milliseconds (bigint), booleans are 0/1 integers,
 * and JSON values are text.
 */
type Millis = ColumnType<number, number, number>;

export interface TenantsTable {
  id: string;
  name: string;
  plan: string;
  /** Only for the enterprise plan: limits an operator set. */
  rate_rps: number | null;
  rate_rpm: number | null;
  environment: string;
  /** JSON array of origins, e.g. ["https://app.example.com"]. */
  allowed_origins: string;
  require_email_verification: number;
  access_token_ttl: number;
  password_enabled: number;
  logo_url: string | null;
  primary_color: string | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  kind: 'secret' | 'publishable';
  /** SHA-256 of the whole key, hex. */
  hash: string;
  /** e.g. `sk_test_` plus the first four characters of the random part. */
  prefix: string;
  last4: string;
  /** Publishable keys are public and kept whole so they can be shown again. */
  publishable: string | null;
  /** Space-separated scopes (secret keys only). */
  scopes: string;
  name: string | null;
  created_at: Millis;
  revoked_at: Millis | null;
}

export interface UsersTable {
  id: string;
  tenant_id: string;
  /** The address as the user typed it, trimmed. */
  email: string;
  /** The case-folded form that is unique per tenant (see users/email.ts). */
  email_key: string;
  password_hash: string | null;
  name: string | null;
  metadata: string;
  roles: string;
  email_verified_at: Millis | null;
  disabled_at: Millis | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface MigrationLockRow {
  id: Generated<number>;
}

export interface Schema {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  users: UsersTable;
}

export type TenantRow = Selectable<TenantsTable>;
export type NewTenantRow = Insertable<TenantsTable>;
export type TenantUpdate = Updateable<TenantsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type UserRow = Selectable<UsersTable>;
