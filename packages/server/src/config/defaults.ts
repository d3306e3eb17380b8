/**
 * Every default of the service in one place. Values here are safe for a developer's
 * machine; the ones that are unsafe in production make `loadConfig` warn at start-up.
 */
export interface SignInFailurePolicy {
  windowSeconds: number;
  account: { slowAfter: number; refuseAfter: number };
  address: { refuseAfter: number };
  slowStepMs: number;
  slowMaxMs: number;
}

const signInFailures: SignInFailurePolicy = {
  windowSeconds: 15 * 60,
  account: { slowAfter: 5, refuseAfter: 10 },
  address: { refuseAfter: 50 },
  slowStepMs: 500,
  slowMaxMs: 3000,
};

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
  /**
   * A refresh token presented again this soon after its rotation gets a new pair for its
   * session instead of revoking it: two tabs that refresh at the same moment, or a retry
   * after an answer lost on the network. A later replay still revokes the whole session.
   */
  refreshReuseIntervalMs: 5_000,
  /**
   * Failed sign-ins, counted per account (tenant + e-mail) and per client address (tenant +
   * IP) over a 15-minute window. From the 5th failure on an account, each attempt waits
   * 500 ms more (at most 3 s); at 10 failures the account answers 429 until the window ends,
   * and so does an address at 50. A successful sign-in clears the account's count.
   */
  signInFailures,
  /** Largest token the introspection endpoint reads; anything longer is inactive. */
  maxTokenLength: 8192,
  redisConnectTimeoutMs: 2000,
} as const;

export type Plan = keyof typeof defaults.plans;
export const PLANS = Object.keys(defaults.plans) as Plan[];
export type Environment = 'development' | 'production';
export const ENVIRONMENTS: Environment[] = ['development', 'production'];
