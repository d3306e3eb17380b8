import { randomUUID, sign } from 'node:crypto';
import { tracedSync } from '../../tracing/tracing.js';
import type { User } from '../users/index.js';
import { type ActiveKey, SIGNING_ALG } from './signing-keys.service.js';

/** The `scope` claim of user access tokens. */
const USER_TOKEN_SCOPE = 'openid email profile';

/** What an access token says of its session (session-issuing.ts's OpenedSession). */
export interface AccessTokenSubject {
  sessionId: string;
  user: Pick<User, 'id' | 'email' | 'roles'>;
  authentication: { amr: readonly string[] | undefined; authTime: number };
}

/** Each key's encoded JWS header, made once: it is the same for every token the key signs. */
const headers = new WeakMap<ActiveKey, string>();

function encodedHeader(signer: ActiveKey): string {
  let header = headers.get(signer);
  if (header === undefined) {
    // RFC 9068 section 2.1: typ "at+jwt"; RFC 8725 section 3.1: one algorithm, pinned.
    const json = JSON.stringify({ alg: SIGNING_ALG, typ: 'at+jwt', kid: signer.kid });
    header = Buffer.from(json).toString('base64url');
    headers.set(signer, header);
  }
  return header;
}

/**
 * A user's access token (RFC 9068), signed at once: the JWS Compact Serialization (RFC 7515
 * section 7.1) of its claims, with node:crypto's RSASSA-PKCS1-v1_5 SHA-256 (RS256, RFC 7518
 * section 3.3) and a private KeyObject made once per key. Synchronous: a refresh signs in
 * the turn that committed its rotation, with no trip to the thread pool, and nothing can
 * fail once the key is in hand. The claims are those jose's SignJWT wrote, in its order.
 */
export function signAccessToken(
  issuer: string,
  audience: string,
  ttlSeconds: number,
  subject: AccessTokenSubject,
  tenantId: string,
  signer: ActiveKey,
): string {
  const { user, sessionId, authentication } = subject;
  const iat = Math.floor(Date.now() / 1000);
  const claims = {
    email: user.email,
    tid: tenantId,
    sid: sessionId,
    roles: user.roles,
    scope: USER_TOKEN_SCOPE,
    // Section 2.2's client_id: every app of a tenant is one client, named by the tenant id
    // (the id that also authenticates introspection, RFC 7662 section 2.1).
    client_id: tenantId,
    // RFC 8176 / OpenID Connect Core section 2: how and when the person authenticated,
    // the session's own (a refresh is no new authentication).
    ...(authentication.amr ? { amr: authentication.amr } : {}),
    auth_time: authentication.authTime,
    iss: issuer,
    aud: audience,
    sub: user.id,
    iat,
    exp: iat + ttlSeconds,
    jti: randomUUID(),
  };
  const input = `${encodedHeader(signer)}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const signature = tracedSync('jwt sign', { 'jwt.alg': SIGNING_ALG }, () =>
    sign('sha256', Buffer.from(input), signer.key),
  );
  return `${input}.${signature.toString('base64url')}`;
}
