import { Type } from 'typebox';

/** RFC 9457 problem document, as every error response carries it. */
export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'Stable snake_case error code' }),
    errors: Type.Optional(
      Type.Array(Type.Object({ path: Type.String(), code: Type.String(), message: Type.String() })),
    ),
    mfaToken: Type.Optional(
      Type.String({ description: 'mfa_required: redeem at POST /v1/auth/sign-in/verify' }),
    ),
    factors: Type.Optional(
      Type.Array(Type.String(), { description: 'mfa_required: e.g. ["totp","recovery_code"]' }),
    ),
    userId: Type.Optional(Type.String({ description: 'mfa_setup_required: the user to enrol' })),
  },
  { $id: 'Problem', title: 'Problem' },
);

const ref = Type.Unsafe<unknown>({ $ref: 'Problem#' });

const MEANINGS: Record<number, string> = {
  400: 'Bad request (invalid_request)',
  401: 'Missing or wrong key (unauthorized)',
  403: 'Wrong key kind or scope (forbidden)',
  404: 'Not found (not_found)',
  409: 'Conflict, e.g. email_taken',
  413: 'Payload too large (payload_too_large)',
  415: 'Unsupported media type (unsupported_media_type)',
  422: 'Field rules failed (validation_failed, with errors[])',
  429: 'Rate limited (rate_limited), with Retry-After',
};

/** Problem responses (RFC 9457, application/problem+json) for the statuses a route can answer with. */
export function problems(...statuses: number[]): Record<number, unknown> {
  return Object.fromEntries(
    statuses.map((s) => [
      s,
      {
        description: MEANINGS[s] ?? 'Problem',
        content: { 'application/problem+json': { schema: ref } },
      },
    ]),
  );
}
