/**
 * The closed set of errors the SDK throws. Every error has a stable `code`, a `reason`
 * (what went wrong) and, where the caller can fix it, an `action` (what to do).
 * No message ever contains a token or a secret key.
 */

/** Codes of {@link LatchkeyError} thrown for configuration and connectivity problems. */
export const CONFIG_ERROR_CODES = [
  'secret_key_missing',
  'secret_key_invalid',
  'tenant_id_missing',
  'tenant_id_invalid',
  'option_invalid',
  'api_unreachable',
  'session_config_missing',
] as const;

/** Codes of {@link LatchkeyTokenError}: why a token was rejected. */
export const TOKEN_ERROR_CODES = [
  'token_missing',
  'token_malformed',
  'token_expired',
  'token_not_yet_valid',
  'signature_invalid',
  'issuer_mismatch',
  'audience_mismatch',
  'tenant_mismatch',
  'key_not_found',
  'jwks_unavailable',
  'claims_invalid',
] as const;

export type LatchkeyConfigErrorCode = (typeof CONFIG_ERROR_CODES)[number];
export type LatchkeyTokenErrorCode = (typeof TOKEN_ERROR_CODES)[number];

export interface LatchkeyErrorDetails {
  /** What went wrong, in a sentence. */
  reason: string;
  /** What to do about it, when the caller can do something. */
  action?: string | undefined;
  cause?: unknown;
}

/** Base class of every error the SDK throws; `instanceof LatchkeyError` catches them all. */
export class LatchkeyError extends Error {
  override name = 'LatchkeyError';
  /** Stable snake_case code: branch on this, not on the message. */
  readonly code: string;
  readonly reason: string;
  readonly action: string | undefined;

  constructor(code: string, details: LatchkeyErrorDetails) {
    const message = details.action ? `${details.reason} ${details.action}` : details.reason;
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.reason = details.reason;
    this.action = details.action;
  }
}

/**
 * A token was rejected by `verifyToken()`. `jwks_unavailable` is the one code that is not
 * the token's fault: the tenant's keys could not be fetched.
 */
export class LatchkeyTokenError extends LatchkeyError {
  override name = 'LatchkeyTokenError';
  declare readonly code: LatchkeyTokenErrorCode;

  constructor(code: LatchkeyTokenErrorCode, details: LatchkeyErrorDetails) {
    super(code, details);
  }
}

export interface LatchkeyApiErrorDetails extends LatchkeyErrorDetails {
  status: number;
  detail?: string | undefined;
  retryAfter?: number | undefined;
}

/**
 * The Latchkey API answered with an error. `code` is the server's problem+json code
 * (`unauthorized`, `forbidden`, `rate_limited`, `invalid_request`, …), or
 * `unexpected_response` when the answer was not a Latchkey problem document.
 */
export class LatchkeyApiError extends LatchkeyError {
  override name = 'LatchkeyApiError';
  /** HTTP status of the API's answer. */
  readonly status: number;
  /** The problem document's `detail`, when there was one. */
  readonly detail: string | undefined;
  /** Seconds to wait before retrying (from `Retry-After`), when the API said so. */
  readonly retryAfter: number | undefined;

  constructor(code: string, details: LatchkeyApiErrorDetails) {
    super(code, details);
    this.status = details.status;
    this.detail = details.detail;
    this.retryAfter = details.retryAfter;
  }
}
