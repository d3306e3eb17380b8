/** Appends each Set-Cookie value as given (attributes and all) to a response. */
export function withCookies<R extends Response>(response: R, setCookie: readonly string[]): R {
  for (const line of setCookie) response.headers.append('set-cookie', line);
  return response;
}
