import { decodeProtectedHeader, type JWTPayload, jwtVerify } from 'jose';
import { defaults } from '../../config/defaults.js';
import { issuerOf, type Sessions, SIGNING_ALG, type SigningKeys } from '../sessions/index.js';
import type { Tenant } from '../tenants/index.js';

export type Introspection =
  | { active: false }
  | {
      active: true;
      sub: string;
      email: string;
      tid: string;
      sid: string;
      roles: string[];
      scope: string;
      exp: number;
      iat: number;
      iss: string;
      jti: string;
      /** RFC 7662 section 2.2 and RFC 9068 section 2.2; absent only on tokens minted before them. */
      aud?: string;
      client_id?: string;
      token_type: 'Bearer';
    };

export interface IntrospectionDeps {
  signingKeys: SigningKeys;
  sessions: Sessions;
  authUrl: string;
}

const INACTIVE: Introspection = Object.freeze({ active: false });
/** Seconds of clock skew tolerated for `iat` in the future. */
const SKEW_SECONDS = 60;

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function claimsOf(payload: JWTPayload): Extract<Introspection, { active: true }> | undefined {
  const { sub, email, tid, sid, roles, scope, exp, iat, iss, jti, aud, client_id } =
    payload as Record<string, unknown>;
  if (
    typeof sub !== 'string' ||
    typeof email !== 'string' ||
    typeof tid !== 'string' ||
    typeof sid !== 'string'
  )
    return;
  if (
    !isStringArray(roles) ||
    typeof scope !== 'string' ||
    typeof jti !== 'string' ||
    typeof iss !== 'string'
  )
    return;
  if (typeof exp !== 'number' || typeof iat !== 'number') return;
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
    token_type: 'Bearer',
  };
}

/**
 * Reference section 4.2 and RFC 7662, as named steps. Every failure answers exactly
 * `{ active: false }`: the caller learns nothing about why.
 */
export async function introspect(
  deps: IntrospectionDeps,
  tenant: Tenant,
  token: string,
): Promise<Introspection> {
  // 1. A token is a short string of three base64url parts.
  if (token.length === 0 || token.length > defaults.maxTokenLength) return INACTIVE;
  // 2. RFC 8725 section 3.1: one algorithm; RFC 9068 section 2.1: typ at+jwt. The key
  //    comes from our store by kid within the caller's tenant; jku, x5u and jwk are ignored.
  let kid: unknown;
  try {
    const header = decodeProtectedHeader(token);
    if (header.alg !== SIGNING_ALG || header.typ !== 'at+jwt') return INACTIVE;
    kid = header.kid;
  } catch {
    return INACTIVE;
  }
  if (typeof kid !== 'string' || kid.length === 0 || kid.length > 64) return INACTIVE;
  const key = await deps.signingKeys.verificationKey(tenant.id, kid);
  if (!key) return INACTIVE;
  // 3. Signature, expiry, not-before, issuer.
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, key, {
      algorithms: [SIGNING_ALG],
      typ: 'at+jwt',
      issuer: issuerOf(deps.authUrl, tenant.id),
      requiredClaims: ['exp', 'iat', 'sub', 'jti'],
    }));
  } catch {
    return INACTIVE;
  }
  const claims = claimsOf(payload);
  // 4. Rule 1 of the reference: a token of another tenant is inactive.
  if (!claims || claims.tid !== tenant.id) return INACTIVE;
  if (claims.iat > Date.now() / 1000 + SKEW_SECONDS) return INACTIVE;
  // 5. The session is live and its user exists and is enabled; e-mail and roles are the
  //    user's current ones, not the token's snapshot (a demoted admin is demoted at once).
  const current = await deps.sessions.state(tenant.id, claims.sid, claims.sub);
  if (!current) return INACTIVE;
  return { ...claims, email: current.email, roles: current.roles };
}
