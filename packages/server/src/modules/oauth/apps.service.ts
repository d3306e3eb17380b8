import { timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ClientMetadata } from 'oidc-provider';
import { defaults } from '../../config/defaults.js';
import { sha256Hex } from '../../crypto/hash.js';
import { type FieldError, LatchkeyError, validationFailed } from '../../errors/index.js';
import type { AppRow, AppType, Publisher, Schema } from '../../storage/index.js';
import { transact } from '../../storage/index.js';
import { randomBase62 } from '../keys/index.js';
import { revokeSessionsIn } from '../sessions/index.js';
import { getTenant, schemeProblem, type Tenant } from '../tenants/index.js';

/**
 * Applications: the OAuth clients of a tenant's OpenID Provider (docs/design.md §14).
 * `spa` and `native` are public clients (no secret; PKCE always); `web` and `m2m` are
 * confidential, with a secret shown once and stored as its SHA-256 (it carries 256 random
 * bits, like API keys, so a fast hash is the right one).
 */
export const APP_TYPES = ['spa', 'native', 'web', 'm2m'] as const satisfies readonly AppType[];

export interface App {
  /** The `client_id`: `app_` and 24 base62 characters. */
  id: string;
  tenantId: string;
  name: string;
  type: AppType;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  /** Whether it authenticates with a secret (`web`, `m2m`). */
  confidential: boolean;
  /** Made by an operator, so it skips the consent page; RFC 7591 registrations do not. */
  firstParty: boolean;
  /** A `web` app that opted out of PKCE (its secret authenticates the exchange). */
  pkceOptional: boolean;
  /** Until when the secret before the last rotation is still accepted; null: it is not. */
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface AppInput {
  name: string;
  type: AppType;
  redirectUris?: string[];
  postLogoutRedirectUris?: string[];
  /** A `web` app that may leave PKCE out (docs/design.md §14): an opt-out; public apps never may. */
  pkceOptional?: boolean;
}

export const ID_PREFIX = 'app_';
const ID_SHAPE = /^app_[0-9A-Za-z]{24}$/;
/** Whether `value` has the shape of an app id (a client_id), before any look-up. */
export const isAppId = (value: string) => ID_SHAPE.test(value);
/** 256 bits, as API keys carry. */
const SECRET_LENGTH = 43;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function toApp(row: AppRow, now = Date.now()): App {
  const graceUntil = row.previous_secret_expires_at;
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    type: row.type,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    postLogoutRedirectUris: JSON.parse(row.post_logout_redirect_uris) as string[],
    confidential: row.secret_hash !== null,
    firstParty: row.first_party === 1,
    pkceOptional: row.pkce_optional === 1,
    previousSecretExpiresAt:
      row.previous_secret_hash !== null && graceUntil !== null && graceUntil > now
        ? iso(graceUntil)
        : null,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * What is wrong with one redirect URI of an app of this type, or null. Every type: an
 * absolute URI without a fragment or user info (RFC 6749 section 3.1.2), matched exactly.
 * `spa` and `web`: the scheme rule of origins (https; http only for localhost on development
 * tenants). `native` (RFC 8252 section 7): http only on a loopback address (any tenant: it is
 * the user's own machine), https, or a private-use scheme in reverse-domain form (`com.example.app:`).
 */
export function redirectUriProblem(uri: string, type: AppType, tenant: Tenant): string | null {
  const url = URL.parse(uri);
  if (!url) return 'is not an absolute URI';
  if (uri.includes('#')) return 'must not contain a fragment (#)';
  if (url.username || url.password) return 'must not contain user info';
  if (type !== 'native') return schemeProblem(url, tenant.environment);
  if (url.protocol === 'http:')
    return LOOPBACK.has(url.hostname) ? null : 'http is allowed only on a loopback address';
  if (url.protocol === 'https:') return null;
  return /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/.test(url.protocol)
    ? null
    : 'a private-use scheme must be in reverse-domain form, e.g. com.example.app:/callback';
}

/** A URI as an error message names it: a long one cut short. */
const shown = (uri: string) => (uri.length > 80 ? `${uri.slice(0, 60)}...` : uri);

function checkInput(input: AppInput, tenant: Tenant): void {
  const errors: FieldError[] = [];
  const { appNameMaxLength, maxRedirectUris, redirectUriMaxLength } = defaults.oauth;
  const name = input.name.trim();
  if (!name) errors.push({ path: '/name', code: 'required', message: 'an app needs a name' });
  else if ([...name].length > appNameMaxLength)
    errors.push({
      path: '/name',
      code: 'name_invalid',
      message: `name must be 1 to ${appNameMaxLength} characters`,
    });
  const knownType = (APP_TYPES as readonly string[]).includes(input.type);
  if (!knownType)
    errors.push({
      path: '/type',
      code: 'type_invalid',
      message: `type must be one of ${APP_TYPES.join(', ')}`,
    });
  const redirects = input.redirectUris ?? [];
  const postLogout = input.postLogoutRedirectUris ?? [];
  if (input.type === 'm2m' && (redirects.length || postLogout.length))
    errors.push({
      path: '/redirectUris',
      code: 'redirect_uris_invalid',
      message: 'an m2m app signs no one in: it has no redirect URIs',
    });
  else if (input.type !== 'm2m' && redirects.length === 0 && knownType)
    errors.push({
      path: '/redirectUris',
      code: 'redirect_uris_invalid',
      message: `a ${input.type} app needs at least one redirect URI`,
    });
  for (const [path, uris] of [
    ['/redirectUris', redirects],
    ['/postLogoutRedirectUris', postLogout],
  ] as const) {
    if (uris.length > maxRedirectUris) {
      errors.push({
        path,
        code: 'redirect_uris_invalid',
        message: `an app may have at most ${maxRedirectUris} ${path === '/redirectUris' ? '' : 'post-logout '}redirect URIs`,
      });
      continue;
    }
    uris.forEach((uri, i) => {
      const problem =
        input.type === 'm2m'
          ? null
          : uri.length > redirectUriMaxLength
            ? `is longer than ${redirectUriMaxLength} characters`
            : redirectUriProblem(uri, input.type, tenant);
      if (problem)
        errors.push({
          path: `${path}/${i}`,
          code: 'redirect_uri_invalid',
          message: `${shown(uri)} ${problem}`,
        });
    });
  }
  if (errors.length) throw validationFailed(errors);
}

const isConfidential = (type: AppType) => type === 'web' || type === 'm2m';

/** Creates an app; `clientSecret` (web and m2m only) is the only time its secret is shown. */
export async function createApp(
  db: Kysely<Schema>,
  tenantId: string,
  input: AppInput,
): Promise<{ app: App; clientSecret: string | null }> {
  const tenant = await getTenant(db, tenantId);
  checkInput(input, tenant);
  const clientSecret = isConfidential(input.type) ? randomBase62(SECRET_LENGTH) : null;
  const now = Date.now();
  const row: AppRow = {
    id: ID_PREFIX + randomBase62(24),
    tenant_id: tenant.id,
    name: input.name.trim(),
    type: input.type,
    redirect_uris: JSON.stringify([...new Set(input.redirectUris ?? [])]),
    post_logout_redirect_uris: JSON.stringify([...new Set(input.postLogoutRedirectUris ?? [])]),
    secret_hash: clientSecret === null ? null : sha256Hex(clientSecret),
    previous_secret_hash: null,
    previous_secret_expires_at: null,
    pkce_optional: input.pkceOptional && input.type === 'web' ? 1 : 0,
    first_party: 1,
    metadata: null,
    created_at: now,
    updated_at: now,
  };
  await db.insertInto('apps').values(row).execute();
  return { app: toApp(row, now), clientSecret };
}

/** What `updateApp` changes: each field given replaces the stored one (a list: as a whole). */
export interface AppUpdate {
  name?: string;
  redirectUris?: string[];
  postLogoutRedirectUris?: string[];
}

/**
 * Renames an app or replaces its redirect URIs, under the rules of `createApp` (its type
 * stays): every field that fails is listed, and nothing is stored. The provider reads apps
 * on every request, so a removed redirect URI is refused from the next authorization on.
 */
export async function updateApp(
  deps: { db: Kysely<Schema>; bus: Publisher },
  tenantId: string,
  appId: string,
  input: AppUpdate,
): Promise<App> {
  return transact(deps.db, deps.bus, async ({ db }) => {
    const tenant = await getTenant(db, tenantId);
    const row = await findAppRow(db, tenantId, appId);
    const merged: Required<Omit<AppInput, 'pkceOptional'>> = {
      name: input.name ?? row.name,
      type: row.type,
      redirectUris: input.redirectUris ?? (JSON.parse(row.redirect_uris) as string[]),
      postLogoutRedirectUris:
        input.postLogoutRedirectUris ?? (JSON.parse(row.post_logout_redirect_uris) as string[]),
    };
    checkInput(merged, tenant);
    const now = Date.now();
    const update = {
      name: merged.name.trim(),
      redirect_uris: JSON.stringify([...new Set(merged.redirectUris)]),
      post_logout_redirect_uris: JSON.stringify([...new Set(merged.postLogoutRedirectUris)]),
      updated_at: now,
    };
    await db
      .updateTable('apps')
      .set(update)
      .where('tenant_id', '=', tenantId)
      .where('id', '=', appId)
      .execute();
    return toApp({ ...row, ...update }, now);
  });
}

export async function listApps(db: Kysely<Schema>, tenantId: string): Promise<App[]> {
  await getTenant(db, tenantId);
  const rows = await db
    .selectFrom('apps')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => toApp(row));
}

async function findAppRow(db: Kysely<Schema>, tenantId: string, appId: string): Promise<AppRow> {
  const row = ID_SHAPE.test(appId)
    ? await db
        .selectFrom('apps')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('id', '=', appId)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new LatchkeyError('not_found', `No app ${appId} on tenant ${tenantId}`);
  return row;
}

export async function getApp(db: Kysely<Schema>, tenantId: string, appId: string): Promise<App> {
  await getTenant(db, tenantId);
  return toApp(await findAppRow(db, tenantId, appId));
}

/**
 * Deletes an app and what the provider stored for it (its codes, refresh tokens and
 * grants): from then on its client_id authenticates nothing.
 */
export async function deleteApp(
  deps: { db: Kysely<Schema>; bus: Publisher },
  tenantId: string,
  appId: string,
): Promise<App> {
  return transact(deps.db, deps.bus, async (tx) => {
    const { db } = tx;
    await getTenant(db, tenantId);
    const row = await findAppRow(db, tenantId, appId);
    // Its users' sessions end with it: their access tokens stop at introspection at once.
    await revokeSessionsIn(tx, tenantId, { oauthClientId: appId }, 'app_deleted');
    await db
      .deleteFrom('oauth_artifacts')
      .where('tenant_id', '=', tenantId)
      .where('client_id', '=', appId)
      .execute();
    await db.deleteFrom('apps').where('tenant_id', '=', tenantId).where('id', '=', appId).execute();
    tx.invalidate(appTopic(tenantId, appId));
    return toApp(row);
  });
}

/**
 * A new secret for a confidential app, shown once; the one it replaces keeps working for
 * `graceMs` (0: not at all), so that its servers can be given the new one first.
 */
export async function rotateAppSecret(
  deps: { db: Kysely<Schema>; bus: Publisher },
  tenantId: string,
  appId: string,
  graceMs: number = defaults.oauth.secretGraceMs,
): Promise<{ app: App; clientSecret: string }> {
  if (!Number.isInteger(graceMs) || graceMs < 0 || graceMs > defaults.oauth.maxSecretGraceMs)
    throw validationFailed([
      {
        path: '/grace',
        code: 'grace_invalid',
        message: `the grace period must be between 0 and ${defaults.oauth.maxSecretGraceMs / 86_400_000} days`,
      },
    ]);
  return transact(deps.db, deps.bus, async (tx) => {
    const { db } = tx;
    await getTenant(db, tenantId);
    const row = await findAppRow(db, tenantId, appId);
    if (row.secret_hash === null)
      throw new LatchkeyError(
        'conflict',
        `App ${appId} is a ${row.type} app: a public client has no secret to rotate`,
      );
    const clientSecret = randomBase62(SECRET_LENGTH);
    const now = Date.now();
    const update = {
      secret_hash: sha256Hex(clientSecret),
      previous_secret_hash: graceMs > 0 ? row.secret_hash : null,
      previous_secret_expires_at: graceMs > 0 ? now + graceMs : null,
      updated_at: now,
    };
    await db
      .updateTable('apps')
      .set(update)
      .where('tenant_id', '=', tenantId)
      .where('id', '=', appId)
      .execute();
    tx.invalidate(appTopic(tenantId, appId));
    return { app: toApp({ ...row, ...update }, now), clientSecret };
  });
}

/**
 * The client metadata node-oidc-provider reads for an app (its Client adapter's `find`),
 * or undefined: no such app on this tenant. Read on every request, so a deleted app or a
 * rotated secret takes effect at once. A confidential app's `client_secret` is only a
 * placeholder (its hash): `appSecretMatches` checks secrets, and no algorithm keyed by the
 * client secret is enabled.
 */
export async function clientMetadataOf(
  db: Kysely<Schema>,
  tenantId: string,
  appId: string,
): Promise<ClientMetadata | undefined> {
  if (!ID_SHAPE.test(appId)) return undefined;
  const row = await db
    .selectFrom('apps')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', appId)
    .executeTakeFirst();
  if (!row) return undefined;
  const common = {
    // An RFC 7591 registration's other metadata (contacts, logo_uri…), as it registered it.
    ...(row.metadata ? (JSON.parse(row.metadata) as ClientMetadata) : {}),
    client_id: row.id,
    client_name: row.name,
    require_auth_time: true,
    latchkey_first_party: row.first_party === 1,
    latchkey_pkce_optional: row.pkce_optional === 1,
    redirect_uris: JSON.parse(row.redirect_uris) as string[],
    post_logout_redirect_uris: JSON.parse(row.post_logout_redirect_uris) as string[],
  };
  switch (row.type) {
    case 'spa':
    case 'native':
      return {
        ...common,
        application_type: row.type === 'spa' ? 'web' : 'native',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      };
    case 'web':
      return {
        ...common,
        application_type: 'web',
        client_secret: row.secret_hash ?? undefined,
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      };
    case 'm2m':
      return {
        ...common,
        client_secret: row.secret_hash ?? undefined,
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['client_credentials'],
        response_types: [],
      };
  }
}

/** What an app's deletion or new secret invalidates (`AppCredentials` caches apps). */
const appTopic = (tenantId: string, appId: string) => `app:${tenantId}/${appId}`;

const sameHash = (a: string, b: string) => timingSafeEqual(Buffer.from(a), Buffer.from(b));

type SecretColumns = Pick<
  AppRow,
  'secret_hash' | 'previous_secret_hash' | 'previous_secret_expires_at'
>;

/** The rule of `appSecretMatches`, on columns already read. */
export function secretMatches(row: SecretColumns, presented: string, now = Date.now()): boolean {
  if (!row.secret_hash) return false;
  const hash = sha256Hex(presented);
  if (sameHash(hash, row.secret_hash)) return true;
  const until = row.previous_secret_expires_at;
  return (
    row.previous_secret_hash !== null &&
    until !== null &&
    until > now &&
    sameHash(hash, row.previous_secret_hash)
  );
}

/**
 * Whether `presented` is the app's client secret: the current one, or the one before the
 * last rotation while its grace period lasts.
 */
export async function appSecretMatches(
  db: Kysely<Schema>,
  tenantId: string,
  appId: string,
  presented: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('apps')
    .select(['secret_hash', 'previous_secret_hash', 'previous_secret_expires_at'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', appId)
    .executeTakeFirst();
  return row !== undefined && secretMatches(row, presented);
}
