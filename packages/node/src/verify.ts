import { errors, jwtVerify } from 'jose';
import { invalidClaims, type LatchkeyClaims, pickClaims } from './claims.js';
import { MAX_TOKEN_LENGTH, type ResolvedConfig, requireTenantId } from './config.js';
import { LatchkeyTokenError, type LatchkeyTokenErrorCode } from './errors.js';
import { cachedJwks } from './jwks.js';

export type VerifyToken = (token: string) => Promise<LatchkeyClaims>;

/**
 * Local verification against the tenant's JWKS (RFC 9068 section 4, RFC 8725).
 * The key set is cached for a minute (a revoked key stops verifying within it) and
 * refetched when a token names a `kid` it does not hold (jwks.ts).
 */
export function createVerifier(config: ResolvedConfig): VerifyToken {
  let verifier: VerifyToken | undefined;
  return async (token) => {
    verifier ??= buildVerifier(config, requireTenantId(config));
    return verifier(token);
  };
}

function buildVerifier(config: ResolvedConfig, tenantId: string): VerifyToken {
  const issuer = `${config.authUrl}/t/${tenantId}`;
  const jwksUrl = new URL(`${issuer}/.well-known/jwks.json`);
  // Only keys from this URL are ever used: header-supplied `jwk`, `jku` and `x5u` are ignored
  // (RFC 8725 section 3.10), and `algorithms` pins RS256 so `none` and HS256 are refused.
  const jwks = cachedJwks(jwksUrl, (input, init) => (config.fetch ?? fetch)(input, init));

  return async (token) => {
    if (typeof token !== 'string' || token === '') {
      throw tokenError('token_missing', 'No access token was given.');
    }
    if (token.length > MAX_TOKEN_LENGTH) {
      throw tokenError(
        'token_malformed',
        `The access token is longer than ${MAX_TOKEN_LENGTH} characters.`,
      );
    }
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        algorithms: ['RS256'],
        typ: 'at+jwt',
        issuer,
        ...(config.audience === undefined ? {} : { audience: config.audience }),
        requiredClaims: ['exp', 'iat'],
        clockTolerance: config.clockToleranceSeconds,
      }));
    } catch (error) {
      throw mapJoseError(error, jwksUrl);
    }
    // jose checks iat only against a maximum age: a token "issued" in the future comes from
    // a clock far off or a forger, and is refused beyond the leeway (RFC 7519 section 4.1.6).
    if (
      typeof payload.iat === 'number' &&
      payload.iat > Date.now() / 1000 + config.clockToleranceSeconds
    ) {
      throw tokenError('token_not_yet_valid', 'The access token was issued in the future (iat).');
    }
    if (payload.tid !== tenantId) {
      throw tokenError('tenant_mismatch', 'The access token belongs to another tenant.');
    }
    const invalid = invalidClaims(payload);
    if (invalid.length > 0) {
      throw tokenError(
        'claims_invalid',
        `The access token's claims are invalid: ${invalid.join(', ')}.`,
      );
    }
    return pickClaims(payload);
  };
}

function mapJoseError(error: unknown, jwksUrl: URL): LatchkeyTokenError {
  if (error instanceof errors.JWTExpired) {
    return tokenError('token_expired', 'The access token has expired.', error);
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'nbf':
        return tokenError('token_not_yet_valid', 'The access token is not valid yet (nbf).', error);
      case 'iss':
        return tokenError(
          'issuer_mismatch',
          'The access token was not issued by this tenant.',
          error,
          {
            action:
              'Check that authUrl (LATCHKEY_AUTH_URL) is the public URL of the Latchkey service.',
          },
        );
      case 'aud':
        return tokenError(
          'audience_mismatch',
          'The access token is meant for another API (aud).',
          error,
          {
            action:
              "Set audience (LATCHKEY_AUDIENCE) to the tenant's audience, as `latchkey tenant show` prints it.",
          },
        );
      case 'typ':
        return tokenError(
          'token_malformed',
          'The token is not an access token (typ is not at+jwt).',
          error,
        );
      default:
        return tokenError(
          'claims_invalid',
          `The access token's "${error.claim}" claim is invalid.`,
          error,
        );
    }
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return tokenError('signature_invalid', 'The access token signature is invalid.', error);
  }
  if (error instanceof errors.JWKSMultipleMatchingKeys) {
    return tokenError(
      'signature_invalid',
      'No key of this tenant verifies the access token.',
      error,
    );
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return tokenError('signature_invalid', 'The access token is not signed with RS256.', error);
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return tokenError(
      'key_not_found',
      'No key of this tenant matches the access token (kid).',
      error,
    );
  }
  if (
    error instanceof errors.JWSInvalid ||
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JOSENotSupported
  ) {
    return tokenError('token_malformed', 'The access token is not a well-formed JWT.', error);
  }
  // Everything else happened while fetching or reading the key set: a timeout, a network
  // error, a non-200 answer, a body that is not a JWKS, or a key that cannot be imported.
  return tokenError(
    'jwks_unavailable',
    `The tenant's signing keys could not be fetched from ${jwksUrl.href}.`,
    error,
    {
      action:
        'Check that authUrl (LATCHKEY_AUTH_URL) and tenantId are right and the service is reachable.',
    },
  );
}

function tokenError(
  code: LatchkeyTokenErrorCode,
  reason: string,
  cause?: unknown,
  extra: { action?: string } = {},
): LatchkeyTokenError {
  return new LatchkeyTokenError(code, { reason, action: extra.action, cause });
}
