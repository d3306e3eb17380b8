import { type Kysely, type RawBuilder, sql } from 'kysely';
import { defaults, socialDefaults } from '../../config/defaults.js';
import type { Schema } from '../../storage/index.js';

export type RetentionPolicy = { [K in keyof typeof defaults.retention]: number };

/** What one table keeps: rows matching `past(now)` are deleted. */
interface Rule {
  table: keyof Schema;
  key: string;
  past: (now: number, policy: RetentionPolicy) => RawBuilder<unknown>;
}

/**
 * Ordered so that the big tables shrink first: used refresh tokens before the sessions
 * whose deletion cascades to the rest of theirs.
 */
const RULES: Rule[] = [
  {
    table: 'refresh_tokens',
    key: 'hash',
    past: (now, p) =>
      sql`used_at < ${now - p.usedRefreshTokensMs} or expires_at < ${now - p.endedSessionsMs}`,
  },
  {
    table: 'auth_codes',
    key: 'hash',
    past: (now, p) => sql`expires_at < ${now - p.spentLinksMs}`,
  },
  {
    table: 'email_tokens',
    key: 'hash',
    past: (now, p) =>
      sql`expires_at < ${now - p.spentLinksMs} or used_at < ${now - p.spentLinksMs}`,
  },
  {
    table: 'hosted_sessions',
    key: 'hash',
    past: (now, p) =>
      sql`expires_at < ${now - p.endedBrowserSessionsMs} or revoked_at < ${now - p.endedBrowserSessionsMs}`,
  },
  {
    table: 'sessions',
    key: 'id',
    past: (now, p) =>
      sql`expires_at < ${now - p.endedSessionsMs} or revoked_at < ${now - p.endedSessionsMs}`,
  },
  { table: 'mail_outbox', key: 'id', past: (now, p) => sql`created_at < ${now - p.outboxMs}` },
  {
    table: 'oauth_flows',
    key: 'state',
    past: (now) => sql`expires_at < ${now - socialDefaults.abandonedFlowSeconds * 1000}`,
  },
];

/**
 * Deletes what no one can use any more (defaults.retention), in batches. Every delete is
 * idempotent, so instances that run it at the same moment only share the work.
 * Returns the rows deleted per table.
 */
export async function purgeExpired(
  db: Kysely<Schema>,
  now = Date.now(),
  policy: RetentionPolicy = defaults.retention,
): Promise<Partial<Record<keyof Schema, number>>> {
  const deleted: Partial<Record<keyof Schema, number>> = {};
  for (const rule of RULES) {
    const table = sql.table(rule.table);
    const key = sql.ref(rule.key);
    let total = 0;
    for (;;) {
      const result =
        await sql`delete from ${table} where ${key} in (select ${key} from ${table} where ${rule.past(now, policy)} limit ${policy.batchSize})`.execute(
          db,
        );
      const count = Number(result.numAffectedRows ?? 0);
      total += count;
      if (count < policy.batchSize) break;
    }
    if (total > 0) deleted[rule.table] = total;
  }
  return deleted;
}

/**
 * Runs `purgeExpired` every `intervalMs`, the first time at a random point of the first
 * interval. Failures are reported and retried at the next run. Returns `stop`.
 */
export function startRetention(options: {
  db: Kysely<Schema>;
  onPurged: (deleted: Partial<Record<keyof Schema, number>>) => void;
  onError: (error: unknown) => void;
  intervalMs?: number;
}): () => void {
  const intervalMs = options.intervalMs ?? defaults.retention.intervalMs;
  let running = false;
  const run = async () => {
    if (running) return;
    running = true;
    try {
      const deleted = await purgeExpired(options.db);
      if (Object.keys(deleted).length > 0) options.onPurged(deleted);
    } catch (error) {
      options.onError(error);
    } finally {
      running = false;
    }
  };
  let interval: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    void run();
    interval = setInterval(() => void run(), intervalMs);
    interval.unref();
  }, Math.random() * intervalMs);
  first.unref();
  return () => {
    clearTimeout(first);
    if (interval) clearInterval(interval);
  };
}
