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
  },
  { $id: 'Problem', title: 'Problem' },
);

const ref = Type.Unsafe<unknown>({ $ref: 'Problem#' });

/** Problem responses for the statuses a route can answer with. */
export function problems(...statuses: number[]): Record<number, unknown> {
  return Object.fromEntries(
    statuses.map((s) => [s, { ...ref, description: 'application/problem+json' }]),
  );
}
