/**
 * Every default of the service in one place. Values here are safe for a developer's
 * machine; the ones that are unsafe in production make `loadConfig` warn at start-up.
 */
export interface SignInFailurePolicy {
  windowSeconds: number;
  /**
   * One account, counted over every address but at most `perAddress` failures of each, so
   * that only failures from many addresses add up here (one address meets `accountAddress`
   * first): past `slowAfter` attempts are slowed; past `challengeAfter` an address it was
   * never signed in from must prove it is its owner's (a link mailed to the account)
   * instead of being answered. Its owner's known addresses pass.
   */
  account: { slowAfter: number; challengeAfter: number; perAddress: number };
  /** One account from one address (an IPv6 /64): refused, known address or not. */
  accountAddress: { refuseAfter: number };
  /** One address over every account (password spraying). */
  address: { refuseAfter: number };
  /** An address an account signed in from stays known this long. */
  knownAddressSeconds: number;
  slowStepMs: number;
  slowMaxMs: number;
}

const signInFailures: SignInFailurePolicy = {
  windowSeconds: 15 * 60,
  account: { slowAfter: 5, challengeAfter: 10, perAddress: 3 },
  accountAddress: { refuseAfter: 10 },
  address: { refuseAfter: 50 },
  knownAddressSeconds: 14 * 24 * 60 * 60,
  slowStepMs: 500,
  slowMaxMs: 3000,
};

