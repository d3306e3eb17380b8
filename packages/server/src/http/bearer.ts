/**
 * RFC 6750 section 2.1: `Bearer` (any case, RFC 7235 section 2.1), one or more spaces, then
 * the token. Trailing spaces are the field's own whitespace (RFC 9110 section 5.5). A token
 * outside the b64token characters is still the credential presented: it is then refused as
 * `invalid_token` (RFC 6750 section 3.1: "malformed"), not as a request without one.
 */
const BEARER = /^Bearer +(\S+) *$/i;

/**
 * The token of an `Authorization: Bearer` header, the one parser of every route that takes
 * one; with a `prefix` (sk_, pk_), only a token that has it and more after it. Undefined
 * for any other header.
 */
export function bearerToken(header: string | undefined, prefix = ''): string | undefined {
  const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
  return token !== undefined && token.length > prefix.length && token.startsWith(prefix)
    ? token
    : undefined;
}
