import { type Kysely, sql } from 'kysely';
import { defaults, socialDefaults } from '../../config/defaults.js';
import type { Schema } from '../../storage/index.js';

export type RetentionPolicy = { [K in keyof typeof defaults.retention]: number };

/** How long a period keeps a row past the time in a column. */
type Keep = (policy: RetentionPolicy) => number;

/** What one table keeps: a row is deleted once any of its `past` columns is that old. */
interface Rule {
  table: keyof Schema;
  /** The primary key: a column, or the columns of a composite one. */
  key: string | string[];
  past: [column: string, keep: Keep][];
}

const usedRefresh: Keep = (p) => p.usedRefreshTokensMs;
const endedSessions: Keep = (p) => p.endedSessionsMs;
const spentLinks: Keep = (p) => p.spentLinksMs;
const endedBrowsers: Keep = (p) => p.endedBrowserSessionsMs;
const outbox: Keep = (p) => p.outboxMs;
const webhookMessages: Keep = (p) => p.webhookMessagesMs;
const abandonedFlows: Keep = () => socialDefaults.abandonedFlowSeconds * 1000;

/**
 * Ordered so that the big tables shrink first: used refresh tokens before the sessions
 * whose deletion cascades to the rest of theirs.
 */
const RULES: Rule[] = [
  {
    table: 'refresh_tokens',
    key: 'hash',
    past: [
      ['used_at', usedRefresh],
      ['expires_at', endedSessions],
    ],
  },
  { table: 'auth_codes', key: 'hash', past: [['expires_at', spentLinks]] },
  { table: 'passkey_challenges', key: 'hash', past: [['expires_at', spentLinks]] },
  // Pending second-factor sign-ins live 5 minutes; kept as long as spent links after.
  { table: 'mfa_challenges', key: 'hash', past: [['expires_at', spentLinks]] },
  {
    table: 'email_tokens',
    key: 'hash',
    past: [
      ['expires_at', spentLinks],
      ['used_at', spentLinks],
    ],
  },
  {
    table: 'hosted_sessions',
    key: 'hash',
    past: [
      ['expires_at', endedBrowsers],
      ['revoked_at', endedBrowsers],
    ],
  },
  {
    table: 'sessions',
    key: 'id',
    past: [
      ['expires_at', endedSessions],
      ['revoked_at', endedSessions],
    ],
  },
  { table: 'mail_outbox', key: 'id', past: [['created_at', outbox]] },
  // Their deliveries and attempts go with them (docs/design.md §17).
  { table: 'webhook_messages', key: 'id', past: [['created_at', webhookMessages]] },
  { table: 'oauth_flows', key: 'state', past: [['expires_at', abandonedFlows]] },
  // The OpenID Provider's records (docs/design.md §14): past their end they are never found.
  {
    table: 'oauth_artifacts',
    key: ['tenant_id', 'model', 'id'],
    past: [['expires_at', spentLinks]],
  },
];

const pastOf = (rule: Rule, now: number, policy: RetentionPolicy) =>
  sql.join(
    rule.past.map(([column, keep]) => sql`${sql.ref(column)} < ${now - keep(policy)}`),
    sql` or `,
  );

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
    const key =
      typeof rule.key === 'string'
        ? sql.ref(rule.key)
        : sql`(${sql.join(rule.key.map((column) => sql.ref(column)))})`;
    const columns =
      typeof rule.key === 'string' ? key : sql.join(rule.key.map((column) => sql.ref(column)));
    let total = 0;
    for (;;) {
      const result =
        await sql`delete from ${table} where ${key} in (select ${columns} from ${table} where ${pastOf(rule, now, policy)} limit ${policy.batchSize})`.execute(
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
