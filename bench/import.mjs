// Import benchmark (docs/design.md §16): `latchkey import` of 100,000 generated users with
// bcrypt hashes, against the database's own bulk insert of the same rows in the same run,
// with the import's peak RSS; then the first sign-in of an imported bcrypt user (bcrypt
// check plus the argon2id re-hash) against a native sign-in. See bench/README.md.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  createReadStream,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { shownAtLeast, shownBelow } from './lib.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(ROOT, 'packages/server/dist/latchkey.mjs');
const RESULTS = join(ROOT, 'bench/results/import.json');
const require = createRequire(join(ROOT, 'packages/server/package.json'));
const bcrypt = require('@node-rs/bcrypt');
const Sqlite = require('better-sqlite3');
const pg = require('pg');

const ROWS = Number(process.env.BENCH_IMPORT_ROWS) || 100_000;
const PG_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SIGN_INS = 12;
const ROUNDS = Number(process.env.BENCH_IMPORT_ROUNDS) || 3;
const password = (i) => `imported password ${i % 4}`;

/** One child process; resolves with its output, exit code and peak RSS (VmHWM, in MB). */
function run(args, env) {
  return new Promise((resolve, reject) => {
    // As bin/latchkey.js runs it: a 4 MB young generation.
    const child = spawn(process.execPath, ['--max-semi-space-size=4', MAIN, ...args], {
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    let peak = 0;
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    const poll = setInterval(() => {
      try {
        const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (hwm) peak = Math.max(peak, Number(hwm[1]) / 1024);
      } catch {}
    }, 50);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearInterval(poll);
      resolve({ code, stdout, stderr, peakMb: peak });
    });
  });
}

/** Four cost-10 bcrypt hashes, reused: making 100,000 would take hours. */
async function writeUsers(file) {
  const hashes = await Promise.all([0, 1, 2, 3].map((i) => bcrypt.hash(password(i), 10)));
  const lines = [];
  for (let i = 0; i < ROWS; i++) {
    lines.push(
      JSON.stringify({
        email: `user${i}@bench.example`,
        emailVerified: i % 2 === 0,
        name: `User ${i}`,
        metadata: { n: i },
        roles: [],
        createdAt: new Date(1_700_000_000_000 + i).toISOString(),
        passwordHash: `bcrypt:${hashes[i % 4]}`,
        identities: [],
      }),
    );
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
}

/** The same rows, read and parsed from the same file, as the users table holds them. */
async function* usersOf(file, tenantId) {
  for await (const text of createInterface({
    input: createReadStream(file),
    crlfDelay: Infinity,
  })) {
    const u = JSON.parse(text);
    const now = Date.now();
    yield [
      randomUUID(),
      tenantId,
      u.email,
      u.email.toLowerCase(),
      u.passwordHash,
      u.name,
      JSON.stringify(u.metadata),
      '[]',
      u.emailVerified ? now : null,
      null,
      Date.parse(u.createdAt),
      now,
    ];
  }
}
const COLUMNS =
  'id, tenant_id, email, email_key, password_hash, name, metadata, roles, email_verified_at, disabled_at, created_at, updated_at';

/** SQLite's own bulk insert: one prepared statement, one transaction. */
async function bulkSqlite(path, tenantId, file) {
  const db = new Sqlite(path);
  // The server's own settings (storage/database.ts): the same durability and checks.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  const insert = db.prepare(
    `insert into users (${COLUMNS}) values (${COLUMNS.split(',')
      .map(() => '?')
      .join(', ')})`,
  );
  const started = performance.now();
  db.exec('begin');
  for await (const row of usersOf(file, tenantId)) insert.run(row);
  db.exec('commit');
  const ms = performance.now() - started;
  db.close();
  return ms;
}

