import type { Kysely } from 'kysely';
import type { Schema } from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import { findUserByEmail, getUser } from '../users/index.js';
import { PROVIDERS, type Profile, type ProviderId } from './providers/index.js';

/** What `userForProfile` would do with a profile. */
export type ProfileOutcome =
  | { action: 'sign_in' | 'link'; userId: string; email: string }
  | { action: 'create'; email: string }
  | { action: 'refuse'; reason: string };

/**
 * The linking policy of `userForProfile` (link.service.ts), read without writing
 * anything: the admin area's "Test sign-in" shows which account a profile would sign in,
 * link or create. test/admin.test.ts holds the two to the same answers.
 */
export async function previewProfile(
  db: Kysely<Schema>,
  tenant: Tenant,
  provider: ProviderId,
  profile: Profile,
): Promise<ProfileOutcome> {
  const name = PROVIDERS[provider].name;
  const known = await db
    .selectFrom('identities')
    .select('user_id')
    .where('tenant_id', '=', tenant.id)
    .where('provider', '=', provider)
    .where('issuer', '=', profile.issuer)
    .where('subject', '=', profile.subject)
    .executeTakeFirst();
  if (known) {
    const user = await getUser(db, tenant.id, known.user_id);
    if (user.disabled) return { action: 'refuse', reason: 'The account is disabled.' };
    return { action: 'sign_in', userId: user.id, email: user.email };
  }
  if (!profile.email)
    return { action: 'refuse', reason: `${name} did not share an e-mail address.` };
  const existing = await findUserByEmail(db, tenant.id, profile.email);
  if (existing) {
    if (!profile.emailVerified)
      return {
        action: 'refuse',
        reason: `${name} does not vouch for the address, which an account holds.`,
      };
    if (!existing.emailVerified)
      return {
        action: 'refuse',
        reason: 'The account with this address has not verified it, so no provider can join it.',
      };
    if (existing.disabled) return { action: 'refuse', reason: 'The account is disabled.' };
    return { action: 'link', userId: existing.id, email: existing.email };
  }
  if (tenant.requireEmailVerification && !profile.emailVerified)
    return {
      action: 'refuse',
      reason: `The tenant needs a verified address, which ${name} does not confirm.`,
    };
  return { action: 'create', email: profile.email };
}
