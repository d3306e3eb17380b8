/**
 * The answer of a sign-in in a URL fragment (docs/design.md §6.4: form-encoded), or null when the
 * fragment is not one: it must carry `code`, `access_token` or `error`.
 */
export function parseCallback(url: string): Record<string, string> | null {
  const hash = url.indexOf('#');
  if (hash < 0) return null;
  const params: Record<string, string> = {};
  new URLSearchParams(url.slice(hash + 1)).forEach((value, key) => {
    params[key] = value;
  });
  return params.code || params.access_token || params.error ? params : null;
}

/** The URL without its fragment. */
export function withoutFragment(url: string): string {
  return url.split('#')[0] as string;
}
