import { isLoopbackHost } from '../config.js';
import { LatchkeyError } from '../errors.js';

/**
 * A cookie session of a confidential `web` app of the tenant's OpenID Provider
 * (docs/design.md §15). The five strings are the variables `sessionConfigFromEnv()` reads.
 */
export interface LatchkeySessionConfig {
  /** The tenant's issuer, `{auth_url}/t/{tenant_id}`. Env: `LATCHKEY_ISSUER`. */
  issuer: string;
  /** The `web` app's id (`app_…`). Env: `LATCHKEY_CLIENT_ID`. */
  clientId: string;
  /** The `web` app's secret, sent with HTTP Basic. Env: `LATCHKEY_CLIENT_SECRET`. */
  clientSecret: string;
  /** At least 32 characters; the cookies' encryption key is derived from it. Env: `LATCHKEY_COOKIE_SECRET`. */
  cookieSecret: string;
  /**
   * The app's public URL (`https://app.example.com`): the redirect URI is on its origin and
   * it is the post-logout redirect URI. Env: `APP_BASE_URL`.
   */
  appBaseUrl: string;
  /** Where the sign-in, callback and sign-out routes live. Default `/api/latchkey`. */
  basePath?: string | undefined;
  /** The session cookie's name (its chunks are `name.0`, `name.1`…). Default `latchkey_session`. */
  cookieName?: string | undefined;
  /** Scopes asked for. Default `openid email profile` (a first-party app gets a refresh token). */
  scope?: string | undefined;
  /** The `aud` the access tokens name. Default: the tenant's, `{issuer}/api`. Env: `LATCHKEY_AUDIENCE`. */
  audience?: string | undefined;
  /** Refresh the access token when it expires within this many seconds. Default 60. */
  refreshBeforeSeconds?: number | undefined;
  /** How long the session cookie lives without a visit, in seconds. Default 30 days. */
  maxAgeSeconds?: number | undefined;
  /** Leeway for `exp`, `nbf` and `iat` against clock skew. Default 5. */
  clockToleranceSeconds?: number | undefined;
  /** A `fetch` to use instead of the global one (proxies, tests). */
  fetch?: typeof globalThis.fetch | undefined;
  /** The current time in milliseconds (tests). Default `Date.now`. */
  now?: (() => number) | undefined;
  /**
   * Called with what went wrong when the provider could not be reached or answered
   * unexpectedly. Default: one line on `console.error` (name, code, message; no token).
   */
  onError?: ((error: unknown) => void) | undefined;
}

export interface ResolvedSessionConfig {
  readonly issuer: URL;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly cookieSecret: string;
  readonly appOrigin: string;
  readonly appBaseUrl: string;
  readonly secure: boolean;
  readonly basePath: string;
  readonly cookieName: string;
  readonly scope: string;
  readonly audience: string;
  readonly refreshBeforeSeconds: number;
  readonly maxAgeSeconds: number;
  readonly clockToleranceSeconds: number;
  readonly fetch: typeof globalThis.fetch;
  readonly now: () => number;
  readonly onError: (error: unknown) => void;
}

export const MIN_COOKIE_SECRET_LENGTH = 32;
const DEFAULT_MAX_AGE_SECONDS = 30 * 24 * 3600;

const ENV_NAMES = {
  issuer: 'LATCHKEY_ISSUER',
  clientId: 'LATCHKEY_CLIENT_ID',
  clientSecret: 'LATCHKEY_CLIENT_SECRET',
  cookieSecret: 'LATCHKEY_COOKIE_SECRET',
  appBaseUrl: 'APP_BASE_URL',
} as const;

const HOW_TO = {
  issuer:
    "Set LATCHKEY_ISSUER to your tenant's issuer, {auth_url}/t/{tenant_id} (`latchkey tenant show` prints the id).",
  clientId:
    'Set LATCHKEY_CLIENT_ID to the id of a `web` app: `latchkey app create --tenant ID --name N --type web --redirect-uri {APP_BASE_URL}/api/latchkey/callback`.',
  clientSecret:
    'Set LATCHKEY_CLIENT_SECRET to the clientSecret `latchkey app create` printed (or `latchkey app rotate-secret`).',
  cookieSecret:
    'Set LATCHKEY_COOKIE_SECRET to a random string of at least 32 characters, e.g. `openssl rand -base64 32`.',
  appBaseUrl: 'Set APP_BASE_URL to the URL your app is served at, e.g. http://localhost:3000.',
} as const;

