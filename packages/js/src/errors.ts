/** Every `code` a LatchkeyError can carry. Stable: apps may branch on them. */
export const ERROR_CODES = [
  'missing_publishable_key',
  'secret_key_in_browser',
  'missing_auth_url',
  'invalid_option',
  'mount_target_not_found',
  'missing_redirect_url',
  'unknown_provider',
  'insecure_context',
  'state_mismatch',
  'sign_in_failed',
  'invalid_grant',
  'origin_not_allowed',
  'unauthorized',
  'rate_limited',
  'network_error',
  'server_error',
] as const;

export type LatchkeyErrorCode = (typeof ERROR_CODES)[number];

/** The one error class of the library: `code` is for programs, `message` says what to do. */
export class LatchkeyError extends Error {
  declare readonly code: LatchkeyErrorCode;

  constructor(code: LatchkeyErrorCode, message: string) {
    super(message);
    this.name = 'LatchkeyError';
    this.code = code;
  }
}

export function missingRedirectUrl(): LatchkeyError {
  return new LatchkeyError(
    'missing_redirect_url',
    "Pass { redirectUrl: 'https://your.app/callback' }, a page that calls handleRedirectCallback()",
  );
}