export const defaults = {
  port: 8787,
  /** `latchkey serve` without HOST: every interface (a server, usually behind a proxy). */
  host: '0.0.0.0',
  /** `npm start` (`serve --demo`, which prints an admin password) without HOST: this machine only. */
  demoHost: 'localhost',
  databaseUrl: 'sqlite:./data/latchkey.db',
  dataDir: './data',
  /** Largest request body the API accepts (bytes). A 1 MB password is refused here, quickly. */
  bodyLimit: 64 * 1024,
  /**
   * A connection closed after a refusal (413, or a 503 while shutting down) while its client
   * is still sending the body: the server half-closes and reads on, discarding, until the
   * client stops or one of these bounds is reached (nginx's lingering_time is 30 s), so
   * that the client reads the answer instead of a reset.
   */
  lingeringClose: { maxMs: 5_000, maxBytes: 32 * 1024 * 1024 },
  /** OWASP Password Storage Cheat Sheet: argon2id, m=19 MiB, t=2, p=1. */
  argon2: { memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 },
  /**
   * Counted in Unicode code points, never truncated. Hosted forms read at most one code
   * point more than the longest valid value, so the same rule refuses what is too long.
   */
  password: { minLength: 8, maxLength: 1024 },
  /**
   * docs/design.md §13: a password found in the breached-password range API
   * (LATCHKEY_BREACHED_PASSWORDS_URL) or in the bundled list of common passwords is refused.
   * The range API gets this long to answer; after it (or on any error) the bundled list
   * alone decides, and the fallback is logged.
   */
  breachedPasswords: { timeoutMs: 2_000 },
  /**
   * docs/design.md §13, second factors (modules/mfa). A new tenant's policy is `optional`.
   * TOTP is RFC 6238's default (SHA-1, 6 digits, 30 s) with one step either side for clock
   * drift; a pending sign-in (`mfaToken`) lives 5 minutes, takes 5 wrong codes, then ends.
   * Changing a factor or the password needs a sign-in within `stepUpMs`.
   */
  mfa: {
    policy: 'optional' as MfaPolicy,
    totp: { periodSeconds: 30, digits: 6, driftSteps: 1, secretBytes: 20 },
    challengeMs: 5 * 60_000,
    attemptsPerChallenge: 5,
    /**
     * Wrong second-factor codes one account may give over all its challenges: 10 per 15
     * minutes, and 50 per day (about 0.015 % a day of guessing a code; NIST SP 800-63B
     * caps consecutive failures at 100).
     */
    accountFailures: [
      { quota: 10, windowSeconds: 15 * 60 },
      { quota: 50, windowSeconds: 24 * 60 * 60 },
    ],
    recoveryCodes: 10,
    stepUpMs: 10 * 60_000,
    /** Factors one user may hold of each kind (unconfirmed apps included). */
    maxTotpFactors: 5,
  },
  /**
   * docs/design.md §14, the OpenID Provider: after `app rotate-secret` the old secret of an
   * app keeps working for a day unless told otherwise (`--grace`), 30 days at most. Each
   * instance keeps the providers of up to 500 tenants, each for a minute at most (within
   * the 5 minutes a retired signing key stays published). An app's name and its lists of
   * redirect URIs are bounded like a tenant's name and origins.
   */
  oauth: {
    appNameMaxLength: 100,
    maxRedirectUris: 20,
    redirectUriMaxLength: 2000,
    secretGraceMs: 24 * 3_600_000,
    maxSecretGraceMs: 30 * 86_400_000,
    providerCacheMs: 60_000,
    maxProviders: 500,
    /** RFC 7591 registrations a tenant keeps at most (anyone may register while it is on). */
    maxRegisteredApps: 1_000,
    /** The largest registration kept (its JSON), and how many one address makes per hour. */
    registrationMaxBytes: 8_192,
    registrationsPerHour: 20,
  },
  /** RFC 5321 section 4.5.3.1.3: a path holds 256 octets, so an address at most 254. */
  email: { maxLength: 254 },
  /**
   * The longest value the API reads in each field; a longer one is invalid input (422),
   * refused before any work. The request schemas take their caps from here.
   */
  fields: {
    /** Ids we issue are UUIDs (36 characters); the tenant id doubles as client_id. */
    idMaxLength: 64,
    /** An API key as presented (the longest valid one has 51 characters). */
    keyMaxLength: 128,
    /** Refresh tokens and list cursors. */
    tokenMaxLength: 512,
    /** A PKCE code and its code_verifier (RFC 7636 section 4.1: a verifier has at most 128). */
    codeMaxLength: 256,
    /** token_type_hint (RFC 7662 section 2.1). */
    hintMaxLength: 64,
  },
  /** Users as the API lists and stores them. */
  users: {
    /** A page of GET /v1/users when no limit is asked for (at most 100). */
    pageSize: 20,
    nameMaxLength: 200,
    /** Roles: at most 50 per user, each 1 to 64 of A-Z a-z 0-9 _ . : - */
    roles: { max: 50, maxLength: 64 },
    /** Free-form metadata: keys, key length, and size serialised. */
    metadata: { maxKeys: 50, keyMaxLength: 64, maxBytes: 8 * 1024 },
  },
  /** Resource servers may send large tokens in bulk; the token itself is cut at maxTokenLength. */
  introspectionBodyLimit: 2 * 1024 * 1024,
  /** Live keys (and their tenants) are cached this long, and only while invalidations flow. */
  keyCacheMs: 60_000,
  /** Signing keys and the JWKS document. */
  signingKeys: {
    /** Tokens are accepted a little past `exp` on clocks that drift; keys outlive that too. */
    retiredGraceMs: 5 * 60_000,
    /** Keys never change once written, so they are cached by kid this long. */
    privateCacheMs: 60 * 60_000,
    publicCacheMs: 10 * 60_000,
    /** How long a tenant's signing key is known without a query (a rotation waits this long). */
    activeCacheMs: 5_000,
    /** Cache-Control of the JWKS and metadata documents (RFC 9111, RFC 5861). */
    jwks: { maxAgeSeconds: 60, staleWhileRevalidateSeconds: 30 },
    /** How soon common verifiers refetch a JWKS on an unknown kid (jose: 30 s). */
    verifierCooldownSeconds: 30,
  },
  /** The browser endpoints (/v1/client/…). */
  client: {
    /** /v1/client/config may be cached this long by the browser. */
    configMaxAgeSeconds: 60,
    /** Browsers reuse a CORS preflight of the token endpoint this long. */
    preflightMaxAgeSeconds: 600,
  },
  /** Database connections. */
  storage: {
    /** SQLite waits this long for another process's write lock (the CLI) before failing. */
    sqliteBusyTimeoutMs: 5000,
    /** Connections per PostgreSQL pool. */
    postgresPoolSize: 10,
  },
  /** API sessions and their refresh tokens. */
  sessions: {
    /** A session (and so its refresh tokens) lives at most this long, whatever its use. */
    lifetimeMs: 30 * 24 * 60 * 60_000,
    /** A session's live state is cached this long, and only while invalidations flow. */
    stateCacheMs: 60_000,
    /** The stored User-Agent of a session is cut here. */
    userAgentMaxLength: 512,
    /**
     * A refresh records the session's use (`lastUsedAt`) when the last record is older than
     * this: to the minute, as API keys' use, without a write on every refresh.
     */
    touchIntervalMs: 60_000,
  },
  /** Hosted pages: their own browser session, one-time codes and links, and limits. */
  hosted: {
    /** The hosted page's own sign-in lasts this long in its cookie. */
    browserSessionMs: 7 * 24 * 60 * 60_000,
    /** RFC 6749 section 4.1.2 asks for a short-lived code (at most 10 minutes). */
    codeLifetimeMs: 2 * 60_000,
    /** E-mail links work once, within this time. */
    linkLifetimeMs: { verify: 24 * 60 * 60_000, reset: 60 * 60_000, address: 30 * 60_000 },
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
      /**
       * "Confirm it is you" mail to one user, counted apart: only the right password sends
       * it, so requests anyone can make (a password reset) cannot use it up.
       */
      addressMailPerRecipient: { quota: 3, seconds: 15 * 60 },
      /** Each sign-up costs an argon2 hash. */
      signUp: { quota: 20, seconds: 15 * 60 },
      /**
       * Each passkey ceremony started writes a challenge, and a sign-in page view in a
       * browser with passkey autofill starts one: as social sign-in's starts, room for an
       * office behind one NAT address, not for a script filling the table.
       */
      passkeyStart: { quota: 600, seconds: 15 * 60 },
    },
  },
  /** Passkeys (docs/design.md §13). */
  passkeys: {
    /** A ceremony's challenge works once, within this time (also the browser's timeout). */
    challengeLifetimeMs: 5 * 60_000,
    /** A passkey's name, as its owner edits it. */
    nameMaxLength: 64,
  },
  /** Bounds of what an operator may set on a tenant. */
  tenants: {
    nameMaxLength: 100,
    logoUrlMaxLength: 2048,
    /**
     * Largest custom limits of an enterprise plan. A minute may hold sixty of the largest
     * seconds: with both at one million, a tenant allowed 1,000,000 requests in a second
     * could not keep up even 16,667 a second for a minute, which one instance serves.
     */
    customRateMax: { rps: 1_000_000, rpm: 60_000_000 },
    accessTokenTtlSeconds: { min: 60, max: 86_400 },
    /** A custom `aud` (RFC 7519 StringOrURI). */
    audienceMaxLength: 256,
  },
  /** Requests per second / per minute for each plan (docs/design.md §4.4). */
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
   * Failed sign-ins over a 15-minute window (README "Sign-in failures"): per account, per
   * account and address, and per address (IPv6 by /64). From the 5th failure on an account
   * each attempt waits 500 ms more (at most 3 s); at 10 the account answers 429 to every
   * address it was never signed in from (its owner's known addresses pass, unslowed); 10
   * failures on one account from one address, or 50 from one address, answer 429 there. A
   * successful sign-in clears the account's counts and makes its address known for 14 days.
   */
  signInFailures,
  /**
   * Retention (modules/retention): every instance runs a purge on a timer (the first run at
   * a random point of the first interval, so instances spread out); the deletes are
   * idempotent and batched, so several instances may run it at once. Each period counts
   * from when the row stopped being usable (expired, revoked, used or sent).
   */
  retention: {
    intervalMs: 60 * 60_000,
    /** Rows per delete statement: no long lock on a large backlog. */
    batchSize: 1000,
    /** Sessions, with their refresh tokens and codes, kept for the session list and audits. */
    endedSessionsMs: 30 * 24 * 60 * 60_000,
    /** A used refresh token: presenting it again revokes its session only while it is kept. */
    usedRefreshTokensMs: 7 * 24 * 60 * 60_000,
    /** PKCE codes and e-mail links. */
    spentLinksMs: 24 * 60 * 60_000,
    /** The hosted page's browser sessions. */
    endedBrowserSessionsMs: 24 * 60 * 60_000,
    /** The dev outbox (no SMTP_URL). */
    outboxMs: 7 * 24 * 60 * 60_000,
    /** Webhook messages, with their deliveries and attempts (docs/design.md §17). */
    webhookMessagesMs: 30 * 24 * 60 * 60_000,
  },
  /** Webhooks (docs/design.md §17). */
  webhooks: {
    /** A 2xx within this long is success; anything else, or nothing, is a failed attempt. */
    attemptTimeoutMs: 15_000,
    /**
     * The waits before each retry after a failed attempt, each with up to a fifth more or
     * less at random (jitter): about three days in all, then the delivery has failed.
     */
    retryDelaysMs: [
      5_000,
      60_000,
      5 * 60_000,
      30 * 60_000,
      2 * 60 * 60_000,
      5 * 60 * 60_000,
      10 * 60 * 60_000,
      14 * 60 * 60_000,
      20 * 60 * 60_000,
      20 * 60 * 60_000,
    ],
    jitter: 0.2,
    /** How often each instance looks for due deliveries: most of the lag of a healthy receiver. */
    pollMs: 250,
    /** Attempts in flight per instance, and per endpoint: a hanging endpoint holds only its own. */
    maxInFlight: 256,
    maxInFlightPerEndpoint: 16,
    /** Endpoints served per look: each gets its share, none waits behind another's backlog. */
    endpointsPerPoll: 50,
    /** Kept of an answer's body, for the admin area. */
    responseBodyBytes: 2048,
    /** After a secret rotation the old secret signs beside the new one this long. */
    secretGraceMs: 24 * 60 * 60_000,
  },
  /** The admin area (docs/design.md §12). */
  admin: {
    /** An admin's sign-in lasts at most this long, and ends after this much idleness. */
    sessionMs: 12 * 60 * 60_000,
    idleMs: 2 * 60 * 60_000,
    /**
     * Showing a new secret key or changing a provider secret asks for the password again
     * when it was last typed longer ago than this.
     */
    reauthAfterMs: 10 * 60_000,
    /** A generated admin password: 18 random bytes, 24 base64url characters (144 bits). */
    generatedPasswordBytes: 18,
    /** Rows on one page of the audit log, the outbox and a user search. */
    pageSize: 50,
  },
  /** Largest token the introspection endpoint reads; anything longer is inactive. */
  maxTokenLength: 8192,
  /**
   * A deadline on every awaited I/O: a dependency that hangs must look like one that is
   * down (README "Operating Latchkey"), never hold requests or a shutdown for ever.
   */
  timeouts: {
    /** Redis: a connection attempt, and a command without an answer (ioredis commandTimeout). */
    redisConnectMs: 2000,
    redisCommandMs: 500,
    /**
     * Redis is pinged this often; a ping unanswered within redisCommandMs marks it down, and
     * while down rate limits count in memory and caches stop trusting the invalidation bus.
     */
    redisProbeMs: 1000,
    /** PostgreSQL: a new connection (pg connectionTimeoutMillis). */
    pgConnectMs: 2000,
    /** PostgreSQL: a statement on the server (statement_timeout). */
    pgStatementMs: 5000,
    /** PostgreSQL: an answer on the client side (pg query_timeout): a hung network. */
    pgQueryMs: 6000,
    /** PostgreSQL: a transaction left idle is ended by the server. */
    pgIdleInTransactionMs: 10_000,
    /** PostgreSQL: an idle pooled connection is closed after this. */
    pgIdleMs: 30_000,
    /** /readyz: each dependency's ping, so that the answer comes within a second. */
    readinessMs: 800,
    /**
     * SIGTERM/SIGINT: requests in flight get `drainMs` to be answered (each answer the last
     * of its connection), a connection taken but without a request yet gets
     * `drainFirstRequestMs` to send one (answered 503), and by `drainMs` every connection is
     * closed; the process exits after `shutdownMs` whatever still hangs. The drain stays
     * under Fastify's 10 s limit for a close hook.
     */
    drainMs: 8_000,
    drainFirstRequestMs: 1_000,
    shutdownMs: 10_000,
  },
  /**
   * Verified access tokens kept in memory (by digest) so that one seen again skips RSA:
   * at most this many (about 1 KB each), each until its `exp`, at most `ttlMs`.
   */
  verifiedTokens: { maxEntries: 10_000, ttlMs: 60 * 60_000 },
} as const;

export type Plan = keyof typeof defaults.plans;
export const PLANS = Object.keys(defaults.plans) as Plan[];
export type MfaPolicy = 'off' | 'optional' | 'required';
export const MFA_POLICIES: readonly MfaPolicy[] = ['off', 'optional', 'required'];
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
  /** Longest client id a tenant may store for a provider. */
  clientIdMaxLength: 512,
  /** Apple's client secret is a JWT we sign per token request; it is valid this long. */
  appleClientSecretSeconds: 5 * 60,
  /**
   * Provider sign-ins one client address (an IPv6 /64) may start per window. Each start
   * writes a flow row; an office of a few hundred people behind one NAT address signs in
   * well under this, a script filling the table does not get far.
   */
  startsPerAddress: { quota: 600, windowSeconds: 15 * 60 },
} as const;
