import type { FieldError } from '../../errors/index.js';
import { codePointLength } from './password.js';
import {
  FORBIDDEN_KEYS,
  METADATA_MAX_BYTES,
  METADATA_MAX_DEPTH,
  NAME_MAX_LENGTH,
  nestsWithin,
} from './users.schemas.js';

/** The rule of a display name, shared by sign-up and updates. */
export function checkName(value: string): FieldError | undefined {
  const name = value.trim();
  if (
    name.length > 0 &&
    codePointLength(name) <= NAME_MAX_LENGTH &&
    name.isWellFormed() &&
    !/\p{Cc}/u.test(name)
  ) {
    return undefined;
  }
  return {
    path: '/name',
    code: 'name_invalid',
    message: `name must be 1 to ${NAME_MAX_LENGTH} printable characters`,
  };
}

/** The rules of metadata: no prototype keys, bounded nesting (checked without recursion), bounded size. */
export function checkMetadata(metadata: Record<string, unknown>): FieldError | undefined {
  const fail = (code: string, message: string): FieldError => ({
    path: '/metadata',
    code,
    message,
  });
  if (Object.keys(metadata).some((k) => FORBIDDEN_KEYS.includes(k))) {
    return fail('metadata_invalid', `metadata keys may not be ${FORBIDDEN_KEYS.join(', ')}`);
  }
  if (!nestsWithin(metadata, METADATA_MAX_DEPTH)) {
    return fail('metadata_invalid', `metadata may nest at most ${METADATA_MAX_DEPTH} levels`);
  }
  if (Buffer.byteLength(JSON.stringify(metadata)) > METADATA_MAX_BYTES) {
    return fail(
      'metadata_too_large',
      `metadata must be at most ${METADATA_MAX_BYTES} bytes as JSON`,
    );
  }
  return undefined;
}
