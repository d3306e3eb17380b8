import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { TracingSettings } from '../tracing/tracing.js';
import { defaults } from './defaults.js';

export type TrustProxy = boolean | number | string[];

export interface Config {
  readonly port: number;
  /** HOST; unset: `serve` listens on defaults.host, `serve --demo` on defaults.demoHost. */
  readonly host: string | undefined;
  readonly publicUrl: string;
  readonly databaseUrl: string;
  readonly redisUrl: string | undefined;
  /** Master secret; keys derived from it encrypt signing keys and provider secrets. */
  readonly secret: string;
  /**
   * Where the master secret comes from. `new`: neither LATCHKEY_SECRET nor the file exists;
   * `secret` is a fresh one, written to `path` only once the database is known to hold
   * nothing sealed (modules/master-secret).
   */
  readonly secretSource: SecretSource;
  readonly smtpUrl: string | undefined;
  readonly trustProxy: TrustProxy;
  readonly providerEndpoints: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly logLevel: string;
  /** Bearer token that `/metrics` asks for; unset: `/metrics` is off. */
  readonly metricsToken: string | undefined;
  /**
   * LATCHKEY_BREACHED_PASSWORDS_URL: a k-anonymity range API in Have I Been Pwned's format
   * (`GET {url}/range/{5 hex}`); unset: only the bundled list of common passwords.
   */
  readonly breachedPasswordsUrl: string | undefined;
  readonly bodyLimit: number;
  readonly argon2: { memoryCost: number; timeCost: number; parallelism: number };
  /** OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT and friends); unset: off. */
  readonly tracing?: TracingSettings | undefined;
}

export type SecretSource =
  | { readonly kind: 'env' }
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'new'; readonly path: string };

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface LoadOptions {
  /** Called with each warning about an unsafe or generated setting. */
  warn?: (message: string) => void;
}

function parsePort(value: string | undefined): number {
  if (value === undefined || value === '') return defaults.port;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`PORT must be an integer between 0 and 65535, got "${value}"`);
  }
  return port;
}

function parseTrustProxy(value: string | undefined): TrustProxy {
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
}

function parseProviderEndpoints(value: string | undefined): Config['providerEndpoints'] {
  if (!value) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new ConfigError('LATCHKEY_PROVIDER_ENDPOINTS must be a JSON object');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError('LATCHKEY_PROVIDER_ENDPOINTS must be a JSON object');
  }
  const out: Record<string, Record<string, string>> = {};
  for (const [provider, endpoints] of Object.entries(parsed)) {
    if (typeof endpoints !== 'object' || endpoints === null) {
      throw new ConfigError(`LATCHKEY_PROVIDER_ENDPOINTS.${provider} must be an object`);
    }
    out[provider] = Object.freeze({ ...(endpoints as Record<string, string>) });
  }
  return Object.freeze(out);
}

/** An http(s) URL without its trailing slashes, or undefined when unset. */
function parseBreachedPasswordsUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(
      `LATCHKEY_BREACHED_PASSWORDS_URL must be an absolute URL, got "${value}"`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ConfigError('LATCHKEY_BREACHED_PASSWORDS_URL must start with https:// or http://');
  return value.replace(/\/+$/, '');
}

/** The master secret's file in the data folder, when LATCHKEY_SECRET is not set. */
const SECRET_FILE = 'latchkey-secret';

function dataDirOf(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    if (path && path !== ':memory:') return dirname(resolve(path));
  }
  return resolve(defaults.dataDir);
}

/**
 * LATCHKEY_SECRET, or the one generated into the data folder on first run. A missing file
 * gives a new secret that is not written yet: whether this is a first run is for the
 * database to say (modules/master-secret), and a lost secret is never replaced.
 */
function loadSecret(
  value: string | undefined,
  dataDir: string,
  warn: (m: string) => void,
): { secret: string; secretSource: SecretSource } {
  if (value) {
    if (value.length < 32) throw new ConfigError('LATCHKEY_SECRET must be at least 32 characters');
    return { secret: value, secretSource: { kind: 'env' } };
  }
  const path = join(dataDir, SECRET_FILE);
  if (existsSync(path)) {
    warn(`LATCHKEY_SECRET is not set; using the secret stored in ${path}. Set it in production.`);
    return { secret: readFileSync(path, 'utf8').trim(), secretSource: { kind: 'file', path } };
  }
  return { secret: randomBytes(32).toString('base64url'), secretSource: { kind: 'new', path } };
}

