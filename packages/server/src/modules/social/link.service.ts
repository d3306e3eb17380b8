import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { LatchkeyError } from '../../errors/index.js';
import { isUniqueViolation, type Schema } from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import { createUserWithoutPassword, findUserByEmail, getUser, type User } from '../users/index.js';
import { PROVIDERS, type Profile, type ProviderId } from './providers/index.js';

/** Why a provider sign-in cannot go on; shown on the hosted page, nothing created. */
export class SocialRefusal extends Error {
  override name = 'SocialRefusal';
  /** The hosted request of the attempt, when known: the page can brand itself and lead back. */
  readonly hostedQuery: string | undefined;

  constructor(message: string, hostedQuery?: string) {
    super(message);
    this.hostedQuery = hostedQuery;
  }
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
  if (!profile.email) {
    throw new SocialRefusal(
      `${name} did not share an e-mail address, and this application needs one.`,
    );
  }
  const existing = await findUserByEmail(db, tenant.id, profile.email);
  if (existing) {
    // Both sides must have proved the address: the provider now, and the account before.
    // One message for every refusal here, so that it tells nothing about the account.
    if (!profile.emailVerified || !existing.emailVerified) {
      throw new SocialRefusal(
        `This e-mail address cannot be joined to ${name} sign-in here. Sign in the way you did before, or use another account.`,
      );
    }
    if (existing.disabled) throw new SocialRefusal('This account is disabled.');
    try {
      await db.transaction().execute(async (trx) => {
        await addIdentity(trx, tenant.id, existing.id, provider, profile);
        await audit(trx, tenant.id, existing.id, 'identity_linked', {
          provider,
          issuer: profile.issuer,
          subject: profile.subject,
        });
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return userForProfile(db, tenant, provider, profile);
    }
    return existing;
  }
  if (tenant.requireEmailVerification && !profile.emailVerified) {
    throw new SocialRefusal(
      `This application needs a verified e-mail address, which ${name} does not confirm.`,
    );
  }
  try {
    // The user, the identity and the record of it: all or nothing.
    return await db.transaction().execute(async (trx) => {
      const user = await createUserWithoutPassword(trx, tenant, {
        email: profile.email as string,
        name: profile.name,
        emailVerified: profile.emailVerified,
      });
      await addIdentity(trx, tenant.id, user.id, provider, profile);
      await audit(trx, tenant.id, user.id, 'identity_created', {
        provider,
        issuer: profile.issuer,
        subject: profile.subject,
        newUser: true,
      });
      return user;
    });
  } catch (error) {
    if (error instanceof LatchkeyError && error.code === 'validation_failed') {
      throw new SocialRefusal(`${name} gave an e-mail address this application cannot accept.`);
    }
    if (
      (error instanceof LatchkeyError && error.code === 'email_taken') ||
      isUniqueViolation(error)
    ) {
      return userForProfile(db, tenant, provider, profile);
    }
    throw error;
  }
}

/**
 * After someone proves the mailbox (verification link, password reset), identities that
 * came with an address their provider never vouched for are dropped: they may belong to
 * whoever claimed the address first.
 */
export async function dropUnprovenIdentities(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
): Promise<void> {
  const dropped = await db
    .deleteFrom('identities')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('email_verified', '=', 0)
    .executeTakeFirst();
  if (Number(dropped.numDeletedRows) > 0) {
    await audit(db, tenantId, userId, 'identities_dropped', {
      reason: 'address proven',
      count: Number(dropped.numDeletedRows),
    });
  }
}
