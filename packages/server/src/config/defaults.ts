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
  /**
   * Counted in Unicode code points, never truncated. Hosted forms read at most one code
   * point more than the longest valid value, so the same rule refuses what is too long.
   */
  password: { minLength: 8, maxLength: 1024 },
  /** RFC 5321 section 4.5.3.1.3: a path holds 256 octets, so an address at most 254. */
  email: { maxLength: 254 },
  /** API sessions and their refresh tokens. */
  sessions: {
    /** A session (and so its refresh tokens) lives at most this long, whatever its use. */
    lifetimeMs: 30 * 24 * 60 * 60_000,
    /** A session's live state is cached this long, and only while invalidations flow. */
    stateCacheMs: 60_000,
    /** The stored User-Agent of a session is cut here. */
    userAgentMaxLength: 512,
  },
  /** Hosted pages: their own browser session, one-time codes and links, and limits. */
  hosted: {
    /** The hosted page's own sign-in lasts this long in its cookie. */
    browserSessionMs: 7 * 24 * 60 * 60_000,
    /** RFC 6749 section 4.1.2 asks for a short-lived code (at most 10 minutes). */
    codeLifetimeMs: 2 * 60_000,
    /** E-mail links work once, within this time. */
    linkLifetimeMs: { verify: 24 * 60 * 60_000, reset: 60 * 60_000 },
    redirectUrlMaxLength: 2048,
    stateMaxLength: 512,
    /** Largest form body (bytes) a hosted page reads. */
    formBodyLimit: 16 * 1024,
    /** Per window, per client address unless named otherwise. */
    limits: {
      /** Mail sent on behalf of one client address. */
      mail: { quota: 10, seconds: 15 * 60 },
      /** Mail sent to one user (no flooding one mailbox). */
      mailPerRecipient: { quota: 3, seconds: 15 * 60 },
      /** Each sign-up costs an argon2 hash. */
      signUp: { quota: 20, seconds: 15 * 60 },
    },
  },
  /** Bounds of what an operator may set on a tenant. */
  tenants: {
    nameMaxLength: 100,
    logoUrlMaxLength: 2048,
    /** Largest custom rps or rpm of an enterprise plan. */
    customRateMax: 1_000_000,
    accessTokenTtlSeconds: { min: 60, max: 86_400 },
  },
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
   * Failed sign-ins, counted per account (tenant + e-mail) and per client address (tenant +
   * IP) over a 15-minute window. From the 5th failure on an account, each attempt waits
   * 500 ms more (at most 3 s); at 10 failures the account answers 429 until the window ends,
   * and so does an address at 50. A successful sign-in clears the account's count.
   */
  signInFailures,
  /** Largest token the introspection endpoint reads; anything longer is inactive. */
  maxTokenLength: 8192,
  /**
   * Verified access tokens kept in memory (by digest) so that one seen again skips RSA:
   * at most this many (about 1 KB each), each until its `exp`, at most `ttlMs`.
   */
  verifiedTokens: { maxEntries: 10_000, ttlMs: 60 * 60_000 },
  redisConnectTimeoutMs: 2000,
} as const;

export type Plan = keyof typeof defaults.plans;
export const PLANS = Object.keys(defaults.plans) as Plan[];
export type Environment = 'development' | 'production';
export const ENVIRONMENTS: Environment[] = ['development', 'production'];

/**
 * Social sign-in (modules/social, http/hosted/social-pages.ts).
 */
export const socialDefaults = {
  /**
   * A provider sign-in must come back within this (state, nonce and PKCE verifier are kept
   * that long); the cookie that binds it to the browser lives as long.
   */
  flowLifetimeSeconds: 10 * 60,
  /** Attempts never finished (closed tabs, link prefetchers) are deleted after this. */
  abandonedFlowSeconds: 24 * 60 * 60,
  /** A provider that hangs this long gets a "could not be reached" page, not a stuck browser. */
  providerTimeoutMs: 10_000,
  /** How long a provider's discovery document (and so its endpoints) is reused. */
  discoverySeconds: 10 * 60,
  /** Provider sign-ins one client address may start per window. */
  startsPerAddress: { quota: 30, windowSeconds: 15 * 60 },
} as const;
