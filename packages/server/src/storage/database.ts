import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import type SQLiteType from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type pgType from 'pg';
import { defaults } from '../config/defaults.js';
import { querySpans, tracer } from '../tracing/tracing.js';
import type { Schema } from './schema.js';

// Each driver is loaded only when its database is used: a SQLite deployment never pays
// for pg's memory, nor a PostgreSQL one for SQLite's.
const require = createRequire(import.meta.url);

export type DialectName = 'sqlite' | 'postgres';

export interface Database {
  readonly db: Kysely<Schema>;
  readonly dialect: DialectName;
  /** SQLite only: changes whenever another connection commits (PRAGMA data_version). */
  readonly dataVersion?: () => number;
  /** SQLite only: the connection Kysely uses, for statements prepared once and run per row. */
  readonly sqlite?: SQLiteType.Database;
  ping(): Promise<void>;
  /** Where errors of idle pooled connections go (PostgreSQL): a dropped connection is news. */
  onIdleError(listener: (error: Error) => void): void;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Pool size for PostgreSQL. */
  poolSize?: number;
}

/** `sqlite:PATH` (PATH may be `:memory:`) or `postgres://…`. */
export function openDatabase(url: string, options: OpenOptions = {}): Database {
  const db = url.startsWith('sqlite:')
    ? openSqlite(url.slice('sqlite:'.length))
    : openPostgres(url, options);
  return {
    onIdleError: () => {},
    ...db,
    async ping() {
      await sql`select 1`.execute(db.db);
    },
    async close() {
      await db.db.destroy();
    },
  };
}

function openSqlite(path: string): Pick<Database, 'db' | 'dialect' | 'dataVersion' | 'sqlite'> {
  if (!path) throw new Error('DATABASE_URL sqlite: needs a path, e.g. sqlite:./data/latchkey.db');
  if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
  const SQLite = require('better-sqlite3') as typeof SQLiteType;
  const database = new SQLite(path);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma(`busy_timeout = ${defaults.storage.sqliteBusyTimeoutMs}`);
  cacheStatements(database);
  // Prepared once: database.pragma() would prepare it on every call (about 20 us).
  const dataVersion = database.prepare('pragma data_version').pluck();
  return {
    db: new Kysely<Schema>({
      dialect: new SqliteDialect({ database }),
      // Traced (docs/design.md §7.1): a span per query; untraced, Kysely times nothing.
      ...(tracer && { log: querySpans('sqlite') }),
    }),
    dialect: 'sqlite',
    dataVersion: () => dataVersion.get() as number,
    sqlite: database,
  };
}

/**
 * Kysely prepares every statement anew, and preparing costs more than running a small
 * query; reusing prepared statements by SQL text doubled introspection throughput.
 * SQLite re-prepares a cached statement by itself if the schema changes.
 */
function cacheStatements(database: SQLiteType.Database, max = 500): void {
  const prepare = database.prepare.bind(database);
  const cache = new Map<string, SQLiteType.Statement>();
  database.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (!statement) {
      statement = prepare(source);
      if (cache.size >= max) cache.delete(cache.keys().next().value as string);
      cache.set(source, statement);
    }
    return statement;
  }) as typeof database.prepare;
}

function openPostgres(
  url: string,
  options: OpenOptions,
): Pick<Database, 'db' | 'dialect' | 'onIdleError'> {
  const pg = require('pg') as typeof pgType;
  const types = {
    // bigint columns hold epoch milliseconds, well inside Number's safe range.
    getTypeParser: ((oid: number, format?: string) =>
      oid === pg.types.builtins.INT8
        ? (value: string) => Number(value)
        : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
  };
  const t = defaults.timeouts;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? defaults.storage.postgresPoolSize,
    types,
    // A PostgreSQL that hangs (a frozen network, a stuck server) fails each step in
    // bounded time instead of holding requests, readiness and shutdown.
    connectionTimeoutMillis: t.pgConnectMs,
    query_timeout: t.pgQueryMs,
    statement_timeout: t.pgStatementMs,
    idle_in_transaction_session_timeout: t.pgIdleInTransactionMs,
    idleTimeoutMillis: t.pgIdleMs,
    keepAlive: true,
  });
  // An idle client that loses its connection must not crash the process, but is told.
  let report = (error: Error) => console.error(`PostgreSQL idle client error: ${error.message}`);
  pool.on('error', (error) => report(error));
  // The pool listens only to idle clients: one in use (a transaction between statements)
  // whose server dies would emit an unhandled 'error' and end the process. Its query fails
  // on its own; the pool drops the ended client.
  pool.on('connect', (client) => client.on('error', (error) => report(error)));
  return {
    db: new Kysely<Schema>({
      dialect: new PostgresDialect({ pool }),
      ...(tracer && { log: querySpans('postgresql') }),
    }),
    dialect: 'postgres',
    onIdleError(listener) {
      report = listener;
    },
  };
}

/**
 * True when `error` says the database did not answer in time or could not be reached:
 * a client may retry later (503), nothing is wrong with its request.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  // 57014: statement_timeout; 57P01..57P03: the server is shutting down or starting.
  if (code === '57014' || code === '57P01' || code === '57P02' || code === '57P03') return true;
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'SQLITE_BUSY') return true;
  return (
    typeof message === 'string' &&
    /^(Query read timeout|timeout exceeded when trying to connect|Connection terminated)/.test(
      message,
    )
  );
}

/** True when `error` is a unique-constraint violation on either database. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return (
    code === '23505' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}
