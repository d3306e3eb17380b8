import type { User } from '../users/index.js';

/** What the decision needs to know of a user. */
type Candidate = Pick<User, 'emailVerified' | 'disabled'>;

/** The facts a provider sign-in is decided on (`readLinkFacts` reads them). */
export interface LinkFacts<U extends Candidate = User> {
  /** The address the provider shared, if any, and whether it vouches for it. */
  profile: { email: string | null; emailVerified: boolean };
  /** The identity (provider, issuer, subject) already joined to a user, if any. */
  known: { identityId: string; user: U } | undefined;
  /** The user holding the profile's address; read only when no identity is known. */
  holder: U | undefined;
  /** The tenant setting: a new account needs an address its provider vouches for. */
  requireEmailVerification: boolean;
}

/** Why a profile may sign nobody in; each caller words it for its reader. */
export type LinkRefusal =
  | 'disabled'
  | 'no_email'
  | 'email_not_vouched'
  | 'account_unverified'
  | 'verification_required';

export type LinkDecision<U extends Candidate = User> =
  | { action: 'sign_in'; user: U; identityId: string }
  | { action: 'link'; user: U }
  | { action: 'create'; email: string }
  | { action: 'refuse'; refusal: LinkRefusal };

/**
 * The linking policy (README "Social sign-in"), without I/O; the real sign-in
 * (`userForProfileIn`) and the admin area's preview (`previewProfile`) both follow it:
 * 1. A known identity signs its user in.
 * 2. A new identity joins an existing user only when the provider vouches for the e-mail
 *    address, and never an account whose address is unverified: whoever created that
 *    account may not own the address (account pre-hijacking).
 * 3. Otherwise a new user is made, unless the tenant needs a verified address the provider
 *    does not give.
 * A disabled user is never signed in or joined.
 */
export function decideLink<U extends Candidate>(facts: LinkFacts<U>): LinkDecision<U> {
  const { profile, known, holder } = facts;
  if (known) {
    if (known.user.disabled) return { action: 'refuse', refusal: 'disabled' };
    return { action: 'sign_in', user: known.user, identityId: known.identityId };
  }
  if (!profile.email) return { action: 'refuse', refusal: 'no_email' };
  if (holder) {
    // Both sides must have proved the address: the provider now, and the account before.
    if (!profile.emailVerified) return { action: 'refuse', refusal: 'email_not_vouched' };
    if (!holder.emailVerified) return { action: 'refuse', refusal: 'account_unverified' };
    if (holder.disabled) return { action: 'refuse', refusal: 'disabled' };
    return { action: 'link', user: holder };
  }
  if (facts.requireEmailVerification && !profile.emailVerified)
    return { action: 'refuse', refusal: 'verification_required' };
  return { action: 'create', email: profile.email };
}
