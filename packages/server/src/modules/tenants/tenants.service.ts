import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import {
  defaults,
  ENVIRONMENTS,
  type Environment,
  MFA_POLICIES,
  type MfaPolicy,
  PLANS,
  type Plan,
} from '../../config/defaults.js';
import { type FieldError, LatchkeyError, validationFailed } from '../../errors/index.js';
import {
  type NewTenantRow,
  type Publisher,
  type Schema,
  type TenantRow,
  type TenantUpdate,
  transact,
} from '../../storage/index.js';

export interface RateLimits {
  rps: number;
  rpm: number;
}

export interface Tenant {
  id: string;
  name: string;
  plan: Plan;
  limits: RateLimits;
  environment: Environment;
  allowedOrigins: string[];
  requireEmailVerification: boolean;
  accessTokenTtl: number;
  passwordEnabled: boolean;
  /** docs/design.md §13: whether a second factor is off, optional or required. */
  mfaPolicy: MfaPolicy;
  /** Whether the hosted pages offer passkeys. */
  passkeysEnabled: boolean;
  /** docs/design.md §14: whether apps may register themselves (RFC 7591); off by default. */
  dynamicRegistration: boolean;
  branding: { logoUrl: string | null; primaryColor: string | null };
  /** The `aud` of its access tokens; null means the default (see `audienceOf`). */
  audience: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface TenantInput {
  /** https (http on development tenants); only ever rendered, never fetched by the server. */
  logoUrl?: string | null;
  /** #rrggbb */
  primaryColor?: string | null;
  name?: string;
  plan?: Plan;
  /** Enterprise only. */
  rps?: number;
  rpm?: number;
  environment?: Environment;
  allowedOrigins?: string[];
  /** Update only: origins added to (after `allowedOrigins`, if given) the current list. */
  addOrigins?: string[];
  /** Update only: origins taken off the list. */
  removeOrigins?: string[];
  requireEmailVerification?: boolean;
  accessTokenTtl?: number;
  passwordEnabled?: boolean;
  mfaPolicy?: MfaPolicy;
  passkeysEnabled?: boolean;
  dynamicRegistration?: boolean;
  /** RFC 7519 StringOrURI; empty or null restores the default. */
  audience?: string | null;
}

export function toTenant(row: TenantRow): Tenant {
  const plan = row.plan as Plan;
  const planLimits = defaults.plans[plan];
  return {
    id: row.id,
    name: row.name,
    plan,
    limits: {
      rps: plan === 'enterprise' && row.rate_rps !== null ? row.rate_rps : planLimits.rps,
      rpm: plan === 'enterprise' && row.rate_rpm !== null ? row.rate_rpm : planLimits.rpm,
    },
    environment: row.environment as Environment,
    allowedOrigins: JSON.parse(row.allowed_origins) as string[],
    requireEmailVerification: row.require_email_verification === 1,
    accessTokenTtl: row.access_token_ttl,
    passwordEnabled: row.password_enabled === 1,
    mfaPolicy: (MFA_POLICIES as readonly string[]).includes(row.mfa_policy)
      ? (row.mfa_policy as MfaPolicy)
      : 'optional',
    passkeysEnabled: row.passkeys_enabled === 1,
    dynamicRegistration: row.dynamic_registration === 1,
    branding: { logoUrl: row.logo_url, primaryColor: row.primary_color },
    audience: row.audience,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The one scheme rule of docs/design.md §4.3, for allowed origins and redirect URLs alike:
 * https, or http only for localhost / 127.0.0.1 and only on development tenants.
 */
export function schemeProblem(url: URL, environment: Environment): string | null {
  if (url.protocol === 'https:') return null;
  if (url.protocol !== 'http:')
    return environment === 'development'
      ? 'must be an http(s) URL: https, or http://localhost on development tenants'
      : 'must be an https URL';
  if (environment !== 'development') return 'http is allowed only on development tenants';
  if (!LOOPBACK_HOSTS.has(url.hostname)) return 'http is allowed only for localhost and 127.0.0.1';
  return null;
}

/**
 * What is wrong with a logo URL, or null: the scheme rule of origins (https; http only for
 * localhost and 127.0.0.1 on development tenants), since a logo is fetched by every visitor.
 */
export function logoProblem(logoUrl: string, environment: Environment): string | null {
  let url: URL;
  try {
    url = new URL(logoUrl);
  } catch {
    return 'is not an absolute URL';
  }
  return schemeProblem(url, environment);
}

/** The tenant's logo as its pages may show it (and their CSP allow it), or null. */
export const shownLogo = (tenant: Pick<Tenant, 'branding' | 'environment'>): string | null => {
  const logo = tenant.branding.logoUrl;
  return logo && !logoProblem(logo, tenant.environment) ? logo : null;
};

/** Whether `origin` (an Origin header, or a redirect URL's origin) is one of the tenant's. */
export function isAllowedOrigin(tenant: Pick<Tenant, 'allowedOrigins'>, origin: string): boolean {
  return tenant.allowedOrigins.includes(origin);
}

/** A DNS name (labels of letters, digits, `-` and `_`; IDNs arrive as punycode), or an IP. */
const HOST_NAME = /^(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?|\[[0-9a-f:.]+\])$/;

/** An allowed origin is an exact origin (scheme, host, port; no path) that passes the scheme rule. */
export function checkOrigin(origin: string, environment: Environment): string | null {
  const bare = /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d+)?\/?$/.exec(origin);
  if (bare?.[1] && !origin.includes('://')) {
    // `localhost:5173` parses as a URL of scheme "localhost:"; say what was meant.
    const local = LOOPBACK_HOSTS.has(bare[1].toLowerCase());
    const scheme = local && environment === 'development' ? 'http' : 'https';
    return `has no scheme: use ${scheme}://${origin.replace(/\/$/, '')}`;
  }
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return schemeProblem(url, environment);
  if (url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
    return 'must be an origin only (no path, query or credentials)';
  }
  // The URL parser lets through host names no DNS name has (`a;b`, `$(x)`): such an origin
  // is never a real site, and the refused-link page must never print it in a command.
  if (!HOST_NAME.test(url.hostname)) return 'has a host that is not a DNS name or an IP address';
  return schemeProblem(url, environment);
}

function validateInput(input: TenantInput, environment: Environment, creating: boolean): void {
  const errors: FieldError[] = [];
  const name = input.name?.trim();
  if (creating && !name)
    errors.push({ path: '/name', code: 'required', message: 'name is required' });
  const { nameMaxLength, customRateMax, accessTokenTtlSeconds } = defaults.tenants;
  if (name !== undefined && (name.length === 0 || name.length > nameMaxLength)) {
    errors.push({
      path: '/name',
      code: 'name_invalid',
      message: `name must be 1 to ${nameMaxLength} characters`,
    });
  }
  if (input.plan !== undefined && !PLANS.includes(input.plan)) {
    errors.push({
      path: '/plan',
      code: 'plan_invalid',
      message: `plan must be one of ${PLANS.join(', ')}`,
    });
  }
  if (input.environment !== undefined && !ENVIRONMENTS.includes(input.environment)) {
    errors.push({
      path: '/environment',
      code: 'environment_invalid',
      message: 'environment must be development or production',
    });
  }
  for (const field of ['rps', 'rpm'] as const) {
    const value = input[field];
    const max = customRateMax[field];
    if (value !== undefined && (!Number.isInteger(value) || value < 1 || value > max)) {
      errors.push({
        path: `/${field}`,
        code: `${field}_invalid`,
        message: `${field} must be an integer from 1 to ${max}`,
      });
    }
  }
  if (
    (input.rps !== undefined || input.rpm !== undefined) &&
    input.plan !== undefined &&
    input.plan !== 'enterprise'
  ) {
    errors.push({
      path: '/plan',
      code: 'limits_need_enterprise',
      message: 'custom rps/rpm need the enterprise plan',
    });
  }
  if (input.mfaPolicy !== undefined && !MFA_POLICIES.includes(input.mfaPolicy)) {
    errors.push({
      path: '/mfaPolicy',
      code: 'mfa_policy_invalid',
      message: `mfa must be one of ${MFA_POLICIES.join(', ')}`,
    });
  }
  const ttl = input.accessTokenTtl;
  const { min, max } = accessTokenTtlSeconds;
  if (ttl !== undefined && (!Number.isInteger(ttl) || ttl < min || ttl > max)) {
    errors.push({
      path: '/accessTokenTtl',
      code: 'access_token_ttl_invalid',
      message: `token lifetime must be ${min} to ${max} seconds`,
    });
  }
  input.allowedOrigins?.forEach((origin, i) => {
    const problem = checkOrigin(origin, environment);
    if (problem)
      errors.push({
        path: `/allowedOrigins/${i}`,
        code: 'origin_invalid',
        message: `${origin} ${problem}`,
      });
  });
  if (input.logoUrl) {
    if (
      logoProblem(input.logoUrl, environment) ||
      input.logoUrl.length > defaults.tenants.logoUrlMaxLength
    ) {
      errors.push({
        path: '/logoUrl',
        code: 'logo_url_invalid',
        message:
          'logo URL must be https (http only for localhost and 127.0.0.1 on development tenants)',
      });
    }
  }
  if (input.primaryColor && !/^#[0-9a-fA-F]{6}$/.test(input.primaryColor)) {
    errors.push({
      path: '/primaryColor',
      code: 'primary_color_invalid',
      message: 'primary colour must be #rrggbb',
    });
  }
  const audienceProblem = input.audience ? checkAudience(input.audience) : null;
  if (audienceProblem)
    errors.push({ path: '/audience', code: 'audience_invalid', message: audienceProblem });
  if (errors.length) throw validationFailed(errors);
}

/**
 * RFC 7519 section 2 (StringOrURI): a value holding ":" must be a URI. Verifiers compare
 * it byte for byte, so spaces and control characters are refused too.
 */
function checkAudience(audience: string): string | null {
  const max = defaults.tenants.audienceMaxLength;
  if (audience.length > max || !/^[\x21-\x7e]+$/.test(audience))
    return `audience must be 1 to ${max} printable characters without spaces`;
  if (audience.includes(':') && !URL.canParse(audience))
    return 'an audience with ":" must be an absolute URI, e.g. https://api.example.com';
  return null;
}

/** The allowed origins after `removeOrigins` and `addOrigins` (checked like any others). */
function editedOrigins(current: Tenant, input: TenantInput): string[] {
  const base = input.allowedOrigins ?? current.allowedOrigins;
  const originOf = (o: string) => (URL.canParse(o) ? new URL(o).origin : o);
  const removed = (input.removeOrigins ?? []).map(originOf);
  const unknown = removed.filter((o) => !base.includes(o));
  if (unknown.length)
    throw validationFailed(
      unknown.map((o) => ({
        path: `/removeOrigins/${removed.indexOf(o)}`,
        code: 'origin_invalid',
        message: `${o} is not an allowed origin of this tenant (allowed: ${base.join(' ') || 'none'})`,
      })),
    );
  const kept = base.filter((o) => !removed.includes(o));
  return [...kept, ...(input.addOrigins ?? []).filter((o) => !kept.includes(originOf(o)))];
}

const normaliseOrigins = (origins: string[]) => [...new Set(origins.map((o) => new URL(o).origin))];

export async function createTenant(db: Kysely<Schema>, input: TenantInput): Promise<Tenant> {
  const environment = input.environment ?? 'development';
  const plan = input.plan ?? 'free';
  validateInput({ ...input, plan }, environment, true);
  const now = Date.now();
  const row: TenantRow = {
    id: randomUUID(),
    name: (input.name ?? '').trim(),
    plan,
    rate_rps: plan === 'enterprise' ? (input.rps ?? null) : null,
    rate_rpm: plan === 'enterprise' ? (input.rpm ?? null) : null,
    environment,
    allowed_origins: JSON.stringify(normaliseOrigins(input.allowedOrigins ?? [])),
    require_email_verification: input.requireEmailVerification ? 1 : 0,
    access_token_ttl: input.accessTokenTtl ?? defaults.accessTokenTtlSeconds,
    password_enabled: input.passwordEnabled === false ? 0 : 1,
    mfa_policy: input.mfaPolicy ?? defaults.mfa.policy,
    passkeys_enabled: input.passkeysEnabled === false ? 0 : 1,
    dynamic_registration: input.dynamicRegistration ? 1 : 0,
    logo_url: input.logoUrl || null,
    primary_color: input.primaryColor?.toLowerCase() || null,
    audience: input.audience || null,
    created_at: now,
    updated_at: now,
  };
  await insertTenant(db, row);
  return toTenant(row);
}

export async function getTenant(db: Kysely<Schema>, id: string): Promise<Tenant> {
  const row = await findTenant(db, id);
  if (!row) throw new LatchkeyError('not_found', `No tenant with id ${id}`);
  return toTenant(row);
}

export interface TenantSearch {
  /** Part of the name or of the id, in any case. */
  query?: string;
  /** The id of the last tenant of the previous page (keyset paging). */
  after?: string;
  limit: number;
  /** Only these tenants (a tenant-bound admin's); undefined: every tenant. */
  ids?: string[];
}

/**
 * One page of tenants, oldest first, and the id to pass as `after` for the next page (null
 * on the last one). docs/design.md §21: keyset paging on (created_at, id), which the
 * tenants_created index serves, so a page costs the same on the ten-thousandth tenant.
 */
export async function searchTenants(
  db: Kysely<Schema>,
  search: TenantSearch,
): Promise<{ data: Tenant[]; next: string | null }> {
  if (search.ids?.length === 0) return { data: [], next: null };
  let query = db.selectFrom('tenants').selectAll();
  if (search.ids) query = query.where('id', 'in', search.ids);
  const contains = search.query?.trim();
  if (contains) {
    // As users' search (listUserRows): LIKE's own characters are matched as typed.
    const pattern = `%${contains.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) =>
      eb.or([
        sql<boolean>`lower(${eb.ref('name')}) like lower(${pattern}) escape '\\'`,
        sql<boolean>`lower(${eb.ref('id')}) like lower(${pattern}) escape '\\'`,
      ]),
    );
  }
  if (search.after !== undefined) {
    const last = await findTenant(db, search.after);
    if (!last)
      throw validationFailed([
        { path: '/after', code: 'after_invalid', message: 'after must be the id of a tenant' },
      ]);
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', last.created_at),
        eb.and([eb('created_at', '=', last.created_at), eb('id', '>', last.id)]),
      ]),
    );
  }
  const rows = await query
    .orderBy('created_at')
    .orderBy('id')
    .limit(search.limit + 1)
    .execute();
  const page = rows.slice(0, search.limit);
  return {
    data: page.map(toTenant),
    next: rows.length > search.limit ? (page.at(-1)?.id ?? null) : null,
  };
}

/** The names of these tenants by id (a page's worth: the audit log, the outbox). */
export async function tenantNames(db: Kysely<Schema>, ids: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db
    .selectFrom('tenants')
    .select(['id', 'name'])
    .where('id', 'in', unique)
    .execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** How many tenants there are (the first-run banner). */
export async function countTenants(db: Kysely<Schema>): Promise<number> {
  const row = await db
    .selectFrom('tenants')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The checks updateTenant makes, saving nothing (the admin area's Branding preview). */
export function checkTenantUpdate(tenant: Tenant, input: Omit<TenantInput, 'environment'>): void {
  validateInput(input, tenant.environment, false);
}

/** Changes a tenant; every instance's key cache (which holds tenants) forgets it on commit. */
export async function updateTenant(
  deps: { db: Kysely<Schema>; bus: Publisher },
  id: string,
  changes: Omit<TenantInput, 'environment'>,
): Promise<Tenant> {
  return transact(deps.db, deps.bus, async ({ db, invalidate }) => {
    const current = await getTenant(db, id);
    // Origins added or removed one by one are read and written in the one transaction.
    const input =
      changes.addOrigins?.length || changes.removeOrigins?.length
        ? { ...changes, allowedOrigins: editedOrigins(current, changes) }
        : changes;
    const plan = input.plan ?? current.plan;
    validateInput(
      { ...input, plan: input.plan ?? (input.rps || input.rpm ? plan : undefined) },
      current.environment,
      false,
    );
    const update: TenantUpdate = { updated_at: Date.now() };
    if (input.name !== undefined) update.name = input.name.trim();
    if (input.plan !== undefined) update.plan = input.plan;
    if (plan !== 'enterprise') {
      update.rate_rps = null;
      update.rate_rpm = null;
    }
    if (input.rps !== undefined) update.rate_rps = input.rps;
    if (input.rpm !== undefined) update.rate_rpm = input.rpm;
    if (input.allowedOrigins !== undefined)
      update.allowed_origins = JSON.stringify(normaliseOrigins(input.allowedOrigins));
    if (input.requireEmailVerification !== undefined)
      update.require_email_verification = input.requireEmailVerification ? 1 : 0;
    if (input.accessTokenTtl !== undefined) update.access_token_ttl = input.accessTokenTtl;
    if (input.passwordEnabled !== undefined)
      update.password_enabled = input.passwordEnabled ? 1 : 0;
    if (input.mfaPolicy !== undefined) update.mfa_policy = input.mfaPolicy;
    if (input.passkeysEnabled !== undefined)
      update.passkeys_enabled = input.passkeysEnabled ? 1 : 0;
    if (input.dynamicRegistration !== undefined)
      update.dynamic_registration = input.dynamicRegistration ? 1 : 0;
    if (input.logoUrl !== undefined) update.logo_url = input.logoUrl || null;
    if (input.primaryColor !== undefined)
      update.primary_color = input.primaryColor?.toLowerCase() || null;
    if (input.audience !== undefined) update.audience = input.audience || null;
    await updateTenantRow(db, id, update);
    invalidate(`tenant:${id}`);
    return getTenant(db, id);
  });
}

// ----- The tenants table -----

export async function insertTenant(db: Kysely<Schema>, row: NewTenantRow): Promise<void> {
  await db.insertInto('tenants').values(row).execute();
}

export async function findTenant(db: Kysely<Schema>, id: string): Promise<TenantRow | undefined> {
  return db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateTenantRow(
  db: Kysely<Schema>,
  id: string,
  update: TenantUpdate,
): Promise<void> {
  await db.updateTable('tenants').set(update).where('id', '=', id).execute();
}
