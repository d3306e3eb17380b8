import { randomUUID } from 'node:crypto';
import type { Database as SQLiteDatabase } from 'better-sqlite3';
import { type ControlledTransaction, type Kysely, sql, type Transaction } from 'kysely';
import { isImportedHash, storedImportedHash } from '../../crypto/imported-hashes/index.js';
import type { DialectName, Schema, UserRow } from '../../storage/index.js';
import { isProviderId, PROVIDERS } from '../social/index.js';
import type { Tenant } from '../tenants/index.js';
import {
  checkMetadata,
  checkName,
  emailKey,
  getUser,
  isValidEmail,
  toUser,
} from '../users/index.js';
import { emitEach } from '../webhooks/index.js';
import { type ImportedUser, type ImportRow, isRefusal, type RowRefusal } from './types.js';

export interface ImportDeps {
  db: Kysely<Schema>;
  /** PostgreSQL takes a batch's users as column arrays (unnest), far cheaper to send and parse. */
  dialect?: DialectName;
  /**
   * SQLite: the connection under `db`. New users are then inserted by one statement
   * prepared once and run per row, a third faster than a multi-row insert built per batch.
   */
  sqlite?: SQLiteDatabase;
}

export interface ImportProgress {
  /** Rows read so far (users and refused rows). */
  rows: number;
  elapsedMs: number;
}

export interface ImportOptions {
  /** Check and count every row, write nothing. */
  dryRun?: boolean;
  /** Overwrite users that exist with the same e-mail (else they are refused). */
  update?: boolean;
  /** Called after each batch. */
  onProgress?: (progress: ImportProgress) => void;
  /** Rows per transaction (default 500: more holds more garbage at once for little gain). */
  batchSize?: number;
  /**
   * Each refused row, user without password and note, in line order, once its outcome is
   * final (its transaction committed). The summary keeps only the first REPORT_KEPT of each.
   */
  onReport?: (kind: ReportKind, entry: RowRefusal) => void;
}

export type ReportKind = 'refused' | 'passwordless' | 'notes';

/** Entries of each list the summary keeps; the rest are counted (and given to onReport). */
const REPORT_KEPT = 1000;

export interface ImportSummary {
  imported: number;
  updated: number;
  unchanged: number;
  /** The first REPORT_KEPT refused rows; refusedCount counts them all. */
  refused: RowRefusal[];
  refusedCount: number;
  /** Imported without a password (unknown or malformed hash): they reset it. First REPORT_KEPT. */
  passwordless: RowRefusal[];
  passwordlessCount: number;
  /** What the source held that was not carried (ImportedUser.notes), by line. First REPORT_KEPT. */
  notes: RowRefusal[];
  notesCount: number;
}

/** A row checked and turned into what is written. */
interface Prepared {
  line: number;
  user: UserRow;
  identities: { provider: string; issuer: string; subject: string; email: string | null }[];
  passwordless?: string;
}

/**
 * Writes users read by a parser into a tenant (docs/design.md §16). Streams: at most one
 * batch is held at a time, each in one transaction; each row is whole or absent (a row
 * that fails rolls back to its savepoint, the batch goes on). A row whose e-mail exists
 * with the same data is `unchanged`; with other data it is refused, or updated with
 * `update`. A run can therefore be repeated: it changes nothing the second time.
 */
