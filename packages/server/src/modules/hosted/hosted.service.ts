import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Schema } from '../../storage/index.js';
import type { KeyResolver } from '../keys/index.js';
import type { Sessions, TokenSet } from '../sessions/index.js';
import type { Tenant } from '../tenants/index.js';
import { getUser, type User } from '../users/index.js';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const token = () => randomBytes(32).toString('base64url');

/** The hosted page's own sign-in lasts this long in its cookie. */
export const BROWSER_SESSION_MS = 7 * 24 * 60 * 60_000;
const CODE_LIFETIME_MS = 2 * 60_000;
const LINK_LIFETIME_MS = { verify: 24 * 60 * 60_000, reset: 60 * 60_000 } as const;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** What a caller asked for when it sent the browser to the hosted page. */
export interface HostedRequest {
  tenant: Tenant;
  publishableKey: string;
  redirectUrl: URL;
  state: string | undefined;
  codeChallenge: string | undefined;
}

export class Refusal extends Error {
  override name = 'Refusal';
}

export interface HostedDeps {
  db: Kysely<Schema>;
  keys: KeyResolver;
  sessions: Sessions;
}

/** Checks pk and redirect_url exactly as DESIGN section 4 says; refusals are pages, never redirects. */
export async function checkHostedRequest(
  deps: HostedDeps,
  query: Record<string, unknown>,
): Promise<HostedRequest> {
  const str = (name: string) =>
    typeof query[name] === 'string' ? (query[name] as string) : undefined;
  const pk = str('pk');
  if (!pk) throw new Refusal('This sign-in link has no publishable key (pk).');
  const found = pk.startsWith('pk_') ? await deps.keys.resolve(pk) : undefined;
  if (found?.key.kind !== 'publishable') {
    throw new Refusal('This sign-in link has an unknown or revoked publishable key.');
  }
  const tenant = found.tenant;
  const raw = str('redirect_url');
  if (!raw) throw new Refusal('This sign-in link does not say where to return (redirect_url).');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Refusal('The return address (redirect_url) must be an absolute URL.');
  }
  if (raw.length > 2048) throw new Refusal('The return address is too long.');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Refusal('The return address must be an https address.');
  }
  if (url.username || url.password || raw.includes('#')) {
    throw new Refusal('The return address may not carry credentials or a fragment.');
  }
  if (
    url.protocol === 'http:' &&
    (tenant.environment !== 'development' || !LOOPBACK.has(url.hostname))
  ) {
    throw new Refusal(
      'The return address must use https (http is allowed only for localhost in development).',
    );
  }
  if (!tenant.allowedOrigins.includes(url.origin)) {
    throw new Refusal(`${url.origin} is not an allowed origin of this application.`);
  }
  const state = str('state');
  if (state !== undefined && state.length > 512)
    throw new Refusal('The state parameter is too long.');
  const codeChallenge = str('code_challenge');
  if (codeChallenge !== undefined) {
    if (str('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(codeChallenge)) {
      throw new Refusal('code_challenge must be a base64url SHA-256 (code_challenge_method=S256).');
    }
  }
  return { tenant, publishableKey: pk, redirectUrl: url, state, codeChallenge };
}

/**
 * Whether a click on the caller's own page started this request: browsers send that page's
 * origin as the Referer of a cross-origin navigation (the default strict-origin-when-cross-
 * origin policy), and no other site can make them send it. The browser library's provider
 * buttons go straight to the provider this way (DESIGN 10), protected as RFC 9700 section
 * 2.1 says: the exact allowed origin, PKCE S256 and `state` keep the code for that page.
 */
export function startedOnCallerPage(request: HostedRequest, referer: string | undefined): boolean {
  if (!referer) return false;
  try {
    return new URL(referer).origin === request.redirectUrl.origin;
  } catch {
    return false;
  }
}

/** The query string that carries a hosted request from page to page. */
export function hostedQuery(request: HostedRequest): string {
  const q = new URLSearchParams({
    pk: request.publishableKey,
    redirect_url: request.redirectUrl.href,
  });
  if (request.state !== undefined) q.set('state', request.state);
  if (request.codeChallenge !== undefined) {
    q.set('code_challenge', request.codeChallenge);
    q.set('code_challenge_method', 'S256');
  }
  return q.toString();
}

/** Starts an API session and builds the redirect: tokens in the fragment, never the query. */
export async function completeSignIn(
  deps: HostedDeps,
  request: HostedRequest,
  user: User,
  ip: string,
): Promise<string> {
  const tokens = await deps.sessions.start(request.tenant, user, { ip });
  const fragment = new URLSearchParams({
    access_token: tokens.accessToken,
    token_type: 'Bearer',
    expires_in: String(tokens.expiresIn),
    tenant_id: request.tenant.id,
  });
  if (request.state !== undefined) fragment.set('state', request.state);
  if (request.codeChallenge !== undefined) {
    const code = token();
    const now = Date.now();
    await deps.db
      .insertInto('auth_codes')
      .values({
        hash: sha256(code),
        tenant_id: request.tenant.id,
        session_id: tokens.sessionId,
        code_challenge: request.codeChallenge,
        redirect_origin: request.redirectUrl.origin,
        created_at: now,
        expires_at: now + CODE_LIFETIME_MS,
        used_at: null,
      })
      .execute();
    fragment.set('code', code);
  }
  return `${request.redirectUrl.href}#${fragment.toString()}`;
}

