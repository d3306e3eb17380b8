import type { ColumnType, Insertable, Selectable, Updateable } from 'kysely';

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
  /** The `aud` of access tokens (RFC 9068 section 2.2); null: `{auth_url}/t/{id}/api`. */
  audience: string | null;
  /** docs/design.md §13: `off`, `optional` or `required` (migration 016). */
  mfa_policy: ColumnType<string, string | undefined, string>;
  /** 1: passkeys offered on the hosted pages (migration 016). */
  passkeys_enabled: ColumnType<number, number | undefined, number>;
  /** 1: RFC 7591 dynamic registration at `/t/{id}/oauth/register` (migration 018). */
  dynamic_registration: ColumnType<number, number | undefined, number>;
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
  last_used_at: ColumnType<number | null, number | null | undefined, number | null>;
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

export interface SigningKeysTable {
  /** The `kid`. */
  id: string;
  tenant_id: string;
  algorithm: string;
  public_jwk: string;
  /** The private JWK, encrypted with a key derived from LATCHKEY_SECRET (compact JWE). */
  private_jwe: string;
  created_at: Millis;
  /** Published from creation; signs only from this time, once verifiers have fetched it. */
  activates_at: Millis;
  /** When a newer key takes over signing (may lie in the future). */
  retired_at: Millis | null;
  /** A retired key stays in the JWKS until every token it signed has expired. */
  publish_until: Millis | null;
}

export interface SessionsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  created_at: Millis;
  last_used_at: Millis;
  expires_at: Millis;
  revoked_at: Millis | null;
  revoked_reason: string | null;
  ip: string | null;
  user_agent: string | null;
  /** Where its refresh tokens go: `server` (secret key) or `browser` (publishable key). */
  channel: SessionChannel;
  /**
   * RFC 8176 methods the person authenticated with, a JSON array (`["pwd"]`, `["fed"]`);
   * null on sessions opened before migration 015 (their tokens carry no `amr`).
   */
  amr: string | null;
  /** When the person authenticated (`auth_time`); null before migration 015: `created_at`. */
  authenticated_at: Millis | null;
  /** docs/design.md §14: the OAuth grant (node-oidc-provider's) an `oauth` session serves. */
  oauth_grant_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The app (`app_…`) an `oauth` session's tokens were issued to. */
  oauth_client_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/**
 * The client a session's refresh tokens were issued to; they work only there. `oauth`:
 * an app of the tenant's OpenID Provider (docs/design.md §14), whose refresh tokens are
 * node-oidc-provider's.
 */
export type SessionChannel = 'server' | 'browser' | 'oauth';

export interface RefreshTokensTable {
  /** SHA-256 of the opaque token, hex. */
  hash: string;
  session_id: string;
  tenant_id: string;
  created_at: Millis;
  expires_at: Millis;
  /** Set when rotated; presenting a used token again revokes the session. */
  used_at: Millis | null;
}

