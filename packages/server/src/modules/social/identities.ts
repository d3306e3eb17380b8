import type { Kysely } from 'kysely';
import type { Schema } from '../../storage/index.js';

/** A user's identity as the admin area lists it (with the provider's subject). */
export interface ListedIdentity {
  id: string;
  provider: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  /** The provider's picture URL at the last sign-in through it, or null. */
  picture: string | null;
  createdAt: string;
  lastUsedAt: string;
}

/** A user's provider identities, oldest first. */
export async function listIdentities(
  db: Kysely<Schema>,
  tenantId: string,
  userId: string,
): Promise<ListedIdentity[]> {
  const rows = await db
    .selectFrom('identities')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    provider: r.provider,
    subject: r.subject,
    email: r.email,
    emailVerified: r.email_verified === 1,
    picture: r.picture,
    createdAt: new Date(r.created_at).toISOString(),
    lastUsedAt: new Date(r.last_used_at).toISOString(),
  }));
}
