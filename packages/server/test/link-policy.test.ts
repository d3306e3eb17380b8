/**
 * The linking policy, one decision for the real provider sign-in and the admin area's
 * preview: every case from the facts alone, no database.
 */
import { describe, expect, it } from 'vitest';
import { decideLink, type LinkFacts } from '../src/modules/social/link-policy.js';

type Account = { id: string; emailVerified: boolean; disabled: boolean };
const account = (id: string, emailVerified = true, disabled = false): Account => ({
  id,
  emailVerified,
  disabled,
});

const facts = (
  change: Partial<Omit<LinkFacts<Account>, 'profile'>> & {
    email?: string | null;
    vouched?: boolean;
  } = {},
): LinkFacts<Account> => ({
  profile: {
    email: change.email === undefined ? 'ada@example.com' : change.email,
    emailVerified: change.vouched ?? true,
  },
  known: change.known,
  holder: change.holder,
  requireEmailVerification: change.requireEmailVerification ?? false,
});

const known = (user: Account) => ({ identityId: 'identity-1', user });

describe('decideLink', () => {
  it.each([
    [
      'a known identity signs its user in',
      facts({ known: known(account('u1')) }),
      { action: 'sign_in', user: account('u1'), identityId: 'identity-1' },
    ],
    [
      'a known identity wins over the address and its vouching',
      facts({
        known: known(account('u1', false)),
        email: null,
        vouched: false,
        requireEmailVerification: true,
      }),
      { action: 'sign_in', user: account('u1', false), identityId: 'identity-1' },
    ],
    [
      'a known identity of a disabled user is refused',
      facts({ known: known(account('u1', true, true)) }),
      { action: 'refuse', refusal: 'disabled' },
    ],
    ['no address is refused', facts({ email: null }), { action: 'refuse', refusal: 'no_email' }],
    [
      'an empty address is refused',
      facts({ email: '' }),
      { action: 'refuse', refusal: 'no_email' },
    ],
    [
      'a vouched address of a verified account links it',
      facts({ holder: account('u2') }),
      { action: 'link', user: account('u2') },
    ],
    [
      'an address the provider does not vouch for joins no account',
      facts({ holder: account('u2'), vouched: false }),
      { action: 'refuse', refusal: 'email_not_vouched' },
    ],
    [
      'an account that never proved its address is not joined (pre-hijacking)',
      facts({ holder: account('u2', false) }),
      { action: 'refuse', refusal: 'account_unverified' },
    ],
    [
      'neither side proved the address: the provider is named first',
      facts({ holder: account('u2', false), vouched: false }),
      { action: 'refuse', refusal: 'email_not_vouched' },
    ],
    [
      'a disabled account is not joined',
      facts({ holder: account('u2', true, true) }),
      { action: 'refuse', refusal: 'disabled' },
    ],
    [
      'an unverified disabled account: the address is refused first',
      facts({ holder: account('u2', false, true) }),
      { action: 'refuse', refusal: 'account_unverified' },
    ],
    ['a new address makes a new user', facts(), { action: 'create', email: 'ada@example.com' }],
    [
      'an unvouched new address makes a new user when the tenant allows it',
      facts({ vouched: false }),
      { action: 'create', email: 'ada@example.com' },
    ],
    [
      'a vouched new address makes a new user when the tenant needs verification',
      facts({ requireEmailVerification: true }),
      { action: 'create', email: 'ada@example.com' },
    ],
    [
      'an unvouched new address is refused when the tenant needs verification',
      facts({ vouched: false, requireEmailVerification: true }),
      { action: 'refuse', refusal: 'verification_required' },
    ],
  ])('%s', (_name, given, expected) => {
    expect(decideLink(given)).toEqual(expected);
  });
});