export interface HostedSessionsTable {
  hash: string;
  tenant_id: string;
  user_id: string;
  created_at: Millis;
  expires_at: Millis;
  revoked_at: Millis | null;
  /** The API session this sign-in opened, resumed by a returning browser. */
  session_id: string | null;
  /** How that sign-in authenticated, a JSON `amr` (migration 016); null before. */
  amr: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface AuthCodesTable {
  hash: string;
  tenant_id: string;
  session_id: string;
  /** base64url SHA-256 of the caller's code_verifier (RFC 7636, S256). */
  code_challenge: string;
  redirect_origin: string;
  created_at: Millis;
  expires_at: Millis;
  used_at: Millis | null;
}

export interface EmailTokensTable {
  hash: string;
  tenant_id: string;
  user_id: string;
  purpose: 'verify' | 'reset' | 'address';
  /** The hosted sign-in URL to continue to afterwards. */
  return_to: string | null;
  /** `address` links: the client address (bucket) the link lets in. */
  address: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Millis;
  expires_at: Millis;
  used_at: Millis | null;
}

export interface MailOutboxTable {
  id: string;
  tenant_id: string | null;
  recipient: string;
  subject: string;
  body: string;
  created_at: Millis;
}

/**
 * One row: a value sealed with the master secret when the database first met it, so that a
 * start with another secret (or a lost one) is refused before anything is sealed or opened.
 */
export interface MasterSecretTable {
  id: number;
  check_jwe: string;
  created_at: Millis;
  rotated_at: Millis | null;
}

export interface ProviderSettingsTable {
  tenant_id: string;
  provider: string;
  enabled: number;
  client_id: string;
  secret_jwe: string | null;
  team_id: string | null;
  key_id: string | null;
  audience: string | null;
  /** 1: enabled in development mode (no credentials; development tenants only). */
  development: number;
  updated_at: Millis;
}

export interface IdentitiesTable {
  id: string;
  tenant_id: string;
  user_id: string;
  provider: string;
  issuer: string;
  subject: string;
  email: string | null;
  email_verified: number;
  created_at: Millis;
  last_used_at: Millis;
  /** An https picture URL from the provider (migration 014); null when none. */
  picture: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface OauthFlowsTable {
  state: string;
  tenant_id: string;
  provider: string;
  nonce: string;
  code_verifier: string;
  hosted_query: string;
  created_at: Millis;
  expires_at: Millis;
  used_at: Millis | null;
  /** Set for an admin's "Test sign-in": nothing is created, the outcome is kept instead. */
  admin_id: ColumnType<string | null, string | null | undefined, string | null>;
  test_result: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface AuditEventsTable {
  id: string;
  /** Null for events outside any tenant (an admin's own sign-in failures). */
  tenant_id: string | null;
  user_id: string | null;
  kind: string;
  detail: string;
  created_at: Millis;
  /** Who did it: the admin's e-mail for changes made in the admin area; null otherwise. */
  actor: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface AdminsTable {
  id: string;
  email: string;
  email_key: string;
  password_hash: string;
  superuser: number;
  created_at: Millis;
  updated_at: Millis;
}

export interface AdminTenantsTable {
  admin_id: string;
  tenant_id: string;
}

export interface AdminSessionsTable {
  hash: string;
  admin_id: string;
  created_at: Millis;
  authenticated_at: Millis;
  last_seen_at: Millis;
  expires_at: Millis;
  ip: string | null;
}

/** A WebAuthn credential (docs/design.md §13): a discoverable one, found by its id in a tenant. */
export interface PasskeysTable {
  id: string;
  tenant_id: string;
  user_id: string;
  /** base64url, as the browser names it; unique within a tenant. */
  credential_id: string;
  /** The COSE public key, base64url. */
  public_key: string;
  /** The authenticator's signature counter; 0 for one that keeps none. */
  counter: number;
  /** JSON array of the transports the browser reported. */
  transports: string;
  /** `singleDevice`, or `multiDevice` (a synced passkey). */
  device_type: string;
  backed_up: number;
  name: string;
  created_at: Millis;
  last_used_at: ColumnType<number | null, number | null | undefined, number | null>;
}

/** A WebAuthn challenge, by its SHA-256; each works once, within its lifetime. */
export interface PasskeyChallengesTable {
  hash: string;
  tenant_id: string;
  /** The user a registration is for; null for a sign-in (discoverable: anyone's). */
  user_id: string | null;
  purpose: 'register' | 'authenticate';
  created_at: Millis;
  expires_at: Millis;
  used_at: Millis | null;
}

/** An authenticator app (RFC 6238), live once `confirmed_at` is set by a first code. */
export interface TotpFactorsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  /** The shared secret, sealed with the master secret (compact JWE, see SecretBox). */
  secret_jwe: string;
  name: string;
  confirmed_at: Millis | null;
  /** The last time step whose code was accepted; a code is never accepted twice. */
  last_step: number | null;
  created_at: Millis;
  last_used_at: Millis | null;
}

/** One of a user's ten single-use recovery codes, by its SHA-256. */
export interface RecoveryCodesTable {
  id: string;
  tenant_id: string;
  user_id: string;
  hash: string;
  created_at: Millis;
  used_at: Millis | null;
}

/** A sign-in that waits for a second factor: the `mfaToken` of REST, or a hosted page's. */
export interface MfaChallengesTable {
  /** SHA-256 of the token, hex. */
  hash: string;
  tenant_id: string;
  user_id: string;
  /** JSON array of the methods used so far (`["pwd"]`, `["fed"]`). */
  amr: string;
  channel: SessionChannel;
  /** Wrong codes given so far; the challenge ends at `defaults.mfa.attemptsPerChallenge`. */
  attempts: number;
  created_at: Millis;
  expires_at: Millis;
  used_at: Millis | null;
}

/** An application (OAuth client) of a tenant's OpenID Provider (docs/design.md §14). */
export interface AppsTable {
  /** `app_` and 24 base62 characters: the `client_id`. */
  id: string;
  tenant_id: string;
  name: string;
  type: AppType;
  /** JSON array of absolute URIs, matched exactly. */
  redirect_uris: string;
  /** JSON array of absolute URIs, matched exactly. */
  post_logout_redirect_uris: string;
  /** SHA-256 of the client secret, hex; null for public clients (spa, native). */
  secret_hash: string | null;
  /** The secret before the last rotation, accepted until `previous_secret_expires_at`. */
  previous_secret_hash: string | null;
  previous_secret_expires_at: Millis | null;
  /** 1: a confidential client may leave PKCE out. */
  pkce_optional: ColumnType<number, number | undefined, number>;
  /** 1: made by an operator (no consent page); 0: registered through RFC 7591. */
  first_party: ColumnType<number, number | undefined, number>;
  /** JSON object: further client metadata of a dynamically registered app. */
  metadata: string | null;
  created_at: Millis;
  updated_at: Millis;
}

export type AppType = 'spa' | 'native' | 'web' | 'm2m';

/** What node-oidc-provider stores through its adapter (docs/design.md §14), one row each. */
export interface OauthArtifactsTable {
  tenant_id: string;
  /** The provider's model name: Session, Interaction, AuthorizationCode, RefreshToken, Grant… */
  model: string;
  id: string;
  /** The model's payload, JSON. */
  payload: string;
  grant_id: string | null;
  uid: string | null;
  client_id: string | null;
  /** The Latchkey session of a refresh token. */
  session_id: string | null;
  expires_at: Millis | null;
  consumed_at: Millis | null;
  created_at: Millis;
}

/** A tenant's webhook endpoint (docs/design.md §17). */
export interface WebhookEndpointsTable {
  id: string;
  tenant_id: string;
  url: string;
  /** JSON array of event types; empty: every event. */
  events: string;
  /** The `whsec_` signing secret, sealed with the master secret. */
  secret_jwe: string;
  /** The secret before the last rotation: both sign until `previous_secret_expires_at`. */
  previous_secret_jwe: string | null;
  previous_secret_expires_at: Millis | null;
  disabled_at: Millis | null;
  /** Why: `operator`, or `failing` (every delivery failed for the whole retry period). */
  disabled_reason: string | null;
  last_success_at: Millis | null;
  created_at: Millis;
  updated_at: Millis;
}

/** One event, as sent: `webhook-id` is its id, and the body never changes between attempts. */
export interface WebhookMessagesTable {
  /** `msg_` and 22 base64url characters. */
  id: string;
  tenant_id: string;
  type: string;
  /** The JSON body: `{ type, timestamp, data }`. */
  body: string;
  created_at: Millis;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One message to one endpoint. */
export interface WebhookDeliveriesTable {
  id: string;
  tenant_id: string;
  message_id: string;
  endpoint_id: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: Millis;
  /** Claimed by an instance until then (longer than an attempt may take). */
  locked_until: Millis | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  started_at: Millis;
  duration_ms: number;
  /** Null when no answer came (refused address, timeout, connection error). */
  status_code: number | null;
  error: string | null;
  /** The first bytes of the answer (capped). */
  response_body: string | null;
}

/** docs/design.md §21: keys for the operator REST API (/v1/operator/…). */
export interface OperatorKeysTable {
  id: string;
  /** SHA-256 of the whole key, hex. */
  hash: string;
  /** `lko_` plus the first four characters of the random part. */
  prefix: string;
  last4: string;
  name: string | null;
  created_at: Millis;
  revoked_at: Millis | null;
}

export interface Schema {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  users: UsersTable;
  signing_keys: SigningKeysTable;
  sessions: SessionsTable;
  refresh_tokens: RefreshTokensTable;
  hosted_sessions: HostedSessionsTable;
  auth_codes: AuthCodesTable;
  email_tokens: EmailTokensTable;
  mail_outbox: MailOutboxTable;
  provider_settings: ProviderSettingsTable;
  master_secret: MasterSecretTable;
  identities: IdentitiesTable;
  oauth_flows: OauthFlowsTable;
  audit_events: AuditEventsTable;
  admins: AdminsTable;
  admin_tenants: AdminTenantsTable;
  admin_sessions: AdminSessionsTable;
  passkeys: PasskeysTable;
  passkey_challenges: PasskeyChallengesTable;
  totp_factors: TotpFactorsTable;
  recovery_codes: RecoveryCodesTable;
  mfa_challenges: MfaChallengesTable;
  apps: AppsTable;
  oauth_artifacts: OauthArtifactsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_messages: WebhookMessagesTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  operator_keys: OperatorKeysTable;
}

export type TenantRow = Selectable<TenantsTable>;
export type NewTenantRow = Insertable<TenantsTable>;
export type TenantUpdate = Updateable<TenantsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type UserRow = Selectable<UsersTable>;
export type SigningKeyRow = Selectable<SigningKeysTable>;
export type SessionRow = Selectable<SessionsTable>;
export type RefreshTokenRow = Selectable<RefreshTokensTable>;
export type EmailTokenRow = Selectable<EmailTokensTable>;
export type MailRow = Selectable<MailOutboxTable>;
export type ProviderSettingsRow = Selectable<ProviderSettingsTable>;
export type AdminRow = Selectable<AdminsTable>;
export type AdminSessionRow = Selectable<AdminSessionsTable>;
export type AuditEventRow = Selectable<AuditEventsTable>;
export type PasskeyRow = Selectable<PasskeysTable>;
export type AppRow = Selectable<AppsTable>;
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;
export type OperatorKeyRow = Selectable<OperatorKeysTable>;