export async function importUsers(
  deps: ImportDeps,
  tenant: Tenant,
  rows: AsyncIterable<ImportRow>,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const summary = emptySummary();
  const size = options.batchSize ?? 500;
  const started = Date.now();
  let read = 0;
  let batch: Prepared[] = [];
  // Several batches share a transaction, up to TRANSACTION_ROWS rows or TRANSACTION_MS: a
  // commit per batch made the import three times slower on SQLite (each commit may start
  // a WAL checkpoint), and a bound keeps other writers' waits short. Outcomes count only
  // once their transaction has committed.
  let open: { trx: ControlledTransaction<Schema>; since: number; rows: number } | undefined;
  // A dry run keeps one transaction to the end (rolled back), so that it sees its own rows
  // as a real run would: a repeated e-mail is then reported as on a real run.
  let pending = emptySummary();
  let unflushed = 0;
  const settle = async (force: boolean) => {
    if (
      open &&
      (force ||
        (!options.dryRun &&
          (open.rows >= TRANSACTION_ROWS || Date.now() - open.since >= TRANSACTION_MS)))
    ) {
      const { trx } = open;
      open = undefined;
      if (options.dryRun) await trx.rollback().execute();
      else await trx.commit().execute();
    }
    if (open && !options.dryRun) return;
    merge(summary, pending, options.onReport);
    pending = emptySummary();
  };
  const flush = async () => {
    const rowsRead = unflushed;
    unflushed = 0;
    if (open) open.rows += rowsRead;
    if (batch.length > 0) {
      const taken = batch;
      batch = [];
      open ??= {
        trx: await deps.db.startTransaction().execute(),
        since: Date.now(),
        rows: rowsRead,
      };
      const written = await writeBatch(open.trx, tenant, taken, pending, options, {
        arrays: deps.dialect === 'postgres',
        sqlite: deps.sqlite,
      });
      // The webhook events of the batch's users, in its transaction (docs/design.md §17):
      // one look-up of the tenant's endpoints each, nothing written when none takes them.
      const { trx } = open;
      await emitEach(trx, tenant.id, 'user.created', written.created, toUser);
      await emitEach(trx, tenant.id, 'user.updated', written.updated, (id) =>
        getUser(trx, tenant.id, id),
      );
    }
    await settle(false);
    options.onProgress?.({ rows: read, elapsedMs: Date.now() - started });
  };
  try {
    for await (const row of rows) {
      read++;
      unflushed++;
      if (!isRefusal(row))
        for (const note of row.notes ?? []) pending.notes.push({ line: row.line, reason: note });
      const prepared = isRefusal(row) ? row : prepare(tenant, row);
      if ('reason' in prepared)
        pending.refused.push({ line: prepared.line, reason: prepared.reason });
      else batch.push(prepared);
      // Counted in rows read, not rows kept: refused rows wait in `pending` until a flush.
      if (unflushed >= size) await flush();
    }
    await flush();
    await settle(true);
  } catch (error) {
    await open?.trx.rollback().execute();
    throw error;
  }
  options.onProgress?.({ rows: read, elapsedMs: Date.now() - started });
  return summary;
}

const TRANSACTION_ROWS = 50_000;
const TRANSACTION_MS = 500;

const emptySummary = (): ImportSummary => ({
  imported: 0,
  updated: 0,
  unchanged: 0,
  refused: [],
  refusedCount: 0,
  passwordless: [],
  passwordlessCount: 0,
  notes: [],
  notesCount: 0,
});

/** Adds a settled transaction's outcomes (consecutive lines) to the run's, in line order. */
function merge(into: ImportSummary, from: ImportSummary, onReport: ImportOptions['onReport']) {
  into.imported += from.imported;
  into.updated += from.updated;
  into.unchanged += from.unchanged;
  for (const kind of ['refused', 'passwordless', 'notes'] as const) {
    const entries = from[kind].sort((a, b) => a.line - b.line);
    into[`${kind}Count`] += entries.length;
    for (const entry of entries) {
      if (into[kind].length < REPORT_KEPT) into[kind].push(entry);
      onReport?.(kind, entry);
    }
  }
}

function prepare(tenant: Tenant, row: ImportedUser): Prepared | RowRefusal {
  const refuse = (reason: string): RowRefusal => ({ line: row.line, reason });
  const email = typeof row.email === 'string' ? row.email.trim() : '';
  if (!isValidEmail(email)) return refuse(`"${email}" is not a valid e-mail address`);
  const name = (typeof row.name === 'string' && row.name.trim()) || null;
  if (name !== null && checkName(name)) return refuse(checkName(name)?.message ?? 'bad name');
  const metadata = row.metadata ?? {};
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
    return refuse('metadata must be a JSON object');
  const bad = checkMetadata(metadata);
  if (bad) return refuse(bad.message);
  const roles = row.roles ?? [];
  if (!Array.isArray(roles) || !roles.every((r) => typeof r === 'string'))
    return refuse('roles must be a list of strings');
  const identities: Prepared['identities'] = [];
  for (const identity of row.identities ?? []) {
    const { provider, subject } = identity;
    if (!isProviderId(provider)) return refuse(`unknown identity provider "${provider}"`);
    if (typeof subject !== 'string' || subject === '')
      return refuse(`the ${provider} identity has no subject`);
    const issuer =
      identity.issuer ??
      (provider === 'microsoft'
        ? undefined
        : PROVIDERS[provider].defaults({ audience: null }).issuer);
    if (!issuer) return refuse(`the ${provider} identity needs its issuer`);
    identities.push({ provider, issuer, subject, email: identity.email ?? null });
  }
  let hash: string | null = null;
  let passwordless: string | undefined;
  if (row.password) {
    hash = storedImportedHash(row.password.algorithm, row.password.encoded) ?? null;
    if (hash === null)
      passwordless = `the ${String(row.password.algorithm)} password hash is unknown or malformed: the user must reset the password`;
  }
  const createdAt = row.createdAt?.getTime();
  const now = Date.now();
  return {
    line: row.line,
    identities,
    passwordless,
    user: {
      id: randomUUID(),
      tenant_id: tenant.id,
      email,
      email_key: emailKey(email),
      password_hash: hash,
      name,
      metadata: JSON.stringify(metadata),
      roles: JSON.stringify(roles),
      email_verified_at: row.emailVerified ? (createdAt ?? now) : null,
      disabled_at: row.disabled ? now : null,
      created_at: createdAt !== undefined && Number.isFinite(createdAt) ? createdAt : now,
      updated_at: now,
    },
  };
}