/** PostgreSQL's bulk insert without an extension: unnest() of column arrays, 10,000 rows a statement. */
async function bulkPostgres(url, tenantId, file) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const types = [
    'uuid',
    'text',
    'text',
    'text',
    'text',
    'text',
    'text',
    'text',
    'bigint',
    'bigint',
    'bigint',
    'bigint',
  ];
  const flush = async (rows) => {
    const columns = types.map((_, c) => rows.map((r) => r[c]));
    await client.query(
      `insert into users (${COLUMNS}) select * from unnest(${types.map((t, i) => `$${i + 1}::${t === 'uuid' ? 'text' : t}[]`).join(', ')})`,
      columns,
    );
  };
  const started = performance.now();
  await client.query('begin');
  let rows = [];
  for await (const row of usersOf(file, tenantId)) {
    rows.push(row);
    if (rows.length === 10_000) {
      await flush(rows);
      rows = [];
    }
  }
  if (rows.length) await flush(rows);
  await client.query('commit');
  const ms = performance.now() - started;
  await client.end();
  return ms;
}

async function postgresSchema() {
  const schema = `lk_bench_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: PG_URL });
  try {
    await client.connect();
    await client.query(`create schema ${schema}`);
    await client.end();
  } catch {
    return undefined;
  }
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}

async function tenant(env) {
  const made = await run(
    [
      'tenant',
      'create',
      '--name',
      'Bench',
      '--plan',
      'enterprise',
      '--rps',
      '100000',
      '--rpm',
      '1000000',
      '--json',
    ],
    env,
  );
  if (made.code !== 0) throw new Error(made.stderr);
  return JSON.parse(made.stdout);
}

/** Median milliseconds of `n` sequential sign-ins. */
async function signIns(url, key, credentials) {
  const times = [];
  for (const c of credentials) {
    const started = performance.now();
    const res = await fetch(`${url}/v1/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(c),
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`sign-in answered ${res.status}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

async function firstSignIn(env, imported) {
  const child = spawn(process.execPath, ['--max-semi-space-size=4', MAIN, 'serve'], {
    env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const url = await new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c) => {
        out += c;
        const m = /listening on (\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      child.once('exit', () => reject(new Error(`serve exited: ${out}`)));
    });
    const natives = [];
    for (let i = 0; i < SIGN_INS; i++) {
      const c = { email: `native${i}@bench.example`, password: 'correct horse battery staple' };
      const res = await fetch(`${url}/v1/auth/sign-up`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${imported.secretKey}`,
        },
        body: JSON.stringify(c),
      });
      if (res.status !== 201) throw new Error(`sign-up answered ${res.status}`);
      natives.push(c);
    }
    const first = Array.from({ length: SIGN_INS }, (_, i) => ({
      email: `user${i * 7}@bench.example`,
      password: password(i * 7),
    }));
    const native = await signIns(url, imported.secretKey, natives);
    const importedMs = await signIns(url, imported.secretKey, first);
    const again = await signIns(url, imported.secretKey, first);
    return { native, imported: importedMs, again };
  } finally {
    child.kill();
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'latchkey-bench-import-'));
const report = { rows: ROWS };
try {
  const file = join(tmp, 'users.jsonl');
  await writeUsers(file);
  // Each side on a database of its own, both empty at the start: neither meets the other's
  // rows in its indexes.
  const sqlite = (n) => ({
    url: `sqlite:${join(tmp, `${n}.db`)}`,
    path: join(tmp, `${n}.db`),
    drop: async () => {
      for (const suffix of ['', '-wal', '-shm'])
        rmSync(join(tmp, `${n}.db${suffix}`), { force: true });
    },
  });
  const postgresReachable = await postgresSchema().then(async (probe) => {
    await probe?.drop();
    return probe !== undefined;
  });
  if (!postgresReachable) console.log('PostgreSQL not reachable: SQLite only');
  for (const name of postgresReachable ? ['sqlite', 'postgres'] : ['sqlite']) {
    // Rounds in turns (bulk first, then the import first, ...): the machine's speed drifts
    // over tens of seconds, and one of each met different machines (0.40 to 0.56 on SQLite
    // in five runs of one build).
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Each side on a database of its own, both empty at the start: neither meets the
      // other's rows in its indexes.
      const db = name === 'sqlite' ? sqlite(`import-${round}`) : await postgresSchema();
      const other = name === 'sqlite' ? sqlite(`bulk-${round}`) : await postgresSchema();
      const secret = randomBytes(32).toString('base64url');
      const env = { DATABASE_URL: db.url, LATCHKEY_SECRET: secret };
      const bulkEnv = { DATABASE_URL: other.url, LATCHKEY_SECRET: secret };
      try {
        if (name === 'postgres') {
          await run(['migrate'], env);
          await run(['migrate'], bulkEnv);
        }
        const baselineTenant = await tenant(bulkEnv);
        const target = await tenant(env);
        const bulkRun = () =>
          name === 'sqlite'
            ? bulkSqlite(other.path, baselineTenant.tenant.id, file)
            : bulkPostgres(other.url, baselineTenant.tenant.id, file);
        const importRun = async () => {
          const started = performance.now();
          const imported = await run(
            ['import', '--tenant', target.tenant.id, '--from', 'latchkey', file, '--json'],
            env,
          );
          const ms = performance.now() - started;
          const summary = JSON.parse(imported.stdout);
          if (imported.code !== 0 || summary.imported !== ROWS)
            throw new Error(`import: ${imported.stderr}`);
          return { ms, peakMb: imported.peakMb };
        };
        let bulkMs;
        let imported;
        if (round % 2 === 0) {
          bulkMs = await bulkRun();
          imported = await importRun();
        } else {
          imported = await importRun();
          bulkMs = await bulkRun();
        }
        // The sign-ins once, after the last round's import.
        const signIn = round === ROUNDS - 1 ? await firstSignIn(env, target) : undefined;
        rounds.push({ bulkMs, importMs: imported.ms, peakMb: imported.peakMb, signIn });
      } finally {
        await db.drop();
        await other.drop();
      }
    }
    const total = (key) => rounds.reduce((sum, r) => sum + r[key], 0);
    const bulk = Math.round((ROWS * ROUNDS) / (total('bulkMs') / 1000));
    const rate = Math.round((ROWS * ROUNDS) / (total('importMs') / 1000));
    const peakMb = Math.max(...rounds.map((r) => r.peakMb));
    const { signIn } = rounds[ROUNDS - 1];
    const figures = {
      bulk_rows_per_s: bulk,
      import_rows_per_s: rate,
      'import/bulk': Number((rate / bulk).toFixed(2)),
      'rounds_import/bulk': rounds.map((r) => Number((r.bulkMs / r.importMs).toFixed(2))),
      import_peak_rss_mb: Math.round(peakMb),
      rounds_peak_rss_mb: rounds.map((r) => Math.round(r.peakMb)),
      native_sign_in_ms: Math.round(signIn.native),
      first_imported_sign_in_ms: Math.round(signIn.imported),
      'first_imported/native': Number((signIn.imported / signIn.native).toFixed(2)),
      second_imported_sign_in_ms: Math.round(signIn.again),
    };
    report[name] = figures;
    console.log(`\n${name}: ${ROWS} users, ${ROUNDS} rounds`);
    for (const [k, v] of Object.entries(figures))
      console.log(
        `  import_${name}_${k.replace(/^import_/, '')}: ${Array.isArray(v) ? v.join(', ') : v}`,
      );
    const ratio = rate / bulk;
    console.log(
      `import_${name}_import/bulk=${shownAtLeast(ratio, 0.5)} (${ROWS} rows, ${ROUNDS} rounds pooled; goal >= 0.5) ${ratio >= 0.5 ? 'PASS' : 'FAIL'}`,
    );
    console.log(
      `import_${name}_peak_rss_mb=${shownBelow(peakMb, 200, 0)} (${ROWS} rows, the highest of ${ROUNDS} rounds; goal < 200 at 1,000,000) ${peakMb < 200 ? 'PASS' : 'FAIL'}`,
    );
  }
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nwritten to ${RESULTS}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
