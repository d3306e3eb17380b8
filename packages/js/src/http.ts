import { LatchkeyError, type LatchkeyErrorCode } from './errors.js';

interface Problem {
  code?: string;
  detail?: string;
}

const TIMEOUT_MS = 15_000;

/**
 * The problem codes (docs/errors.md) of the browser endpoints that have a code of their own
 * here. Their one 403 is `forbidden`: the page's Origin is missing or not allowed.
 */
const BY_CODE: Record<string, LatchkeyErrorCode> = {
  invalid_grant: 'invalid_grant',
  forbidden: 'origin_not_allowed',
  unauthorized: 'unauthorized',
  rate_limited: 'rate_limited',
};

/** An answer without one of those codes (say, a proxy's page): a status that says it alone. */
const BY_STATUS: Record<number, LatchkeyErrorCode> = { 429: 'rate_limited' };

/**
 * A request to the Latchkey server; problem+json answers become LatchkeyErrors. A GET
 * with neither body nor `token` sends no header (no preflight); with a `token` it is the
 * user's access token.
 */
export async function call<T>(
  authUrl: string,
  path: string,
  publishableKey: string,
  body?: unknown,
  token?: string,
): Promise<T> {
  let res: Response;
  // A request that hangs must not hold getToken() (and so the app) forever.
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), TIMEOUT_MS);
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
  if (res.status === 204) return undefined as T;
  const json = (await res.json().catch(() => ({}))) as Problem & T;
  if (res.ok) return json;
  const code = BY_CODE[json.code as string] || BY_STATUS[res.status] || 'server_error';
  const detail = json.detail || `HTTP ${res.status}`;
  const action =
    code === 'origin_not_allowed'
      ? `; allow it: latchkey tenant update ID --origin ${location.origin}`
      : code === 'unauthorized'
        ? '; check the publishable key: latchkey keys list --tenant ID'
        : '';
  throw new LatchkeyError(code, detail + action);
}
