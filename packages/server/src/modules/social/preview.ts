import type { Kysely } from 'kysely';
import type { Schema } from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import { readLinkFacts } from './link.service.js';
import { decideLink, type LinkRefusal } from './link-policy.js';
import { PROVIDERS, type Profile, type ProviderId } from './providers/index.js';

/** What `userForProfile` would do with a profile. */
export type ProfileOutcome =
  | { action: 'sign_in' | 'link'; userId: string; email: string }
  | { action: 'create'; email: string }
  | { action: 'refuse'; reason: string };

/** How the admin area words a refusal: unlike the hosted page, it tells the admin why. */
const REASONS: Record<LinkRefusal, (provider: string) => string> = {
  disabled: () => 'The account is disabled.',
  no_email: (provider) => `${provider} did not share an e-mail address.`,
  email_not_vouched: (provider) =>
    `${provider} does not vouch for the address, which an account holds.`,
  account_unverified: () =>
    'The account with this address has not verified it, so no provider can join it.',
  verification_required: (provider) =>
    `The tenant needs a verified address, which ${provider} does not confirm.`,
};

/**
 * The linking policy's decision for a profile (`decideLink`, as `userForProfileIn` takes
 * it), read without writing anything: the admin area's "Test sign-in" shows which account
 * a profile would sign in, link or create.
 */
export async function previewProfile(
  db: Kysely<Schema>,
  tenant: Tenant,
  provider: ProviderId,
  profile: Profile,
): Promise<ProfileOutcome> {
  const decision = decideLink(await readLinkFacts(db, tenant, provider, profile));
  switch (decision.action) {
    case 'refuse':
      return { action: 'refuse', reason: REASONS[decision.refusal](PROVIDERS[provider].name) };
    case 'create':
      return { action: 'create', email: decision.email };
    default:
      return { action: decision.action, userId: decision.user.id, email: decision.user.email };
  }
}
