import { defaults } from '../../config/defaults.js';
import {
  issuerOf,
  type ParsedToken,
  parseAccessToken,
  type Sessions,
  type SessionUser,
  SIGNING_ALG,
  type SigningKeys,
  type VerificationKey,
  verifyAccessToken,
} from '../sessions/index.js';
import type { Tenant } from '../tenants/index.js';
import type { VerifiedTokens } from './verified-tokens.js';

/** Claims every active answer carries (RFC 7662 section 2.2, RFC 9068 section 2.2). */
interface TokenClaims {
  active: true;
  sub: string;
  tid: string;
  scope: string;
  exp: number;
  iat: number;
  iss: string;
  jti: string;
  /** RFC 7662 section 2.2 and RFC 9068 section 2.2; absent only on tokens minted before them. */
  aud?: string;
  token_type: 'Bearer';
}

/** A person's token (docs/design.md §5.1), of a Latchkey session. */
interface UserClaims extends TokenClaims {
  email: string;
  sid: string;
  roles: string[];
  client_id?: string;
  /** RFC 8176 methods of the session's authentication; absent on sessions older than it. */
  amr?: string[];
  /** When the person authenticated (epoch seconds); absent only on tokens minted before it. */
  auth_time?: number;
}

/**
 * An m2m app's client-credentials token (docs/design.md §14): the app is its own subject
 * (`sub` = `client_id` = its id), with no session, e-mail or roles.
 */
interface AppClaims extends TokenClaims {
  client_id: string;
}

export type ActiveClaims = UserClaims | AppClaims;

export type Introspection = { active: false } | ActiveClaims;

/** Where the app of a client-credentials token is looked up (modules/oauth's AppCredentials). */
interface TokenApps {
  /** From memory alone; null when only the database can answer. */
  cachedIsM2m(tenantId: string, appId: string): boolean | null;
  isM2m(tenantId: string, appId: string): Promise<boolean>;
}

export interface IntrospectionDeps {
  signingKeys: SigningKeys;
  sessions: Sessions;
  authUrl: string;
  /** Tokens already verified; without it every token is verified again. */
  verifiedTokens?: VerifiedTokens<ActiveClaims>;
  /** The tenants' apps; without them an app's client-credentials token is inactive. */
  apps?: TokenApps;
}

const INACTIVE: Introspection = Object.freeze({ active: false });
/** Seconds of clock skew tolerated for `iat` in the future. */
const SKEW_SECONDS = 60;

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function claimsOf(payload: Record<string, unknown>): ActiveClaims | undefined {
  const { sub, email, tid, sid, roles, scope, exp, iat, iss, jti, aud, client_id, amr, auth_time } =
    payload;
  if (
    typeof sub !== 'string' ||
    typeof tid !== 'string' ||
    typeof scope !== 'string' ||
    typeof jti !== 'string' ||
    typeof iss !== 'string'
  )
    return;
  if (typeof exp !== 'number' || typeof iat !== 'number') return;
  // docs/design.md §14: a client-credentials token, whose subject is the app itself. Whether
  // that app still exists is checked on every use (withApp), as a session is for the others.
  if (sid === undefined && email === undefined && roles === undefined && client_id === sub)
    return {
      active: true,
      sub,
      tid,
      scope,
      exp,
      iat,
      iss,
      jti,
      ...(typeof aud === 'string' ? { aud } : {}),
      client_id: sub,
      token_type: 'Bearer',
    };
  if (typeof email !== 'string' || typeof sid !== 'string' || !isStringArray(roles)) return;
  return {
    active: true,
    sub,
    email,
    tid,
    sid,
    roles,
    scope,
    exp,
    iat,
    iss,
    jti,
    ...(typeof aud === 'string' ? { aud } : {}),
    ...(typeof client_id === 'string' ? { client_id } : {}),
    // Signed claims of the session, which never change: no look-up needed.
    ...(isStringArray(amr) ? { amr } : {}),
    ...(typeof auth_time === 'number' ? { auth_time } : {}),
    token_type: 'Bearer',
  };
}

/** Step 1: a token is a short string of three base64url parts. */
function sized(token: string): boolean {
  return token.length > 0 && token.length <= defaults.maxTokenLength;
}

/**
 * Steps 2 to 4 for a token not seen before (or forgotten): a well-formed token of this
 * tenant, signed by one of its live keys, within its lifetime. One that passes is kept in
 * `verifiedTokens` from its second verification on (VerifiedTokens.keep says why), which
 * forgets it at `exp`, and everything when a signing key is revoked.
 * Answered without an await when the tenant's key is in memory.
 */
function verifiedClaims(
  deps: IntrospectionDeps,
  tenant: Tenant,
  token: string,
): ActiveClaims | undefined | Promise<ActiveClaims | undefined> {
  const readAt = deps.verifiedTokens?.generation ?? 0;
  // 2. RFC 8725 section 3.1: one algorithm; RFC 9068 section 2.1: typ at+jwt. The key
  //    comes from our store by kid within the caller's tenant; jku, x5u and jwk are ignored.
  const parsed = parseAccessToken(token, SIGNING_ALG);
  if (!parsed) return undefined;
  const key = deps.signingKeys.cachedVerificationKey(tenant.id, parsed.kid);
  if (key !== null) return checkedClaims(deps, tenant, parsed, key, token, readAt);
  return deps.signingKeys
    .verificationKey(tenant.id, parsed.kid)
    .then((found) => checkedClaims(deps, tenant, parsed, found, token, readAt));
}

