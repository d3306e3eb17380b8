import { LatchkeyError, type LatchkeyErrorCode } from './errors.js';

interface Problem {
  code?: string;
  detail?: string;
}

/** A request to the Latchkey server of a client: `call(path, body?, token?)`. */
export type Call = <T>(path: string, body?: unknown, token?: string) => Promise<T>;

/**
 * The problem codes (docs/errors.md) of the browser endpoints that keep their name here.
 * Their one 403, `forbidden`, is `origin_not_allowed`: the page's Origin is missing or not
 * allowed. An answer without one of those codes (say, a proxy's page) maps by its status:
 * a 429 is `rate_limited`, anything else `server_error`.
 */
const KEPT = ['invalid_grant', 'unauthorized', 'rate_limited'];

/**
 * Requests to the Latchkey server at `authUrl`; problem+json answers become LatchkeyErrors.
 * A GET with neither body nor `token` sends no header (no preflight); with a `token` it is
 * the user's access token.
 */
export function caller(authUrl: string, publishableKey: string): Call {
  return async <T>(path: string, body?: unknown, token?: string): Promise<T> => {
    let res: Response;
    // A request that hangs must not hold getToken() (and so the app) forever.
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 15_000);
    const init: RequestInit = { credentials: 'omit', signal: abort.signal };
    if (body !== undefined || token) {
      const headers: Record<string, string> = { 'x-latchkey-publishable-key': publishableKey };
      if (token) headers.authorization = `Bearer ${token}`;
      else {
        init.method = 'POST';
        headers['content-type'] = 'application/json';
        init.body = JSON.stringify(body);
      }
      init.headers = headers;
    }
    try {
      res = await fetch(authUrl + path, init);
    } catch {
      throw new LatchkeyError(
        'network_error',
        `Could not reach ${authUrl}: check that Latchkey runs there and allows this page's origin`,
      );
    } finally {
      clearTimeout(timer);
    }
    const status = res.status;
    if (status === 204) return undefined as T;
    const json = (await res.json().catch(() => ({}))) as Problem & T;
    if (res.ok) return json;
    const code = (
      json.code === 'forbidden'
        ? 'origin_not_allowed'
        : KEPT.indexOf(json.code as string) >= 0
          ? json.code
          : status === 429
            ? 'rate_limited'
            : 'server_error'
    ) as LatchkeyErrorCode;
    throw new LatchkeyError(
      code,
      (json.detail || `HTTP ${status}`) +
        (code === 'origin_not_allowed'
          ? `; allow it: latchkey tenant update ID --add-origin ${location.origin}`
          : code === 'unauthorized'
            ? '; check the publishable key: latchkey keys list --tenant ID'
            : ''),
    );
  };
}
