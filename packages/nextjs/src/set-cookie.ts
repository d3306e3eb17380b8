/** Appends each Set-Cookie value as given (attributes and all) to a response. */
export function withCookies<R extends Response>(response: R, setCookie: readonly string[]): R {
  for (const line of setCookie) response.headers.append('set-cookie', line);
  // An answer that sets a session cookie is this browser's alone: no shared cache keeps it.
  if (setCookie.length > 0) response.headers.set('cache-control', 'private, no-store');
  return response;
}