type Existing = Pick<
  UserRow,
  | 'id'
  | 'email_key'
  | 'email'
  | 'name'
  | 'metadata'
  | 'roles'
  | 'password_hash'
  | 'email_verified_at'
> & { identities: Set<string> };

const identityKey = (i: { provider: string; issuer: string; subject: string }) =>
  `${i.provider}\n${i.issuer}\n${i.subject}`;

async function existingUsers(
  db: Transaction<Schema>,
  tenantId: string,
  keys: string[],
): Promise<Map<string, Existing>> {
  // A join on a VALUES list, not `email_key in (...)`: PostgreSQL, whose statistics still
  // describe the table before the import, answered the IN list by reading every user of
  // the tenant (slower with each batch); a join probes the (tenant_id, email_key) index
  // once a key, on both databases.
  const list = sql<{ column1: string }>`(values ${sql.join(keys.map((k) => sql`(${k})`))})`;
  const users = await db
    .selectFrom('users')
    .innerJoin(list.as('k'), (join) => join.onRef('users.email_key', '=', 'k.column1'))
    .select([
      'users.id',
      'users.email_key',
      'users.email',
      'users.name',
      'users.metadata',
      'users.roles',
      'users.password_hash',
      'users.email_verified_at',
    ])
    .where('users.tenant_id', '=', tenantId)
    .execute();
  const found = new Map<string, Existing>(
    users.map((u) => [u.email_key, { ...u, identities: new Set<string>() }]),
  );
  if (users.length > 0) {
    const byId = new Map([...found.values()].map((u) => [u.id, u]));
    const identities = await db
      .selectFrom('identities')
      .select(['user_id', 'provider', 'issuer', 'subject'])
      .where('tenant_id', '=', tenantId)
      .where('user_id', 'in', [...byId.keys()])
      .execute();
    for (const i of identities) byId.get(i.user_id)?.identities.add(identityKey(i));
  }
  return found;
}

/**
 * What an update would change; empty when the row holds what the user has. A password the
 * user has since replaced by the tenant's argon2id (signed in) is theirs: not a change.
 * Disabled is set for new users only: disabling an existing one must end their sessions,
 * which is the users API's work (PATCH /v1/users/{id}), not an import's.
 */
function changesOf(have: Existing, row: Prepared): Partial<UserRow> {
  const changes: Partial<UserRow> = {};
  const u = row.user;
  if (have.email !== u.email) changes.email = u.email;
  if (have.name !== u.name) changes.name = u.name;
  if (!sameJson(have.metadata, u.metadata)) changes.metadata = u.metadata;
  if (!sameJson(have.roles, u.roles)) changes.roles = u.roles;
  if ((have.email_verified_at !== null) !== (u.email_verified_at !== null))
    changes.email_verified_at = u.email_verified_at;
  const upgraded = have.password_hash !== null && !isImportedHash(have.password_hash);
  if (!upgraded && u.password_hash !== null && have.password_hash !== u.password_hash)
    changes.password_hash = u.password_hash;
  return changes;
}

const sameJson = (a: string, b: string) => a === b || canonical(a) === canonical(b);
function canonical(json: string): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : typeof v === 'object' && v !== null
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(sort(JSON.parse(json)));
}

