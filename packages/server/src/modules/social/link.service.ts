import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { InvalidationBus } from '../../cache/invalidation.js';
import { LatchkeyError } from '../../errors/index.js';
import { isUniqueViolation, type Schema, type Tx, transact } from '../../storage/index.js';
import type { Tenant } from '../tenants/index.js';
import {
  applyUserUpdate,
  createUserWithoutPassword,
  findUserByEmail,
  getUser,
  type User,
  userHasPassword,
} from '../users/index.js';
import { decideLink, type LinkFacts, type LinkRefusal } from './link-policy.js';
import { PROVIDERS, type Profile, type ProviderId } from './providers/index.js';

export interface LinkDeps {
  db: Kysely<Schema>;
  bus: InvalidationBus;
}

/** A provider account joined to a user, as the admin area shows it. */
export interface Identity {
  id: string;
  userId: string;
  provider: ProviderId;
  email: string | null;
  emailVerified: boolean;
  picture: string | null;
  createdAt: string;
  lastUsedAt: string;
}

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

/**
 * The facts `decideLink` needs, read in the caller's transaction: the known identity and
 * its user, else the user holding the profile's address (only when there is an address).
 */
export async function readLinkFacts(
  db: Kysely<Schema>,
  tenant: Tenant,
  provider: ProviderId,
  profile: Profile,
): Promise<LinkFacts> {
  const facts = {
    profile,
    requireEmailVerification: tenant.requireEmailVerification,
    known: undefined,
    holder: undefined,
  };
  const identity = await db
    .selectFrom('identities')
    .select(['id', 'user_id'])
    .where('tenant_id', '=', tenant.id)
    .where('provider', '=', provider)
    .where('issuer', '=', profile.issuer)
    .where('subject', '=', profile.subject)
    .executeTakeFirst();
  if (identity) {
    const user = await getUser(db, tenant.id, identity.user_id);
    return { ...facts, known: { identityId: identity.id, user } };
  }
  if (!profile.email) return facts;
  return { ...facts, holder: await findUserByEmail(db, tenant.id, profile.email) };
}

async function addIdentity(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
  provider: ProviderId,
  profile: Profile,
): Promise<Identity> {
  const now = Date.now();
  const id = randomUUID();
  await db
    .insertInto('identities')
    .values({
      id,
      tenant_id: tenantId,
      user_id: userId,
      provider,
      issuer: profile.issuer,
      subject: profile.subject,
      email: profile.email,
      email_verified: profile.emailVerified ? 1 : 0,
      picture: profile.picture,
      created_at: now,
      last_used_at: now,
    })
    .execute();
  const at = new Date(now).toISOString();
  return {
    id,
    userId,
    provider,
    email: profile.email,
    emailVerified: profile.emailVerified,
    picture: profile.picture,
    createdAt: at,
    lastUsedAt: at,
  };
}

const unjoinable = (provider: string) =>
  `This e-mail address cannot be joined to ${provider} sign-in here. Sign in the way you did before, or use another account.`;

/**
 * How the hosted page words a refusal: one message for both unproven-address cases, so
 * that it tells nothing about the account.
 */
const REFUSALS: Record<LinkRefusal, (provider: string) => string> = {
  disabled: () => 'This account is disabled.',
  no_email: (provider) =>
    `${provider} did not share an e-mail address, and this application needs one.`,
  email_not_vouched: unjoinable,
  account_unverified: unjoinable,
  verification_required: (provider) =>
    `This application needs a verified e-mail address, which ${provider} does not confirm.`,
};

/**
 * Signs a provider profile in by the linking policy (`decideLink`), within the caller's
 * transaction: a known identity signs its user in, a new one is joined to the user holding
 * its address or gets a new user. Every new identity and every link is recorded in
 * audit_events. A parallel sign-in that wrote the same user or identity first makes this
 * fail: see `retryingRace`.
 */