/**
 * RFC 7636 section 4.6: the code works once, within two minutes, for the verifier whose
 * S256 hash was sent, from the origin it was issued to.
 */
export async function redeemCode(
  deps: HostedDeps,
  tenant: Tenant,
  input: { code: string; codeVerifier: string; origin: string | undefined },
): Promise<TokenSet | undefined> {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(input.codeVerifier)) return undefined;
  const hash = sha256(input.code);
  const row = await deps.db
    .selectFrom('auth_codes')
    .selectAll()
    .where('hash', '=', hash)
    .where('tenant_id', '=', tenant.id)
    .executeTakeFirst();
  if (!row) return undefined;
  // Only the browser page the code was sent to may redeem it (its Origin is sent by browsers).
  if (input.origin !== row.redirect_origin) return undefined;
  // Checked before the code is claimed, so that a wrong guess cannot burn it for its owner.
  const challenge = createHash('sha256').update(input.codeVerifier).digest('base64url');
  if (challenge !== row.code_challenge || row.expires_at <= Date.now()) return undefined;
  const claimed = await deps.db
    .updateTable('auth_codes')
    .set({ used_at: Date.now() })
    .where('hash', '=', hash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) !== 1) {
    // RFC 6749 section 4.1.2: a code used twice revokes what it gave.
    await deps.sessions.revoke(tenant.id, { sessionId: row.session_id }, 'code_reused');
    return undefined;
  }
  return deps.sessions.issueFor(tenant, row.session_id, (id) => getUser(deps.db, tenant.id, id));
}

/** A new cookie value each time (no fixation); only its hash is stored. */
export async function startBrowserSession(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
): Promise<string> {
  const value = token();
  const now = Date.now();
  await db
    .insertInto('hosted_sessions')
    .values({
      hash: sha256(value),
      tenant_id: tenantId,
      user_id: userId,
      created_at: now,
      expires_at: now + BROWSER_SESSION_MS,
      revoked_at: null,
    })
    .execute();
  return value;
}

export async function browserSessionUser(
  db: Kysely<Schema>,
  tenantId: string,
  value: string,
): Promise<User | undefined> {
  const row = await db
    .selectFrom('hosted_sessions')
    .select(['user_id', 'expires_at', 'revoked_at'])
    .where('hash', '=', sha256(value))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!row || row.revoked_at !== null || row.expires_at <= Date.now()) return undefined;
  const user = await getUser(db, tenantId, row.user_id).catch(() => undefined);
  return user && !user.disabled ? user : undefined;
}

/** Signs a user's browsers out of the hosted page (password reset, sign out everywhere). */
export async function endUserBrowserSessions(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
): Promise<void> {
  await db
    .updateTable('hosted_sessions')
    .set({ revoked_at: Date.now() })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function endBrowserSession(db: Kysely<Schema>, value: string): Promise<void> {
  await db
    .updateTable('hosted_sessions')
    .set({ revoked_at: Date.now() })
    .where('hash', '=', sha256(value))
    .execute();
}

/** Makes a one-time link token for an e-mail; returns the token to put in the link. */
export async function createEmailToken(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
  purpose: 'verify' | 'reset',
  returnTo: string | null,
): Promise<string> {
  const value = token();
  const now = Date.now();
  await db
    .insertInto('email_tokens')
    .values({
      hash: sha256(value),
      tenant_id: tenantId,
      user_id: userId,
      purpose,
      return_to: returnTo,
      created_at: now,
      expires_at: now + LINK_LIFETIME_MS[purpose],
      used_at: null,
    })
    .execute();
  return value;
}

/** Voids every unused link of a purpose for a user (after a password reset). */
export async function voidEmailTokens(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
  purpose: 'verify' | 'reset',
): Promise<void> {
  await db
    .updateTable('email_tokens')
    .set({ used_at: Date.now() })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute();
}

/** Uses an e-mail link token once; undefined when unknown, used, expired or of another purpose. */
export async function useEmailToken(
  db: Kysely<Schema>,
  value: string,
  purpose: 'verify' | 'reset',
) {
  const hash = sha256(value);
  const row = await db
    .selectFrom('email_tokens')
    .selectAll()
    .where('hash', '=', hash)
    .executeTakeFirst();
  if (!row || row.purpose !== purpose || row.used_at !== null || row.expires_at <= Date.now())
    return undefined;
  const result = await db
    .updateTable('email_tokens')
    .set({ used_at: Date.now() })
    .where('hash', '=', hash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1 ? row : undefined;
}

/** Peeks at an e-mail link token without using it (to show the form it leads to). */
export async function peekEmailToken(
  db: Kysely<Schema>,
  value: string,
  purpose: 'verify' | 'reset',
) {
  const row = await db
    .selectFrom('email_tokens')
    .selectAll()
    .where('hash', '=', sha256(value))
    .executeTakeFirst();
  if (!row || row.purpose !== purpose || row.used_at !== null || row.expires_at <= Date.now())
    return undefined;
  return row;
}

export const newId = randomUUID;
