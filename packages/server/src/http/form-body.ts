import { LatchkeyError } from '../errors/index.js';

type Done = (error: Error | null, body?: unknown) => void;

/** application/x-www-form-urlencoded, parsed by URLSearchParams; NUL is refused (as in JSON). */
export function parseForm(_request: unknown, body: string | Buffer, done: Done): void {
  const text = String(body);
  if (/%00/i.test(text)) {
    done(new LatchkeyError('invalid_request', 'The form contains a NUL character'));
    return;
  }
  done(null, Object.fromEntries(new URLSearchParams(text)));
}

/** A parsed form, query or JSON object (Fastify parses queries into plain objects). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A string field of a parsed form or query ('' when absent). With `maxLength` (the
 * field's rule, in code points, as the API counts them) it keeps one code point more
 * than the longest valid value: a valid value is never cut, and one that is too long
 * stays too long for the rule to refuse.
 */
export function formField(body: unknown, name: string, maxLength?: number): string {
  const value = isRecord(body) ? body[name] : undefined;
  if (typeof value !== 'string') return '';
  if (maxLength === undefined || value.length <= maxLength) return value;
  let kept = '';
  let count = 0;
  for (const ch of value) {
    if (count++ > maxLength) break;
    kept += ch;
  }
  return kept;
}
