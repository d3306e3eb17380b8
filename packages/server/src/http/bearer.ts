/**
 * RFC 6750 section 2.1: `Bearer` (any case, RFC 7235 section 2.1), one or more spaces, then
 * a b64token. Trailing spaces are the field's own whitespace (RFC 9110 section 5.5).
 */
const BEARER = /^Bearer +([\w\-.~+/]+=*) *$/i;

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
