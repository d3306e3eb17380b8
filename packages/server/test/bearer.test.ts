/**
 * The one parser of `Authorization: Bearer` (secret keys, publishable keys, introspection's
 * fast path, /metrics): RFC 6750 section 2.1's syntax, what it takes and what it refuses.
 */
import { describe, expect, it } from 'vitest';
import { bearerToken } from '../src/http/bearer.js';

describe('bearerToken', () => {
  it.each([
    ['Bearer sk_test_abc', 'sk_test_abc'],
    ['bearer sk_test_abc', 'sk_test_abc'],
    ['BEARER sk_test_abc', 'sk_test_abc'],
    ['Bearer   spaced', 'spaced'],
    ['Bearer trailing  ', 'trailing'],
    ['Bearer every-b64token.char_~+/09AZaz==', 'every-b64token.char_~+/09AZaz=='],
    // Malformed, but presented: refused later as invalid_token, not as a missing credential.
    ['Bearer ab=cd', 'ab=cd'],
    ['Bearer !!!@@@###', '!!!@@@###'],
    ['Bearer key\u00ff', 'key\u00ff'],
  ])('takes %j', (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['the scheme alone', 'Bearer'],
    ['an empty token', 'Bearer '],
    ['no space', 'Bearertoken'],
    ['a tab for the space', 'Bearer\ttoken'],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['two tokens', 'Bearer one two'],
  ])('refuses %s', (_name, header) => {
    expect(bearerToken(header)).toBeUndefined();
  });

  it.each([
    ['Bearer sk_test_abc', 'sk_', 'sk_test_abc'],
    ['bearer pk_live_abc', 'pk_', 'pk_live_abc'],
    ['Bearer pk_test_abc', 'sk_', undefined],
    ['Bearer sk_', 'sk_', undefined],
    ['Bearer xsk_abc', 'sk_', undefined],
  ])('with a prefix: %j and %j -> %j', (header, prefix, token) => {
    expect(bearerToken(header, prefix)).toBe(token);
  });
});
