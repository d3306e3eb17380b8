import type { Kysely } from 'kysely';
import type { Schema } from '../../storage/index.js';

/**
 * One line of Latchkey's export (docs/design.md §16), the format `--from latchkey` reads.
 * `passwordHash` is as stored: the tenant's argon2id (a PHC string), an imported hash not
 * yet replaced (`<algorithm>:<encoded>`), or null. Factors carry no secret.
 */
export interface ExportedUser {
  id: string;
  email: string;
  emailVerified: boolean;
  name: string | null;
  metadata: Record<string, unknown>;
  roles: string[];
  disabled: boolean;
  createdAt: string;
  passwordHash: string | null;
  identities: {
    provider: string;
    issuer: string;
    subject: string;
    email: string | null;
    createdAt: string;
  }[];
  factors: { type: 'totp' | 'passkey' | 'recovery_codes'; createdAt: string }[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A tenant's users, oldest first, a page at a time (keyset on created_at and id, the
 * `users_tenant_created` index): memory holds one page, whatever the tenant's size.
 */
export async function* exportUsers(
  db: Kysely<Schema>,
  tenantId: string,
  pageSize = 500,
): AsyncIterable<ExportedUser> {
  let after: { created: number; id: string } | undefined;
  for (;;) {
    let query = db
      .selectFrom('users')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at')
      .orderBy('id')
      .limit(pageSize);
    if (after) {
      const { created, id } = after;
      query = query.where((eb) =>
        eb.or([
          eb('created_at', '>', created),
          eb.and([eb('created_at', '=', created), eb('id', '>', id)]),
        ]),
      );
    }
    const users = await query.execute();
    if (users.length === 0) return;
    const ids = users.map((u) => u.id);
    const [identities, totp, passkeys, recovery] = await Promise.all([
      db
        .selectFrom('identities')
        .select(['user_id', 'provider', 'issuer', 'subject', 'email', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .where('user_id', 'in', ids)
        .orderBy('created_at')
        .execute(),
      db
        .selectFrom('totp_factors')
        .select(['user_id', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .where('user_id', 'in', ids)
        .where('confirmed_at', 'is not', null)
        .execute(),
      db
        .selectFrom('passkeys')
        .select(['user_id', 'created_at'])
        .where('tenant_id', '=', tenantId)
        .where('user_id', 'in', ids)
        .execute(),
      db
        .selectFrom('recovery_codes')
        .select(['user_id'])
        .select((eb) => eb.fn.min('created_at').as('created_at'))
        .where('tenant_id', '=', tenantId)
        .where('user_id', 'in', ids)
        .where('used_at', 'is', null)
        .groupBy('user_id')
        .execute(),
    ]);
    const group = <T extends { user_id: string }>(rows: T[]) => {
      const by = new Map<string, T[]>();
      for (const r of rows) by.set(r.user_id, [...(by.get(r.user_id) ?? []), r]);
      return by;
    };
    const ofIdentities = group(identities);
    const factors = group([
      ...totp.map((f) => ({ user_id: f.user_id, type: 'totp' as const, at: Number(f.created_at) })),
      ...passkeys.map((f) => ({
        user_id: f.user_id,
        type: 'passkey' as const,
        at: Number(f.created_at),
      })),
      ...recovery.map((f) => ({
        user_id: f.user_id,
        type: 'recovery_codes' as const,
        at: Number(f.created_at),
      })),
    ]);
    for (const u of users) {
      yield {
        id: u.id,
        email: u.email,
        emailVerified: u.email_verified_at !== null,
        name: u.name,
        metadata: JSON.parse(u.metadata) as Record<string, unknown>,
        roles: JSON.parse(u.roles) as string[],
        disabled: u.disabled_at !== null,
        createdAt: iso(Number(u.created_at)),
        passwordHash: u.password_hash,
        identities: (ofIdentities.get(u.id) ?? []).map((i) => ({
          provider: i.provider,
          issuer: i.issuer,
          subject: i.subject,
          email: i.email,
          createdAt: iso(Number(i.created_at)),
        })),
        factors: (factors.get(u.id) ?? []).map((f) => ({ type: f.type, createdAt: iso(f.at) })),
      };
    }
    const last = users[users.length - 1] as (typeof users)[number];
    after = { created: Number(last.created_at), id: last.id };
    if (users.length < pageSize) return;
  }
}