export async function userForProfileIn(
  tx: Tx,
  tenant: Tenant,
  provider: ProviderId,
  profile: Profile,
): Promise<User> {
  const { db } = tx;
  const name = PROVIDERS[provider].name;
  const decision = decideLink(await readLinkFacts(db, tenant, provider, profile));
  if (decision.action === 'refuse') throw new SocialRefusal(REFUSALS[decision.refusal](name));
  if (decision.action === 'sign_in') {
    // The provider's picture of today replaces the stored one (null when it gave none).
    await db
      .updateTable('identities')
      .set({ last_used_at: Date.now(), picture: profile.picture })
      .where('id', '=', decision.identityId)
      .execute();
    return decision.user;
  }
  if (decision.action === 'link') {
    await linkIdentityIn(tx, tenant.id, decision.user.id, provider, profile);
    return decision.user;
  }
  let user: User;
  try {
    user = await createUserWithoutPassword(db, tenant, {
      email: decision.email,
      name: profile.name,
      emailVerified: profile.emailVerified,
    });
  } catch (error) {
    if (error instanceof LatchkeyError && error.code === 'validation_failed') {
      throw new SocialRefusal(`${name} gave an e-mail address this application cannot accept.`);
    }
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

/**
 * Runs a workflow around `userForProfileIn` once more when a parallel sign-in wrote the
 * same identity or address first (its transaction is spoilt, and PostgreSQL refuses any
 * further statement in it): the second run finds that identity or user.
 */
export async function retryingRace<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const raced =
      isUniqueViolation(error) || (error instanceof LatchkeyError && error.code === 'email_taken');
    if (!raced) throw error;
    return run();
  }
}

/** The writes of `linkIdentity`, within the caller's transaction. */
export async function linkIdentityIn(
  tx: Tx,
  tenantId: string,
  userId: string,
  provider: ProviderId,
  profile: Profile,
): Promise<Identity> {
  // Identities are part of the user: whatever is cached about the user is stale now.
  tx.invalidate(`user:${userId}`);
  await getUser(tx.db, tenantId, userId);
  const added = await addIdentity(tx.db, tenantId, userId, provider, profile);
  await audit(tx.db, tenantId, userId, 'identity_linked', {
    provider,
    issuer: profile.issuer,
    subject: profile.subject,
  });
  return added;
}

/**
 * Joins a provider account to a user (one transaction with its audit record). Refuses
 * with `conflict` an identity that already belongs to a user, and `not_found` an unknown
 * user. Whether the person may link it (the linking policy) is the caller's decision.
 */
export async function linkIdentity(
  deps: LinkDeps,
  tenantId: string,
  userId: string,
  provider: ProviderId,
  profile: Profile,
): Promise<Identity> {
  try {
    return await transact(deps.db, deps.bus, (tx) =>
      linkIdentityIn(tx, tenantId, userId, provider, profile),
    );
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    throw new LatchkeyError(
      'conflict',
      `This ${PROVIDERS[provider].name} account is linked already`,
    );
  }
}

/**
 * Removes one identity from a user (one transaction with its audit record). Refuses with
 * `conflict` to remove the user's last way to sign in: an identity of a user who has no
 * password and no other identity.
 */
export async function unlinkIdentity(
  deps: LinkDeps,
  tenantId: string,
  userId: string,
  identityId: string,
): Promise<void> {
  await transact(deps.db, deps.bus, async ({ db: trx, invalidate }) => {
    invalidate(`user:${userId}`);
    // Touching the user first locks its row (PostgreSQL), so that two unlinks of one
    // user's last two identities run one after the other and the second sees the first.
    await applyUserUpdate(trx, tenantId, userId, {});
    const identities = await trx
      .selectFrom('identities')
      .select(['id', 'provider', 'issuer', 'subject'])
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', userId)
      .execute();
    const identity = identities.find((i) => i.id === identityId);
    if (!identity)
      throw new LatchkeyError('not_found', `No identity ${identityId} on user ${userId}`);
    if (identities.length === 1 && !(await userHasPassword(trx, tenantId, userId))) {
      throw new LatchkeyError(
        'conflict',
        'This is the only way this user can sign in: set a password or link another provider before removing it',
      );
    }
    await trx.deleteFrom('identities').where('id', '=', identityId).execute();
    await audit(trx, tenantId, userId, 'identity_unlinked', {
      provider: identity.provider,
      issuer: identity.issuer,
      subject: identity.subject,
    });
  });
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