/** One batch, in the transaction `trx`; its outcomes are added to `summary`. */
async function writeBatch(
  trx: Transaction<Schema>,
  tenant: Tenant,
  batch: Prepared[],
  summary: ImportSummary,
  options: ImportOptions,
  how: { arrays: boolean; sqlite?: SQLiteDatabase },
): Promise<{ created: UserRow[]; updated: string[] }> {
  const written = { created: [] as UserRow[], updated: [] as string[] };
  const imported = (summary: ImportSummary, row: Prepared) => {
    countImported(summary, row);
    written.created.push(row.user);
  };
  const fresh: Prepared[] = [];
  const seen = new Map<string, Prepared>();
  for (const row of batch) {
    const twin = seen.get(row.user.email_key);
    if (twin) {
      summary.refused.push({
        line: row.line,
        reason: `the same e-mail address as line ${twin.line}`,
      });
      continue;
    }
    seen.set(row.user.email_key, row);
    fresh.push(row);
  }
  // The common case in one statement per table, without a look-up first: users whose e-mail
  // exists are skipped by the insert (ON CONFLICT DO NOTHING RETURNING tells which) and
  // compared below. A batch that fails (an identity another user holds) is written again
  // row by row, each in its savepoint (docs/design.md §16).
  const inserted = new Set<string>();
  const refusedHere = new Set<Prepared>();
  let several = fresh;
  if (how.sqlite) {
    // On SQLite a row without identities is one INSERT ... ON CONFLICT DO NOTHING: the
    // statement is whole or absent by itself (SQLite undoes a failed statement alone), so
    // it needs no savepoint. Rows of several statements (identities) keep theirs below.
    several = [];
    const single: Prepared[] = [];
    for (const row of fresh) (row.identities.length === 0 ? single : several).push(row);
    for (const row of single) {
      const outcome = insertSingleSqlite(how.sqlite, row.user);
      if (outcome === true) inserted.add(row.user.email_key);
      else if (outcome !== false) {
        refusedHere.add(row);
        summary.refused.push({ line: row.line, reason: outcome });
      }
    }
  }
  if (several.length > 0)
    await inSavepoint(trx, async () => {
      const keys = await insertRows(trx, tenant.id, several, how.arrays, true);
      for (const key of keys) inserted.add(key);
    });
  const others: Prepared[] = [];
  for (const row of fresh) {
    if (inserted.has(row.user.email_key)) imported(summary, row);
    else if (!refusedHere.has(row)) others.push(row);
  }
  if (others.length === 0) return written;
  const existing = await existingUsers(trx, tenant.id, [
    ...new Set(others.map((r) => r.user.email_key)),
  ]);
  for (const row of others) {
    const have = existing.get(row.user.email_key);
    if (!have) {
      const done = await inSavepoint(trx, async () => {
        await insertRows(trx, tenant.id, [row]);
      });
      if (done === true) imported(summary, row);
      else summary.refused.push({ line: row.line, reason: done });
      continue;
    }
    const changes = changesOf(have, row);
    const missing = row.identities.filter((i) => !have.identities.has(identityKey(i)));
    if (Object.keys(changes).length === 0 && missing.length === 0) {
      summary.unchanged++;
      continue;
    }
    if (!options.update) {
      summary.refused.push({
        line: row.line,
        reason: `a user with the e-mail address ${row.user.email} exists with other data (--update replaces it)`,
      });
      continue;
    }
    const done = await inSavepoint(trx, async () => {
      await trx
        .updateTable('users')
        .set({ ...changes, updated_at: Date.now() })
        .where('tenant_id', '=', tenant.id)
        .where('id', '=', have.id)
        .execute();
      await insertIdentities(trx, tenant.id, have.id, missing, row.user.updated_at);
    });
    if (done === true) {
      summary.updated++;
      written.updated.push(have.id);
    } else summary.refused.push({ line: row.line, reason: done });
  }
  return written;
}

function countImported(summary: ImportSummary, row: Prepared) {
  summary.imported++;
  if (row.passwordless) summary.passwordless.push({ line: row.line, reason: row.passwordless });
}

/**
 * Inserts `rows` with their identities; returns the e-mail keys of the users written. With
 * `skipExisting`, a user whose e-mail key the tenant holds is left out (with its
 * identities), else that is an error.
 */
