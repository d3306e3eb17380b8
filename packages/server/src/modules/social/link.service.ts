import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { LatchkeyError } from '../../errors/index.js';
import { isUniqueViolation, type Schema } from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import {
  createUserWithoutPassword,
  findUserByEmail,
  getUser,
  type User,
  userHasPassword,
} from '../users/index.js';
import { PROVIDERS, type Profile, type ProviderId } from './providers/index.js';

/** Why a provider sign-in cannot go on; shown on the hosted page, nothing created. */
export class SocialRefusal extends Error {
  override name = 'SocialRefusal';
}

async function audit(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
  kind: string,
  detail: object,
) {
  await db
    .insertInto('audit_events')
    .values({
      id: randomUUID(),
      tenant_id: tenantId,
      user_id: userId,
      kind,
      detail: JSON.stringify(detail),
      created_at: Date.now(),
    })
    .execute();
}

async function findIdentity(
  db: Kysely<Schema>,
  tenantId: string,
  provider: ProviderId,
  profile: Profile,
) {
  return db
    .selectFrom('identities')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('provider', '=', provider)
    .where('issuer', '=', profile.issuer)
    .where('subject', '=', profile.subject)
    .executeTakeFirst();
}

async function addIdentity(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
  provider: ProviderId,
  profile: Profile,
) {
  const now = Date.now();
  await db
    .insertInto('identities')
    .values({
      id: randomUUID(),
      tenant_id: tenantId,
      user_id: userId,
      provider,
      issuer: profile.issuer,
      subject: profile.subject,
      email: profile.email,
      email_verified: profile.emailVerified ? 1 : 0,
      created_at: now,
      last_used_at: now,
    })
    .execute();
}

/**
 * The linking policy (README "Social sign-in"):
 * 1. A known identity (provider, issuer, subject) signs its user in.
 * 2. A new identity joins an existing user only when the provider vouches for the e-mail
 *    address, and never a password account whose address is unverified: whoever created
 *    that account may not own the address (account pre-hijacking).
 * 3. Otherwise a new user is made, unless its address is taken, or the tenant needs a
 *    verified address the provider does not give.
 * Every new identity and every link is recorded in audit_events.
 */
export async function userForProfile(
  db: Kysely<Schema>,
  tenant: Tenant,
  provider: ProviderId,
  profile: Profile,
): Promise<User> {
  const name = PROVIDERS[provider].name;
  const known = await findIdentity(db, tenant.id, provider, profile);
  if (known) {
    const user = await getUser(db, tenant.id, known.user_id);
    if (user.disabled) throw new SocialRefusal('This account is disabled.');
    await db
      .updateTable('identities')
      .set({ last_used_at: Date.now() })
      .where('id', '=', known.id)
      .execute();
    return user;
  }
  if (!profile.email)
    throw new SocialRefusal(
      `${name} did not share an e-mail address, and this application needs one.`,
    );
  const existing = await findUserByEmail(db, tenant.id, profile.email);
  if (existing) {
    if (!profile.emailVerified) {
      throw new SocialRefusal(
        `An account with ${profile.email} exists already. ${name} does not confirm e-mail addresses, so sign in to that account another way.`,
      );
    }
    if (!existing.emailVerified && (await userHasPassword(db, tenant.id, existing.id))) {
      throw new SocialRefusal(
        `An account with ${profile.email} exists but its address was never verified. Sign in with its password and verify the address first.`,
      );
    }
    if (existing.disabled) throw new SocialRefusal('This account is disabled.');
    try {
      await addIdentity(db, tenant.id, existing.id, provider, profile);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return userForProfile(db, tenant, provider, profile);
    }
    await audit(db, tenant.id, existing.id, 'identity_linked', {
      provider,
      issuer: profile.issuer,
      subject: profile.subject,
    });
    return existing;
  }
  if (tenant.requireEmailVerification && !profile.emailVerified) {
    throw new SocialRefusal(
      `This application needs a verified e-mail address, which ${name} does not confirm.`,
    );
  }
  let user: User;
  try {
    user = await createUserWithoutPassword(db, tenant, {
      email: profile.email,
      name: profile.name,
      emailVerified: profile.emailVerified,
    });
  } catch (error) {
    if (error instanceof LatchkeyError && error.code === 'validation_failed') {
      throw new SocialRefusal(`${name} gave an e-mail address this application cannot accept.`);
    }
    if (error instanceof LatchkeyError && error.code === 'email_taken')
      return userForProfile(db, tenant, provider, profile);
    throw error;
  }
  await addIdentity(db, tenant.id, user.id, provider, profile);
  await audit(db, tenant.id, user.id, 'identity_created', {
    provider,
    issuer: profile.issuer,
    subject: profile.subject,
    newUser: true,
  });
  return user;
}
