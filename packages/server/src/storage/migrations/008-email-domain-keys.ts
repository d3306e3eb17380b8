import { domainToASCII } from 'node:url';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** `users/email.ts` as of this migration, applied to a key the old rule made. */
function withMappedDomain(key: string): string {
  const at = key.lastIndexOf('@');
  if (at < 0) return key;
  const domain = key.slice(at + 1);
  return `${key.slice(0, at)}@${domainToASCII(domain) || domain}`;
}

interface Row {
  id: string;
  tenant_id: string;
  email_key: string;
}

export const emailDomainKeys: Migration = {
  /**
   * E-mail keys now map the domain by UTS-46 (users/email.ts): the domain of every key is
   * mapped again (the local part, already case-folded, stays).
   * Two existing accounts of one mailbox (a Kelvin sign, full-width letters) cannot share
   * a key: the older one takes it, the younger keeps its old key, and so stays reachable
   * only by the exact spelling it was made with, until an operator merges or deletes it.
   */
  async up(db: Kysely<unknown>) {
    const users = db as unknown as Kysely<{ users: Row & { created_at: number } }>;
    const rows = await users
      .selectFrom('users')
      .select(['id', 'tenant_id', 'email_key'])
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    const taken = new Set(rows.map((r) => `${r.tenant_id} ${r.email_key}`));
    for (const row of rows) {
      const key = withMappedDomain(row.email_key);
      if (key === row.email_key || taken.has(`${row.tenant_id} ${key}`)) continue;
      await users.updateTable('users').set({ email_key: key }).where('id', '=', row.id).execute();
      taken.delete(`${row.tenant_id} ${row.email_key}`);
      taken.add(`${row.tenant_id} ${key}`);
    }
  },

  // Keys only, no schema change: nothing to undo.
  async down() {},
};