async function insertRows(
  trx: Transaction<Schema>,
  tenantId: string,
  rows: Prepared[],
  arrays = false,
  skipExisting = false,
): Promise<string[]> {
  let keys: string[];
  if (arrays && rows.length > 1) {
    const column = <K extends keyof UserRow>(k: K) => rows.map((r) => r.user[k]);
    const result =
      await sql`insert into users (id, tenant_id, email, email_key, password_hash, name, metadata,
      roles, email_verified_at, disabled_at, created_at, updated_at)
      select * from unnest(${column('id')}::text[], ${column('tenant_id')}::text[],
        ${column('email')}::text[], ${column('email_key')}::text[],
        ${column('password_hash')}::text[], ${column('name')}::text[],
        ${column('metadata')}::text[], ${column('roles')}::text[],
        ${column('email_verified_at')}::bigint[], ${column('disabled_at')}::bigint[],
        ${column('created_at')}::bigint[], ${column('updated_at')}::bigint[])
      ${sql.raw(skipExisting ? 'on conflict (tenant_id, email_key) do nothing' : '')}
      returning email_key`.execute(trx);
    keys = (result.rows as { email_key: string }[]).map((r) => r.email_key);
  } else {
    const result = await trx
      .insertInto('users')
      .values(rows.map((r) => r.user))
      .$if(skipExisting, (q) =>
        q.onConflict((oc) => oc.columns(['tenant_id', 'email_key']).doNothing()),
      )
      .returning('email_key')
      .execute();
    keys = result.map((r) => r.email_key);
  }
  const written = skipExisting ? new Set(keys) : undefined;
  const identities = (written ? rows.filter((r) => written.has(r.user.email_key)) : rows).flatMap(
    (r) => r.identities.map((i) => identityRow(tenantId, r.user.id, i, r.user.created_at)),
  );
  if (identities.length > 0) await trx.insertInto('identities').values(identities).execute();
  return keys;
}

const USER_COLUMNS = [
  'id',
  'tenant_id',
  'email',
  'email_key',
  'password_hash',
  'name',
  'metadata',
  'roles',
  'email_verified_at',
  'disabled_at',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof UserRow)[];

const sqliteInserts = new WeakMap<
  SQLiteDatabase,
  { run(...values: unknown[]): { changes: number } }
>();

/**
 * One user of no identities on SQLite's own connection (inside the open transaction, which
 * runs on it), by one statement prepared once: true (written), false (the e-mail key
 * exists: skipped), or why the database refused it (nothing of it stays).
 */
function insertSingleSqlite(sqlite: SQLiteDatabase, u: UserRow): boolean | string {
  let insert = sqliteInserts.get(sqlite);
  if (!insert) {
    insert = sqlite.prepare(
      `insert into users (${USER_COLUMNS.join(', ')}) values (${USER_COLUMNS.map(() => '?').join(', ')})
       on conflict (tenant_id, email_key) do nothing`,
    );
    sqliteInserts.set(sqlite, insert);
  }
  try {
    // `changes` tells a row written from one skipped; RETURNING would double the cost.
    return (
      insert.run(
        u.id,
        u.tenant_id,
        u.email,
        u.email_key,
        u.password_hash,
        u.name,
        u.metadata,
        u.roles,
        u.email_verified_at,
        u.disabled_at,
        u.created_at,
        u.updated_at,
      ).changes === 1
    );
  } catch (error) {
    return reasonOf(error);
  }
}

async function insertIdentities(
  trx: Transaction<Schema>,
  tenantId: string,
  userId: string,
  identities: Prepared['identities'],
  at: number,
) {
  if (identities.length === 0) return;
  await trx
    .insertInto('identities')
    .values(identities.map((i) => identityRow(tenantId, userId, i, at)))
    .execute();
}

const identityRow = (
  tenantId: string,
  userId: string,
  i: Prepared['identities'][number],
  at: number,
) => ({
  id: randomUUID(),
  tenant_id: tenantId,
  user_id: userId,
  provider: i.provider,
  issuer: i.issuer,
  subject: i.subject,
  email: i.email,
  email_verified: 0,
  created_at: at,
  last_used_at: at,
});

let savepoints = 0;

/** Runs `work` in a savepoint: true, or the reason it failed (and nothing of it stays). */
async function inSavepoint(
  trx: Transaction<Schema>,
  work: () => Promise<void>,
): Promise<true | string> {
  const name = sql.raw(`import_row_${++savepoints}`);
  await sql`savepoint ${name}`.execute(trx);
  try {
    await work();
    await sql`release savepoint ${name}`.execute(trx);
    return true;
  } catch (error) {
    await sql`rollback to savepoint ${name}`.execute(trx);
    await sql`release savepoint ${name}`.execute(trx);
    return reasonOf(error);
  }
}

function reasonOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === '23505' || String(code).startsWith('SQLITE_CONSTRAINT'))
    return 'the user or one of its identities exists already (another user holds that provider subject, or the e-mail was added meanwhile)';
  return `the database refused the row: ${(error as Error).message}`;
}
