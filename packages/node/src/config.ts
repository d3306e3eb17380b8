import { LatchkeyError } from './errors.js';

export interface LatchkeyOptions {
  /** Secret key (`sk_test_…` / `sk_prod_…`), needed by `introspect()`. Default: `LATCHKEY_SECRET_KEY`. */
  secretKey?: string | undefined;
  /** The tenant whose tokens are accepted, needed by `verifyToken()`. Default: `LATCHKEY_TENANT_ID`. */
  tenantId?: string | undefined;
  /** Where the REST API lives. Default: `LATCHKEY_API_URL`, else `http://localhost:8787`. */
  apiUrl?: string | undefined;
  /**
   * Where tokens are issued and keys published; part of every token's `iss`, so it must be the
   * service's public URL. Default: `LATCHKEY_AUTH_URL`, else `apiUrl`.
   */
  authUrl?: string | undefined;
  /** A `fetch` to use instead of the global one (proxies, tests). */
  fetch?: typeof globalThis.fetch | undefined;
  /** Leeway for `exp` and `nbf` against clock skew between servers. Default: 5. */
  clockToleranceSeconds?: number | undefined;
  /**
   * The API audience tokens must name in `aud` (RFC 9068 section 2.2); unchecked when unset.
   * The tenant's default is `{authUrl}/t/{tenantId}/api`. Default: `LATCHKEY_AUDIENCE`.
   */
  audience?: string | undefined;
}

export interface ResolvedConfig {
  readonly secretKey: string | undefined;
  readonly tenantId: string | undefined;
  readonly apiUrl: string;
  readonly authUrl: string;
  readonly fetch: typeof globalThis.fetch | undefined;
  readonly clockToleranceSeconds: number;
  readonly audience: string | undefined;
}

export const DEFAULT_API_URL = 'http://localhost:8787';
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 5;
/** Past this a string cannot be a Latchkey access token; it is refused before any parsing. */
export const MAX_TOKEN_LENGTH = 8 * 1024;

const SECRET_KEY_SHAPE = /^sk_(?:test|prod)_[0-9A-Za-z]{43}$/;
/** Tenant ids are UUIDs; anything that is safe as one URL path segment is let through. */
const TENANT_ID_SHAPE = /^[0-9A-Za-z_-]{1,64}$/;

const SET_SECRET_KEY =
  'Set LATCHKEY_SECRET_KEY to a key beginning with sk_ (or pass { secretKey }).';
const SET_TENANT_ID =
  'Set LATCHKEY_TENANT_ID to the id of your tenant (or pass { tenantId }); `latchkey tenant list` shows it.';

export function resolveConfig(
  options: LatchkeyOptions,
  env: Record<string, string | undefined>,
): ResolvedConfig {
  const apiUrl = normalizeUrl(
    'apiUrl',
    options.apiUrl ?? nonEmpty(env.LATCHKEY_API_URL) ?? DEFAULT_API_URL,
  );
  const authUrl = normalizeUrl(
    'authUrl',
    options.authUrl ?? nonEmpty(env.LATCHKEY_AUTH_URL) ?? apiUrl,
  );
  const clockToleranceSeconds = options.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS;
  if (!Number.isFinite(clockToleranceSeconds) || clockToleranceSeconds < 0) {
    throw new LatchkeyError('option_invalid', {
      reason: 'clockToleranceSeconds must be a finite number of seconds, 0 or more.',
      action: `Pass a small value such as ${DEFAULT_CLOCK_TOLERANCE_SECONDS}, or leave it out.`,
    });
  }
  if (options.fetch !== undefined && typeof options.fetch !== 'function') {
    throw new LatchkeyError('option_invalid', {
      reason: 'fetch must be a function with the signature of the global fetch.',
      action: 'Pass a fetch implementation, or leave it out to use the global fetch.',
    });
  }
  const audience = options.audience ?? nonEmpty(env.LATCHKEY_AUDIENCE);
  if (audience !== undefined && (typeof audience !== 'string' || audience === '')) {
    throw new LatchkeyError('option_invalid', {
      reason: 'audience must be a non-empty string.',
      action: 'Pass the audience that `latchkey tenant show` prints, or leave it out.',
    });
  }
  return Object.freeze({
    secretKey: options.secretKey ?? nonEmpty(env.LATCHKEY_SECRET_KEY),
    tenantId: options.tenantId ?? nonEmpty(env.LATCHKEY_TENANT_ID),
    apiUrl,
    authUrl,
    fetch: options.fetch,
    clockToleranceSeconds,
    audience,
  });
}

/** The secret key, checked before it leaves the process: never send a publishable key. */
export function requireSecretKey(config: ResolvedConfig): string {
  const key = config.secretKey;
  if (key === undefined || key === '') {
    throw new LatchkeyError('secret_key_missing', {
      reason: 'No Latchkey secret key is configured; introspection needs one.',
      action: SET_SECRET_KEY,
    });
  }
  if (typeof key !== 'string' || !SECRET_KEY_SHAPE.test(key)) {
    throw new LatchkeyError('secret_key_invalid', {
      reason: describeBadSecretKey(key),
      action: SET_SECRET_KEY,
    });
  }
  return key;
}

export function requireTenantId(config: ResolvedConfig): string {
  const tenantId = config.tenantId;
  if (tenantId === undefined || tenantId === '') {
    throw new LatchkeyError('tenant_id_missing', {
      reason: 'No Latchkey tenant id is configured; local token verification needs one.',
      action: SET_TENANT_ID,
    });
  }
  if (typeof tenantId !== 'string' || !TENANT_ID_SHAPE.test(tenantId)) {
    throw new LatchkeyError('tenant_id_invalid', {
      reason: 'The configured tenant id is not a Latchkey tenant id (a UUID).',
      action: SET_TENANT_ID,
    });
  }
  return tenantId;
}

function describeBadSecretKey(key: unknown): string {
  if (typeof key !== 'string') return 'The secret key is not a string.';
  if (key.startsWith('pk_')) {
    return 'The configured secret key is a publishable key (pk_…), which cannot introspect tokens.';
  }
  if (key.trim() !== key) return 'The configured secret key has leading or trailing whitespace.';
  if (key.startsWith('sk_')) {
    return 'The configured secret key is truncated or altered: expected sk_test_ or sk_prod_ and 43 letters and digits.';
  }
  return 'The configured secret key does not look like a Latchkey secret key.';
}

function normalizeUrl(name: 'apiUrl' | 'authUrl', value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch (cause) {
    throw new LatchkeyError('option_invalid', {
      reason: `${name} is not a URL.`,
      action: `Pass an absolute http(s) URL such as ${DEFAULT_API_URL}.`,
      cause,
    });
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
    throw new LatchkeyError('option_invalid', {
      reason: `${name} must be a plain http(s) URL without query or fragment.`,
      action: `Pass a URL such as ${DEFAULT_API_URL}.`,
    });
  }
  // Tokens, keys and the secret key would travel in clear text (RFC 8725 section 3.1 asks
  // for keys from a trusted source; RFC 9700 section 2.6 for TLS everywhere else).
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new LatchkeyError('option_invalid', {
      reason: `${name} uses http:// for ${url.hostname}, which is not this machine.`,
      action: `Use https://${url.host}${url.pathname === '/' ? '' : url.pathname}, or http:// only for localhost.`,
    });
  }
  return url.href.replace(/\/+$/, '');
}

/** localhost, *.localhost (RFC 6761 section 6.3), 127.0.0.0/8 and ::1. */
export function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname.endsWith('.localhost') ||
    /^127(\.\d{1,3}){3}$/.test(hostname) ||
    hostname === '[::1]'
  );
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
