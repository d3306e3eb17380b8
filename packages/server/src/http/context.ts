import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { InvalidationBus } from '../cache/invalidation.js';
import type { Config } from '../config/config.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Mailer } from '../modules/email/index.js';
import { type HostedDeps, mailAddressConfirmation } from '../modules/hosted/index.js';
import type { ActiveClaims, VerifiedTokens } from '../modules/introspection/index.js';
import type { KeyContext, KeyResolver } from '../modules/keys/index.js';
import type { AppCaller, AppCredentials } from '../modules/oauth/index.js';
import type { OAuthProviders } from '../modules/oauth/registry.js';
import type { Metrics } from '../modules/observability/metrics.js';
import type { RateLimitService } from '../modules/rate-limit/index.js';
import type { AccountDeps, Sessions, SigningKeys } from '../modules/sessions/index.js';
import type {
  BreachedPasswords,
  PasswordHasher,
  SignInDeps,
  SignInPolicy,
} from '../modules/users/index.js';
import type { Database } from '../storage/index.js';

/** Everything a route needs, built once by app.ts. */
export interface AppContext {
  config: Config;
  /** The app's logger, for work that outlives its request. */
  log: FastifyBaseLogger;
  database: Database;
  hasher: PasswordHasher;
  /** The breached-password check of sign-up and reset (docs/design.md §13). */
  breached: BreachedPasswords;
  limiter: RateLimitService;
  metrics: Metrics;
  redis: Redis | undefined;
  box: SecretBox;
  mailer: Mailer;
  keys: KeyResolver;
  /** Apps as introspection's callers and as the subjects of client-credentials tokens. */
  apps: AppCredentials;
  bus: InvalidationBus;
  signingKeys: SigningKeys;
  sessions: Sessions;
  /** Access tokens whose signature and claims already passed (introspection). */
  verifiedTokens: VerifiedTokens<ActiveClaims>;
  /** `{auth_url}` of docs/design.md §3: hosted pages, JWKS and token issuers live here. */
  authUrl: string;
  signInPolicy: SignInPolicy;
  /** Each tenant's OpenID Provider (docs/design.md §14), built on first use. */
  oauthProviders: OAuthProviders;
}

/** Who called a protected route: a key, or (introspection only) an app with its secret. */
export type ApiCaller = KeyContext | AppCaller;

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller and its tenant, set by the authentication step of a protected route. */
    apiKey: ApiCaller | undefined;
  }
}

/** The deps of the account workflows (sign-in, update, sign out everywhere). */
export function accountDeps(ctx: AppContext): AccountDeps & SignInDeps {
  const deps = {
    db: ctx.database.db,
    bus: ctx.bus,
    box: ctx.box,
    sessions: ctx.sessions,
    hasher: ctx.hasher,
    limiter: ctx.limiter,
    policy: ctx.signInPolicy,
  };
  return {
    ...deps,
    // The proof a new address gives while many fail on an account: a link to its owner,
    // sent after the answer, whose time must not tell whether the password was right.
    confirmAddress: (tenant, user, address, returnTo) => {
      const mailing = { ...deps, mailer: ctx.mailer, authUrl: ctx.authUrl };
      setImmediate(() =>
        mailAddressConfirmation(mailing, tenant, user, address, returnTo).catch((error) =>
          ctx.log.error({ err: error }, 'address confirmation mail failed'),
        ),
      );
    },
  };
}

/** The deps of the hosted-page workflows. */
export function hostedDeps(ctx: AppContext): HostedDeps {
  return {
    ...accountDeps(ctx),
    keys: ctx.keys,
    breached: ctx.breached,
    mailer: ctx.mailer,
    authUrl: ctx.authUrl,
  };
}
