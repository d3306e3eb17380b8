import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import {
  exportUsers,
  IMPORT_SOURCES,
  type ImportProgress,
  type ImportSource,
  importUsers,
  PARSERS,
  type ParserOptions,
  type ReportKind,
} from '../modules/migration/index.js';
import { getTenant } from '../modules/tenants/index.js';
import { openDatabase } from '../storage/index.js';
import { integer, parse, required, UsageError } from './args.js';
import type { OpenedDatabase } from './opened.js';
import { json, type Output } from './output.js';

const IMPORT_FLAGS = {
  tenant: { type: 'string' },
  from: { type: 'string' },
  'dry-run': { type: 'boolean' },
  update: { type: 'boolean' },
  json: { type: 'boolean' },
  'hash-key': { type: 'string' },
  'salt-separator': { type: 'string' },
  rounds: { type: 'string' },
  'mem-cost': { type: 'string' },
} as const;

/** `latchkey import` (docs/design.md §16); returns the exit code: 1 when rows were refused. */
export async function importCommand(
  database: OpenedDatabase,
  args: string[],
  output: Output,
): Promise<number> {
  const { values, positionals } = parse(args, IMPORT_FLAGS);
  const tenantId = required(values.tenant, '--tenant');
  const from = required(values.from, '--from');
  if (!(IMPORT_SOURCES as string[]).includes(from))
    throw new UsageError(`--from must be one of ${IMPORT_SOURCES.join(', ')}`);
  const parser = PARSERS[from as ImportSource];
  if (!parser) throw new UsageError(`--from ${from} is not built yet`);
  const [file, ...companions] = positionals;
  if (!file) throw new UsageError('the FILE to import is missing');
  const options: ParserOptions = { companions };
  const firebase = [
    values['hash-key'],
    values['salt-separator'],
    values.rounds,
    values['mem-cost'],
  ];
  if (from === 'firebase' || firebase.some((v) => v !== undefined)) {
    if (from !== 'firebase')
      throw new UsageError(
        '--hash-key, --salt-separator, --rounds and --mem-cost are for --from firebase',
      );
    options.firebase = {
      hashKey: required(values['hash-key'], '--hash-key'),
      saltSeparator: values['salt-separator'] ?? '',
      rounds: integer(required(values.rounds, '--rounds'), '--rounds') as number,
      memCost: integer(required(values['mem-cost'], '--mem-cost'), '--mem-cost') as number,
    };
  }
  let size: number;
  try {
    size = statSync(file).size;
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const tenant = await getTenant(database.db, tenantId);
  const input = createReadStream(file);
  const progress = progressLine(output, size, () => input.bytesRead);
  const dryRun = values['dry-run'] === true;
  // A dry run keeps its rows in one transaction, rolled back at the end. On SQLite that
  // transaction would hold the one write lock for the whole run, and the server's writers
  // would wait on it: there the dry run works on a snapshot of the database instead.
  const target = dryRun && database.sqlite ? snapshotOf(database.sqlite) : undefined;
  const on = target?.database ?? database;
  let summary: Awaited<ReturnType<typeof importUsers>>;
  try {
    summary = await importUsers(
      { db: on.db, dialect: on.dialect, sqlite: on.sqlite },
      tenant,
      parser(input, options),
      {
        dryRun,
        update: values.update === true,
        onProgress: progress,
        // Every entry on stderr as its outcome is final: the summary keeps only the first ones.
        onReport: (kind, r) => output.err(`${REPORT_PREFIX[kind]} line ${r.line}: ${r.reason}`),
      },
    );
  } finally {
    await target?.drop();
  }
  const refused = summary.refusedCount;
  if (values.json) {
    json(output, { dryRun: values['dry-run'] === true, ...summary });
  } else {
    const dry = values['dry-run'] ? ' (dry run: nothing written)' : '';
    output.out(
      `imported ${summary.imported}, updated ${summary.updated}, unchanged ${summary.unchanged}, refused ${refused}, without password ${summary.passwordlessCount}, notes ${summary.notesCount}${dry}`,
    );
  }
  return refused > 0 ? 1 : 0;
}

/**
 * A copy of a SQLite database (`VACUUM INTO`: a read transaction, which in WAL mode holds
 * no writer back), in a folder of its own that `drop` removes.
 */
function snapshotOf(sqlite: NonNullable<OpenedDatabase['sqlite']>) {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-dry-run-'));
  const path = join(dir, 'snapshot.db');
  sqlite.prepare('vacuum into ?').run(path);
  const database = openDatabase(`sqlite:${path}`);
  return {
    database,
    async drop() {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const REPORT_PREFIX: Record<ReportKind, string> = {
  refused: 'refused',
  passwordless: 'no password',
  notes: 'not carried',
};

/** Rows, rate and time left on stderr, at most once a second, and once at the end. */
function progressLine(output: Output, size: number, bytesRead: () => number) {
  let shown = 0;
  let rows = -1;
  return (p: ImportProgress) => {
    const now = Date.now();
    const done = size === 0 ? 1 : Math.min(1, bytesRead() / size);
    if ((now - shown < 1000 && done < 1) || p.rows === rows) return;
    shown = now;
    rows = p.rows;
    const seconds = p.elapsedMs / 1000;
    const rate = seconds > 0 ? Math.round(p.rows / seconds) : p.rows;
    const left = done > 0 && done < 1 ? Math.ceil((seconds / done) * (1 - done)) : 0;
    output.err(
      `import: ${p.rows} rows, ${rate} rows/s, ${Math.floor(done * 100)}%${done < 1 ? `, about ${left} s left` : ', done'}`,
    );
  };
}

/** `latchkey export`: JSON Lines to FILE or stdout, written as the database is read. */
export async function exportCommand(
  database: OpenedDatabase,
  args: string[],
  output: Output,
): Promise<number> {
  const { values } = parse(args, { tenant: { type: 'string' }, out: { type: 'string' } });
  const tenant = await getTenant(database.db, required(values.tenant, '--tenant'));
  const file = values.out ? createWriteStream(values.out, { mode: 0o600 }) : undefined;
  const sink: Writable | undefined = file ?? output.stdout;
  let count = 0;
  for await (const user of exportUsers(database.db, tenant.id)) {
    const line = JSON.stringify(user);
    count++;
    if (!sink) output.out(line);
    else if (!sink.write(`${line}\n`)) await once(sink, 'drain');
  }
  if (file) {
    file.end();
    await finished(file);
    output.err(`exported ${count} users to ${values.out}`);
  }
  return 0;
}
