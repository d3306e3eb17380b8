/**
 * Every default of the service in one place. Values here are safe for a developer's
 * machine; the ones that are unsafe in production make `loadConfig` warn at start-up.
 */
export const defaults = {
  port: 8787,
  host: '0.0.0.0',
  databaseUrl: 'sqlite:./data/latchkey.db',
  dataDir: './data',
  /** Largest request body the API accepts (bytes). A 1 MB password is refused here, quickly. */
  bodyLimit: 64 * 1024,
  /** OWASP Password Storage Cheat Sheet: argon2id, m=19 MiB, t=2, p=1. */
  argon2: { memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 },
  password: { minLength: 8, maxLength: 1024 },
  /** Requests per second / per minute for each plan (reference section 8). */
  plans: {
    free: { rps: 10, rpm: 600 },
    pro: { rps: 100, rpm: 6000 },
    enterprise: { rps: 1000, rpm: 60000 },
  },
  /** Requests with a missing or wrong key, per client address per minute. */
  unauthenticatedPerMinute: 120,
  accessTokenTtlSeconds: 600,
  redisConnectTimeoutMs: 2000,
} as const;

export type Plan = keyof typeof defaults.plans;
export const PLANS = Object.keys(defaults.plans) as Plan[];
export type Environment = 'development' | 'production';
export const ENVIRONMENTS: Environment[] = ['development', 'production'];
