import { parseCookie, type SetCookie, stringifySetCookie } from 'cookie';

/**
 * Browsers keep at least 4,096 bytes per cookie, name and attributes included (RFC 6265
 * section 6.1); a value longer than this is split into `name.0`, `name.1`… and joined again.
 */
export const CHUNK_SIZE = 3_800;

/** Where the request's cookies come from: a `Request`, its `Headers`, or the `Cookie` header. */
export type CookieSource = Request | Headers | { cookie?: string | null | undefined };

export function readCookies(source: CookieSource): Record<string, string> {
  const header = cookieHeaderOf(source);
  if (!header) return {};
  const parsed = parseCookie(header);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed)) if (value !== undefined) out[name] = value;
  return out;
}

export interface CookieAttributes {
  secure: boolean;
  maxAge: number;
  /** `/` unless given. */
  path?: string;
}

function attributes(secure: boolean, path = '/'): Omit<SetCookie, 'name' | 'value'> {
  return { httpOnly: true, sameSite: 'lax', secure, path };
}

export function setCookie(name: string, value: string, options: CookieAttributes): string {
  return stringifySetCookie({
    name,
    value,
    ...attributes(options.secure, options.path),
    maxAge: options.maxAge,
  });
}

export function clearCookie(name: string, secure: boolean, path = '/'): string {
  return stringifySetCookie({
    name,
    value: '',
    ...attributes(secure, path),
    maxAge: 0,
    expires: new Date(0),
  });
}

/** The names of `name`'s chunks present in the request, and `name` itself when present. */
function existingParts(cookies: Record<string, string>, name: string): string[] {
  const prefix = `${name}.`;
  return Object.keys(cookies).filter(
    (key) => key === name || (key.startsWith(prefix) && /^\d+$/.test(key.slice(prefix.length))),
  );
}

/** The value of `name`, joined from its chunks when it was split; undefined when absent. */
export function readChunked(cookies: Record<string, string>, name: string): string | undefined {
  const whole = cookies[name];
  if (whole !== undefined) return whole;
  const parts: string[] = [];
  for (let i = 0; cookies[`${name}.${i}`] !== undefined; i++)
    parts.push(cookies[`${name}.${i}`] ?? '');
  return parts.length > 0 ? parts.join('') : undefined;
}

/**
 * The Set-Cookie values that store `value` under `name` (chunked when long) and clear every
 * chunk of it the browser holds that the new value does not overwrite.
 */
export function writeChunked(
  cookies: Record<string, string>,
  name: string,
  value: string,
  options: CookieAttributes,
): string[] {
  const written: string[] = [];
  const out: string[] = [];
  if (value.length <= CHUNK_SIZE) {
    written.push(name);
    out.push(setCookie(name, value, options));
  } else {
    for (let i = 0; i * CHUNK_SIZE < value.length; i++) {
      written.push(`${name}.${i}`);
      out.push(
        setCookie(`${name}.${i}`, value.slice(i * CHUNK_SIZE, (i + 1) * CHUNK_SIZE), options),
      );
    }
  }
  for (const stale of existingParts(cookies, name)) {
    if (!written.includes(stale)) out.push(clearCookie(stale, options.secure));
  }
  return out;
}

/** The Set-Cookie values that clear `name` and all its chunks the browser holds. */
export function clearChunked(
  cookies: Record<string, string>,
  name: string,
  secure: boolean,
): string[] {
  const parts = existingParts(cookies, name);
  return (parts.length > 0 ? parts : [name]).map((part) => clearCookie(part, secure));
}

/**
 * The request's `Cookie` header with `name` (and its chunks) replaced by `value`, or
 * removed. The other cookies are passed on as the browser sent them, byte for byte (a name
 * the cookie library would not write must not break the request).
 */
export function cookieHeaderWith(
  header: string | null | undefined,
  name: string,
  value: string | null,
): string {
  const kept = (header ?? '')
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => {
      if (!pair) return false;
      const key = pair.slice(0, pair.indexOf('=') === -1 ? pair.length : pair.indexOf('=')).trim();
      return (
        key !== name && !(key.startsWith(`${name}.`) && /^\d+$/.test(key.slice(name.length + 1)))
      );
    });
  if (value !== null) kept.push(`${name}=${value}`);
  return kept.join('; ');
}

/** The `Cookie` header of a request. */
export function cookieHeaderOf(source: CookieSource): string | null | undefined {
  return source instanceof Request
    ? source.headers.get('cookie')
    : source instanceof Headers
      ? source.get('cookie')
      : source.cookie;
}