/**
 * Writes a master secret to its file (owner-only, on disk before it returns): a new one
 * once nothing else holds it (never over an existing file), or in place of another
 * (`replace`, through a rename, so that the file never holds half of either).
 */
export function writeSecretFile(path: string, secret: string, { replace = false } = {}): void {
  mkdirSync(dirname(path), { recursive: true });
  const target = replace ? `${path}.new` : path;
  if (replace) rmSync(target, { force: true });
  const fd = openSync(target, 'wx', 0o600);
  try {
    writeSync(fd, `${secret}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(target, 0o600);
  if (replace) renameSync(target, path);
}

/** Reads the environment once, validates it, and returns a frozen configuration. */
export function loadConfig(env: NodeJS.ProcessEnv, options: LoadOptions = {}): Config {
  const warn = options.warn ?? ((message: string) => console.warn(`warning: ${message}`));
  const port = parsePort(env.PORT);
  const publicUrl = (env.PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    new URL(publicUrl);
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute URL, got "${publicUrl}"`);
  }
  const databaseUrl = env.DATABASE_URL || defaults.databaseUrl;
  if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with sqlite: or postgres://');
  }
  const redisUrl = env.REDIS_URL || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('REDIS_URL must start with redis:// or rediss://');
  }
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && metricsToken.length < 16) {
    throw new ConfigError('METRICS_TOKEN must be at least 16 characters');
  }
  const breachedPasswordsUrl = parseBreachedPasswordsUrl(env.LATCHKEY_BREACHED_PASSWORDS_URL);
  return Object.freeze({
    port,
    host: env.HOST || undefined,
    publicUrl,
    databaseUrl,
    redisUrl,
    ...loadSecret(env.LATCHKEY_SECRET, dataDirOf(databaseUrl), warn),
    smtpUrl: env.SMTP_URL || undefined,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    providerEndpoints: parseProviderEndpoints(env.LATCHKEY_PROVIDER_ENDPOINTS),
    logLevel: env.LOG_LEVEL || 'info',
    metricsToken,
    breachedPasswordsUrl,
    bodyLimit: defaults.bodyLimit,
    argon2: { ...defaults.argon2 },
    tracing: parseTracing(env),
  });
}

/** A non-negative integer OTEL_* setting, or undefined when unset. */
function otelInteger(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value)) throw new ConfigError(`${name} must be a whole number, got "${value}"`);
  return Number(value);
}

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
];

/**
 * The OpenTelemetry SDK's standard variables (opentelemetry.io/docs/specs/otel/configuration/
 * sdk-environment-variables): traces go to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or
 * to `{OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`; neither set, tracing is off.
 */
function parseTracing(env: NodeJS.ProcessEnv): TracingSettings | undefined {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!traces && !base) return undefined;
  if (env.OTEL_SDK_DISABLED === 'true') return undefined;
  const url = traces || `${(base as string).replace(/\/+$/, '')}/v1/traces`;
  if (!/^https?:\/\//.test(url))
    throw new ConfigError(
      `OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL, got "${traces || base}"`,
    );
  const sampler = env.OTEL_TRACES_SAMPLER || 'parentbased_always_on';
  if (!SAMPLERS.includes(sampler))
    throw new ConfigError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}`);
  const ratio = env.OTEL_TRACES_SAMPLER_ARG ? Number(env.OTEL_TRACES_SAMPLER_ARG) : 1;
  if (!(ratio >= 0 && ratio <= 1))
    throw new ConfigError('OTEL_TRACES_SAMPLER_ARG must be a number between 0 and 1');
  const resourceAttributes: Record<string, string> = {};
  for (const pair of (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at > 0)
      resourceAttributes[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(
        pair.slice(at + 1).trim(),
      );
  }
  const batch = {
    scheduledDelayMillis: otelInteger(env, 'OTEL_BSP_SCHEDULE_DELAY'),
    maxQueueSize: otelInteger(env, 'OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: otelInteger(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
    exportTimeoutMillis: otelInteger(env, 'OTEL_BSP_EXPORT_TIMEOUT'),
  };
  return Object.freeze({
    url,
    serviceName: env.OTEL_SERVICE_NAME || 'latchkey',
    sampler,
    samplerRatio: ratio,
    resourceAttributes: Object.freeze(resourceAttributes),
    batch: Object.freeze(
      Object.fromEntries(Object.entries(batch).filter(([, v]) => v !== undefined)),
    ),
  });
}
