import { Type } from 'typebox';
import { defaults } from '../../config/defaults.js';

export const METADATA_MAX_BYTES = defaults.users.metadata.maxBytes;
export const NAME_MAX_LENGTH = defaults.users.nameMaxLength;
const { maxKeys, keyMaxLength } = defaults.users.metadata;
const FORBIDDEN_KEYS = ['__proto__', 'constructor', 'prototype'];

/** The metadata rule of sign-up and of a user update (checkMetadata adds size and depth). */
export const Metadata = (what: string) =>
  Type.Record(Type.String(), Type.Unknown(), {
    maxProperties: maxKeys,
    propertyNames: { minLength: 1, maxLength: keyMaxLength, not: { enum: FORBIDDEN_KEYS } },
    description: `${what}: at most ${maxKeys} keys of 1 to ${keyMaxLength} characters (not ${FORBIDDEN_KEYS.join(', ')}), ${METADATA_MAX_BYTES} bytes serialised.`,
  });

export const SignUpBody = Type.Object(
  {
    email: Type.String({
      format: 'email',
      maxLength: defaults.email.maxLength,
      description: 'Trimmed; matched case-insensitively within the tenant.',
      examples: ['ada@example.com'],
    }),
    password: Type.String({
      minLength: defaults.password.minLength,
      maxLength: defaults.password.maxLength,
      description: `${defaults.password.minLength} to ${defaults.password.maxLength} Unicode code points. Never truncated.`,
    }),
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH, description: 'Display name.' }),
    ),
    metadata: Type.Optional(Metadata('Free-form JSON object')),
  },
  { additionalProperties: false },
);

export const SignUpResponse = Type.Object(
  {
    userId: Type.String({ format: 'uuid' }),
    email: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    verificationRequired: Type.Boolean(),
  },
  { additionalProperties: false },
);

export { FORBIDDEN_KEYS };

export const METADATA_MAX_DEPTH = 16;

/** Whether a JSON value nests at most `limit` levels; iterative, so it never overflows. */
export function nestsWithin(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= limit) return false;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return true;
}
