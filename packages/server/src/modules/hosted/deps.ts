import type { Kysely } from 'kysely';
import { defaults } from '../../config/defaults.js';
import type { Publisher, Schema } from '../../storage/index.js';
import type { Mailer } from '../email/index.js';
import type { KeyResolver } from '../keys/index.js';
import type { MfaDeps } from '../mfa/index.js';
import type { RateLimitService } from '../rate-limit/index.js';
import type { Sessions } from '../sessions/index.js';
import type { BreachedPasswords, PasswordHasher, SignInPolicy } from '../users/index.js';

/** What the hosted-page workflows use; built once per app. */
export interface HostedDeps extends MfaDeps {
  db: Kysely<Schema>;
  bus: Publisher;
  keys: KeyResolver;
  sessions: Sessions;
  hasher: PasswordHasher;
  breached: BreachedPasswords;
  limiter: RateLimitService;
  /** The failed sign-in policy (defaults.signInFailures unless a test shortens it). */
  policy: SignInPolicy;
  mailer: Mailer;
  /** `{auth_url}`: e-mail links point here. */
  authUrl: string;
}

type Limit = keyof typeof defaults.hosted.limits;

/** One unit of a hosted-page limit (defaults.hosted.limits) for `subject`; false past it. */
export async function withinLimit(
  deps: Pick<HostedDeps, 'limiter'>,
  limit: Limit,
  subject: string,
): Promise<boolean> {
  const { quota, seconds } = defaults.hosted.limits[limit];
  const decision = await deps.limiter.consume(`${KEY_PREFIX[limit]}:${subject}`, [
    { name: KEY_PREFIX[limit], quota, seconds },
  ]);
  return decision.allowed;
}

/** The counter names in the rate-limit store (unchanged, so counters survive an upgrade). */
const KEY_PREFIX: Record<Limit, string> = {
  mail: 'mail',
  mailPerRecipient: 'mail-user',
  addressMailPerRecipient: 'address-mail-user',
  signUp: 'sign-up',
  passkeyStart: 'passkey-start',
};
