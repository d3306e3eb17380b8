import type { Kysely } from 'kysely';
import type { SecretBox } from '../../crypto/secret-box.js';
import type { Publisher, Schema } from '../../storage/index.js';
import type { RateLimitService } from '../rate-limit/index.js';

/** What the second-factor workflows use (docs/design.md §13). */
export interface MfaDeps {
  db: Kysely<Schema>;
  bus: Publisher;
  /** Seals authenticator-app secrets with the master secret, like provider secrets. */
  box: SecretBox;
  limiter: RateLimitService;
}