function processEnv(): Record<string, string | undefined> {
  return (
    (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {}
  );
}

/** The five variables of docs/design.md §15 (and `LATCHKEY_AUDIENCE`), checked. */
export function sessionConfigFromEnv(
  env: Record<string, string | undefined> = processEnv(),
): LatchkeySessionConfig {
  const read = (key: keyof typeof ENV_NAMES) => {
    const value = env[ENV_NAMES[key]];
    if (value === undefined || value.trim() === '') {
      throw new LatchkeyError('session_config_missing', {
        reason: `${ENV_NAMES[key]} is not set; the cookie session needs it.`,
        action: HOW_TO[key],
      });
    }
    return value.trim();
  };
  const config: LatchkeySessionConfig = {
    issuer: read('issuer'),
    clientId: read('clientId'),
    clientSecret: read('clientSecret'),
    cookieSecret: read('cookieSecret'),
    appBaseUrl: read('appBaseUrl'),
  };
  const audience = env.LATCHKEY_AUDIENCE?.trim();
  if (audience) config.audience = audience;
  resolveSessionConfig(config);
  return config;
}

export function resolveSessionConfig(config: LatchkeySessionConfig): ResolvedSessionConfig {
  for (const key of Object.keys(ENV_NAMES) as (keyof typeof ENV_NAMES)[]) {
    if (typeof config[key] !== 'string' || config[key] === '') {
      throw new LatchkeyError('session_config_missing', {
        reason: `${key} is missing; the cookie session needs it.`,
        action: `Pass { ${key} }, or use sessionConfigFromEnv(). ${HOW_TO[key]}`,
      });
    }
  }
  const issuer = httpUrl('issuer', config.issuer, HOW_TO.issuer);
  if (issuer.search || issuer.hash || issuer.href.endsWith('/')) {
    throw invalid(
      'The issuer must not end with a slash nor carry a query or fragment.',
      HOW_TO.issuer,
    );
  }
  const app = httpUrl('appBaseUrl', config.appBaseUrl, HOW_TO.appBaseUrl);
  if (config.cookieSecret.length < MIN_COOKIE_SECRET_LENGTH) {
    throw invalid(
      `The cookie secret has ${config.cookieSecret.length} characters; at least ${MIN_COOKIE_SECRET_LENGTH} are needed.`,
      HOW_TO.cookieSecret,
    );
  }
  const basePath = (config.basePath ?? '/api/latchkey').replace(/\/+$/, '');
  if (!/^\/[A-Za-z0-9/_.~-]*$/.test(basePath) || basePath.includes('//')) {
    throw invalid(
      'basePath must be a path such as /api/latchkey.',
      'Pass a path beginning with /.',
    );
  }
  const cookieName = config.cookieName ?? 'latchkey_session';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cookieName)) {
    throw invalid('cookieName must be 1 to 64 letters, digits, _ or -.', 'Pass a plain name.');
  }
  const number = (name: string, value: number | undefined, fallback: number) => {
    const n = value ?? fallback;
    if (!Number.isFinite(n) || n < 0) {
      throw invalid(
        `${name} must be a finite number of seconds, 0 or more.`,
        `Leave it out for ${fallback}.`,
      );
    }
    return n;
  };
  for (const name of ['fetch', 'now', 'onError'] as const) {
    if (config[name] !== undefined && typeof config[name] !== 'function') {
      throw invalid(`${name} must be a function.`, 'Pass a function, or leave it out.');
    }
  }
  return Object.freeze({
    issuer,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    cookieSecret: config.cookieSecret,
    appOrigin: app.origin,
    // As given: it is matched exactly against the app's registered post-logout redirect URIs.
    appBaseUrl: config.appBaseUrl,
    secure: app.protocol === 'https:',
    basePath,
    cookieName,
    scope: config.scope ?? 'openid email profile',
    audience: config.audience ?? `${issuer.href}/api`,
    refreshBeforeSeconds: number('refreshBeforeSeconds', config.refreshBeforeSeconds, 60),
    maxAgeSeconds: number('maxAgeSeconds', config.maxAgeSeconds, DEFAULT_MAX_AGE_SECONDS),
    clockToleranceSeconds: number('clockToleranceSeconds', config.clockToleranceSeconds, 5),
    fetch: config.fetch ?? ((input, init) => fetch(input, init)),
    now: config.now ?? Date.now,
    onError: config.onError ?? logError,
  });
}

function httpUrl(name: string, value: string, action: string): URL {
  const url = parseUrl(value);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username) {
    throw invalid(`${name} is not an http(s) URL.`, action);
  }
  // Codes, tokens and the client secret would travel in clear text (RFC 9700 section 2.6).
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw invalid(
      `${name} uses http:// for ${url.hostname}, which is not this machine.`,
      `Use https://${url.host}, or http:// only for localhost.`,
    );
  }
  return url;
}

/** `URL.parse`, which older edge runtimes lack. */
export function parseUrl(value: string, base?: string): URL | null {
  try {
    return new URL(value, base);
  } catch {
    return null;
  }
}

/**
 * What `onError` logs by default: the error's name, code and message, never its `cause`
 * (which may hold an ID token's claims) and never a token.
 */
function logError(error: unknown): void {
  if (!(error instanceof Error)) {
    console.error('[latchkey] session error');
    return;
  }
  const { code, error: oauthError } = error as { code?: unknown; error?: unknown };
  const codes = [code, oauthError].filter((c) => typeof c === 'string').join(' ');
  console.error(`[latchkey] ${error.name}${codes ? ` (${codes})` : ''}: ${error.message}`);
}

function invalid(reason: string, action: string): LatchkeyError {
  return new LatchkeyError('option_invalid', { reason, action });
}
