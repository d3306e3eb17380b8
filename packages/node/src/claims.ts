/** The claims of a verified Latchkey access token. */
export interface LatchkeyClaims {
  /** Issuer: `{authUrl}/t/{tenantId}`. */
  iss: string;
  /** The user's id (UUID). */
  sub: string;
  email: string;
  /** The tenant's id (UUID). */
  tid: string;
  /** The session's id (UUID); revoking the session ends the token at introspection. */
  sid: string;
  roles: string[];
  /** Space-separated scopes. */
  scope: string;
  /** Issued at, seconds since the epoch. */
  iat: number;
  /** Expires at, seconds since the epoch. */
  exp: number;
  /** The token's unique id. */
  jti: string;
  /** The tenant's API audience (RFC 9068 section 2.2): `{authUrl}/t/{tenantId}/api` unless set. */
  aud: string;
  /** RFC 9068 section 2.2: the tenant id. */
  client_id: string;
  /**
   * How the person authenticated for this session (RFC 8176 values): `["pwd"]` a password,
   * `["fed"]` a social provider. Absent on sessions opened before Latchkey recorded it.
   */
  amr?: string[];
  /**
   * When the person authenticated, seconds since the epoch. A refresh keeps it: it is the
   * sign-in's time, not the token's (`iat`).
   */
  auth_time?: number;
}

const STRING_CLAIMS = [
  'iss',
  'sub',
  'email',
  'tid',
  'sid',
  'scope',
  'jti',
  'aud',
  'client_id',
] as const;
const NUMBER_CLAIMS = ['iat', 'exp'] as const;

/** Names of the claims that are absent or of the wrong type; empty when the set is sound. */
export function invalidClaims(payload: Record<string, unknown>): string[] {
  const invalid: string[] = [];
  for (const name of STRING_CLAIMS) {
    const value = payload[name];
    if (typeof value !== 'string' || (name !== 'scope' && value === '')) invalid.push(name);
  }
  for (const name of NUMBER_CLAIMS) {
    if (!Number.isFinite(payload[name])) invalid.push(name);
  }
  const roles = payload.roles;
  if (!Array.isArray(roles) || !roles.every((role) => typeof role === 'string')) {
    invalid.push('roles');
  }
  const { amr, auth_time } = payload;
  if (amr !== undefined && !(Array.isArray(amr) && amr.every((m) => typeof m === 'string'))) {
    invalid.push('amr');
  }
  if (auth_time !== undefined && !Number.isFinite(auth_time)) invalid.push('auth_time');
  return invalid;
}

/** Copies exactly the Latchkey claims, so nothing else a token carries leaks into `req.auth`. */
export function pickClaims(payload: Record<string, unknown>): LatchkeyClaims {
  const claims = payload as unknown as LatchkeyClaims;
  return {
    iss: claims.iss,
    sub: claims.sub,
    email: claims.email,
    tid: claims.tid,
    sid: claims.sid,
    roles: [...claims.roles],
    scope: claims.scope,
    iat: claims.iat,
    exp: claims.exp,
    jti: claims.jti,
    aud: claims.aud,
    client_id: claims.client_id,
    ...(claims.amr === undefined ? {} : { amr: [...claims.amr] }),
    ...(claims.auth_time === undefined ? {} : { auth_time: claims.auth_time }),
  };
}