/** Step 3 and 4 with the key in hand. */
function checkedClaims(
  deps: IntrospectionDeps,
  tenant: Tenant,
  parsed: ParsedToken,
  key: VerificationKey | undefined,
  token: string,
  readAt: number,
): ActiveClaims | undefined {
  if (!key) return undefined;
  // 3. Signature, expiry, not-before, issuer.
  const now = Date.now();
  const payload = verifyAccessToken(
    parsed,
    key.key,
    issuerOf(deps.authUrl, tenant.id),
    Math.floor(now / 1000),
  );
  const claims = payload && claimsOf(payload);
  // 4. Rule 1 of docs/design.md §5.4: a token of another tenant is inactive; an `iat` in the
  //    future is not believed.
  if (!claims || claims.tid !== tenant.id) return undefined;
  if (claims.iat > now / 1000 + SKEW_SECONDS) return undefined;
  // exp is in whole seconds: the token is active while now < exp * 1000, as checked above.
  deps.verifiedTokens?.keep(
    token,
    { tenantId: tenant.id, claims },
    readAt,
    Math.min(claims.exp * 1000, key.publishUntil ?? Number.POSITIVE_INFINITY),
  );
  return claims;
}

/**
 * docs/design.md §5.4 and RFC 7662, as named steps. Every failure answers exactly
 * `{ active: false }`: the caller learns nothing about why. When the tenant's key, the
 * token (or only the key: then RSA) and the session are in memory, the answer comes
 * without an await and is not a promise (the hot path); otherwise it waits for the
 * database.
 */
export function introspect(
  deps: IntrospectionDeps,
  tenant: Tenant,
  token: string,
): Introspection | Promise<Introspection> {
  if (!sized(token)) return INACTIVE;
  const hit = deps.verifiedTokens?.get(token);
  // A token kept for one tenant is another tenant's foreign token (rule 1).
  if (hit)
    return hit.tenantId === tenant.id ? withSession(deps, tenant, hit.claims, true) : INACTIVE;
  const claims = verifiedClaims(deps, tenant, token);
  return claims instanceof Promise
    ? claims.then((found) => withSession(deps, tenant, found, false))
    : withSession(deps, tenant, claims, false);
}

/**
 * 5. The session is live and its user exists and is enabled; e-mail and roles are the
 *    user's current ones, not the token's snapshot (a demoted admin is demoted at once).
 */
function withSession(
  deps: IntrospectionDeps,
  tenant: Tenant,
  claims: ActiveClaims | undefined,
  seenBefore: boolean,
): Introspection | Promise<Introspection> {
  if (!claims) return INACTIVE;
  if (!('sid' in claims)) return withApp(deps, tenant, claims, seenBefore);
  const cached = deps.sessions.cachedState(claims.sid, claims.sub);
  if (cached !== null) return answer(claims, cached, seenBefore);
  return deps.sessions
    .state(tenant.id, claims.sid, claims.sub)
    .then((current) => answer(claims, current, seenBefore));
}

/**
 * 5'. docs/design.md §14: an app's client-credentials token is active while its app exists
 *     (an m2m app of this tenant). A user's token never comes here: its hot path is as before.
 */
function withApp(
  deps: IntrospectionDeps,
  tenant: Tenant,
  claims: AppClaims,
  seenBefore: boolean,
): Introspection | Promise<Introspection> {
  if (!deps.apps) return INACTIVE;
  const cached = deps.apps.cachedIsM2m(tenant.id, claims.sub);
  if (cached !== null) return cached ? appAnswer(claims, seenBefore) : INACTIVE;
  return deps.apps
    .isM2m(tenant.id, claims.sub)
    .then((exists) => (exists ? appAnswer(claims, seenBefore) : INACTIVE));
}

/** An app's token answers with its own claims; one asked about again keeps its JSON. */
function appAnswer(claims: AppClaims, seenBefore: boolean): Introspection {
  if (!seenBefore) return { ...claims };
  if (!serialized.has(claims)) serialized.set(Object.freeze(claims), serialize(claims));
  return claims;
}

/** An answer's JSON and its length in bytes. */
interface Serialized {
  json: string;
  length: number;
}

function serialize(result: Introspection): Serialized {
  const json = JSON.stringify(result);
  return { json, length: Buffer.byteLength(json) };
}

/**
 * The answer last built for a token asked about again, with the session's user it was
 * built from. The claims object lives as long as the token's entry in `verifiedTokens`,
 * the user object as long as the session's cached state: when either is dropped or
 * replaced (a revocation, new roles, a disabled or deleted user, expiry), the answer is
 * built afresh.
 */
const answers = new WeakMap<ActiveClaims, { user: SessionUser; answer: ActiveClaims }>();
/** The JSON of `INACTIVE` and of every kept answer, made when it is kept. */
const serialized = new WeakMap<Introspection, Serialized>([[INACTIVE, serialize(INACTIVE)]]);

function answer(
  claims: UserClaims,
  current: SessionUser | undefined,
  seenBefore: boolean,
): Introspection {
  if (!current) return INACTIVE;
  // A token asked about once (a cold one) keeps nothing.
  if (!seenBefore) return { ...claims, email: current.email, roles: current.roles };
  const kept = answers.get(claims);
  if (kept?.user === current) return kept.answer;
  // Frozen: the same object goes to every later caller.
  const built = Object.freeze({ ...claims, email: current.email, roles: current.roles });
  answers.set(claims, { user: current, answer: built });
  serialized.set(built, serialize(built));
  return built;
}

/** The JSON of an answer of `introspect`, with its length in bytes. */
export function introspectionJson(result: Introspection): Serialized {
  return serialized.get(result) ?? serialize(result);
}
