/**
 * The closed set of errors a client can see. Each code is stable; `title` and `status`
 * belong to the code. What a client is told (`detail`) is kept apart from what goes to
 * the log (`cause`).
 */
export const ERROR_CATALOGUE = {
  invalid_request: { status: 400, title: 'Invalid request' },
  invalid_grant: { status: 400, title: 'Invalid grant' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  invalid_credentials: { status: 401, title: 'Invalid credentials' },
  invalid_mfa_token: { status: 401, title: 'Invalid MFA token' },
  invalid_code: { status: 401, title: 'Invalid code' },
  forbidden: { status: 403, title: 'Forbidden' },
  email_not_verified: { status: 403, title: 'E-mail address not verified' },
  confirmation_required: { status: 403, title: 'Confirm it is you' },
  mfa_required: { status: 403, title: 'Second factor required' },
  mfa_setup_required: { status: 403, title: 'Second factor setup required' },
  reauthentication_required: { status: 403, title: 'Sign in again' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  email_taken: { status: 409, title: 'E-mail address already registered' },
  conflict: { status: 409, title: 'Conflict' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  validation_failed: { status: 422, title: 'Validation failed' },
  rate_limited: { status: 429, title: 'Too many requests' },
  internal_error: { status: 500, title: 'Internal server error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** One failed field rule, as in `errors[]` of a problem document. */
export interface FieldError {
  /** JSON Pointer (RFC 6901) to the field in the request body, e.g. `/password`. */
  path: string;
  code: string;
  message: string;
}

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: FieldError[];
  /** Extension members of the problem type (RFC 9457 section 3.2), e.g. `mfaToken`. */
  [member: string]: unknown;
}

export class LatchkeyError extends Error {
  override name = 'LatchkeyError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Record<string, string> | undefined;
  /** Extension members of the problem document (RFC 9457 section 3.2). */
  readonly members: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    detail: string,
    options: {
      errors?: FieldError[];
      headers?: Record<string, string>;
      members?: Record<string, unknown>;
      cause?: unknown;
    } = {},
  ) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = ERROR_CATALOGUE[code].status;
    this.errors = options.errors;
    this.headers = options.headers;
    this.members = options.members;
  }

  toProblem(): ProblemDocument {
    return {
      type: problemType(this.code),
      title: ERROR_CATALOGUE[this.code].title,
      status: this.status,
      detail: this.message,
      code: this.code,
      ...(this.errors ? { errors: this.errors } : {}),
      ...this.members,
    };
  }
}

/** RFC 9457 section 3.1.1: a non-dereferenceable type URI; a tag URI (RFC 4151) fits. */
export function problemType(code: ErrorCode): string {
  return `tag:latchkey.dev,2026:problem:${code}`;
}

export function validationFailed(errors: FieldError[]): LatchkeyError {
  const first = errors[0];
  const detail =
    errors.length === 1 && first ? first.message : `${errors.length} fields failed validation`;
  return new LatchkeyError('validation_failed', detail, { errors });
}
