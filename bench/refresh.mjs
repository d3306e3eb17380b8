// REST refresh benchmark (issue 31): refreshes per second of `POST /v1/auth/token` on one
// server core, against the raw RS256 signatures per second of that same core (the floor of
// a refresh: one signature each). Server on CPU 0, load on CPU 1. See bench/README.md.
// Run with `npm run bench`, or `node bench/refresh.mjs` after `npm run build`.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, pinLoadToCpu1, shownAtLeast } from './lib.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(ROOT, 'packages/server/dist/latchkey.mjs');
const RESULTS = join(ROOT, 'bench/results/refresh.json');
const require = createRequire(join(ROOT, 'packages/server/package.json'));
const autocannon = require('autocannon');
const pg = require('pg');

const PG_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PASSWORD = 'correct horse battery staple';
/** Sessions refreshed, one chain of tokens each; a run ends at most CONNECTIONS chains. */
const SESSIONS = 120;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS) || 10;
const ROUNDS = Number(process.env.BENCH_REFRESH_ROUNDS) || 3;
const WARMUP_S = 2;
const LOAD_S = Number(process.env.BENCH_REFRESH_SECONDS) || 8;
const SIGN_S = 3;
const GOAL = 0.8;
const DEADLINE_MS = 600_000;

const CORES = os.availableParallelism();
const PINNED = pinLoadToCpu1();

const tmp = mkdtempSync(join(os.tmpdir(), 'latchkey-bench-refresh-'));
const children = new Set();

function pinned(args, options) {
  const child = PINNED
    ? spawn('taskset', ['-c', '0', process.execPath, ...args], options)
    : spawn(process.execPath, args, options);
  children.add(child);
  return child;
}

async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const kill = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(kill);
}

// Whatever ends this process (an uncaught error in the load generator too), no server stays.
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

const deadline = setTimeout(async () => {
  console.error(`bench: still running after ${DEADLINE_MS / 1000} s; giving up`);
  await Promise.all([...children].map(stopChild));
  rmSync(tmp, { recursive: true, force: true });
  process.exit(1);
}, DEADLINE_MS);
deadline.unref();

/**
 * The baseline: RS256 signatures per second on the server's core, in a process of its own
 * (node:crypto `sign` with a KeyObject made once, a 2048-bit key as the server's, over a
 * signing input of an access token's size), for SIGN_S seconds after a 1 s warm-up.
 */
const SIGNER = `
const { generateKeyPairSync, sign } = require('node:crypto');
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const input = Buffer.from('e'.repeat(110) + '.' + 'p'.repeat(560));
const run = (ms) => { let n = 0; const end = performance.now() + ms; while (performance.now() < end) { sign('sha256', input, privateKey); n++; } return n; };
run(1000);
const t0 = performance.now(); const n = run(${SIGN_S * 1000});
process.stdout.write(String(n / ((performance.now() - t0) / 1000)));
`;
async function signsPerSecond() {
  const child = pinned(['-e', SIGNER], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  await new Promise((resolve) => child.once('exit', resolve));
  children.delete(child);
  const rate = Number(out);
  if (!(rate > 0)) throw new Error(`the signing baseline printed ${JSON.stringify(out)}`);
  return rate;
}

/**
 * The ceiling of a refresh on this core without its durable write: a bare node:http server
 * that reads the same JSON body, signs one RS256 token of an access token's size (node:crypto,
 * a KeyObject made once) and answers a JSON object of a refresh answer's size. Whatever a
 * refresh does beyond it is the database's work and Latchkey's own.
 */
const CEILING = `
const http = require('node:http');
const { generateKeyPairSync, sign, randomBytes } = require('node:crypto');
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const header = Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'at+jwt', kid: 'k'.repeat(36) })).toString('base64url');
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const { refreshToken } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const claims = Buffer.from(JSON.stringify({ sub: refreshToken.slice(0, 36), pad: 'p'.repeat(480), iat: Date.now() })).toString('base64url');
    const input = header + '.' + claims;
    const token = input + '.' + sign('sha256', Buffer.from(input), privateKey).toString('base64url');
    const body = JSON.stringify({ accessToken: token, tokenType: 'Bearer', expiresIn: 900, refreshToken: 'lkr_' + randomBytes(32).toString('base64url'), sessionId: refreshToken.slice(0, 36), user: { pad: 'u'.repeat(220) } });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write('listening on http://127.0.0.1:' + server.address().port + '\\n'));
`;

function cli(args, env) {
  const r = spawnSync(process.execPath, [MAIN, ...args], {
    env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (r.status !== 0) throw new Error(`latchkey ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout;
}

/** CPU seconds of `pid` (every thread), from /proc. */
function processCpu(pid) {
  let seconds = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      seconds += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {} // the thread ended meanwhile
  }
  return seconds;
}

async function startServer(env, args) {
  const child = pinned(args, { env });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => {
    err = (err + d).slice(-4000);
  });
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (c) => {
      out += c;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`serve exited (${code}):\n${out}\n${err}`)));
  });
  child.stdout.resume();
  return { child, url };
}

async function post(base, secretKey, path, body) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * Refreshes at full speed for `seconds`. Each request takes a session's latest refresh
 * token from `pool` and puts the one it gets back there (clients that keep their sessions
 * going), so every request rotates a token still valid and no two requests present the
 * same one. Every answer must be a 200 with a new pair; anything else fails the run. The
 * tokens of requests cut off at the end are lost: their chains end.
 */
function refreshes(base, secretKey, pool, seconds) {
  const failures = [];
  let ok = 0;
  const instance = autocannon({
    url: base,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/v1/auth/token',
        headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
        setupRequest(request) {
          const token = pool.pop();
          if (token === undefined) throw new Error('no session left to refresh');
          return { ...request, body: JSON.stringify({ refreshToken: token }) };
        },
        onResponse(status, body) {
          if (status === 200) {
            pool.unshift(JSON.parse(body).refreshToken);
            ok++;
          } else failures.push(`${status} ${body.slice(0, 300)}`);
        },
      },
    ],
  });
  return new Promise((resolve, reject) => {
    instance.on('done', (result) => {
      if (failures.length > 0) {
        reject(
          new Error(`${failures.length} refreshes failed: ${failures.slice(0, 5).join('; ')}`),
        );
        return;
      }
      resolve({ perSecond: ok / seconds, ok, result });
    });
    instance.on('error', reject);
  });
}

/** The ceiling server's requests per second, pinned and driven as Latchkey is. */
async function ceilingRate() {
  const ceiling = await startServer(process.env, ['-e', CEILING]);
  try {
    const pool = Array.from({ length: SESSIONS }, () => randomBytes(32).toString('base64url'));
    await refreshes(ceiling.url, 'sk_none', pool, WARMUP_S);
    return (await refreshes(ceiling.url, 'sk_none', pool, LOAD_S)).perSecond;
  } finally {
    await stopChild(ceiling.child);
    children.delete(ceiling.child);
  }
}

async function scenario(name, extraEnv) {
  const env = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: '0',
    LATCHKEY_SECRET: randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    ...extraEnv,
  };
  if (name !== 'sqlite') cli(['migrate'], env);
  const limits = ['--plan', 'enterprise', '--rps', '1000000', '--rpm', '60000000'];
  const created = JSON.parse(
    cli(['tenant', 'create', '--name', 'Bench', '--env', 'development', ...limits, '--json'], env),
  );
  const prof = process.env.BENCH_REFRESH_CPU_PROF;
  const server = await startServer(env, [
    '--max-semi-space-size=4',
    ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []),
    MAIN,
    'serve',
  ]);
  const pid = server.child.pid;
  console.log(`# ${name}: server pid ${pid}`);
  try {
    // One session per user, signed up and in through the API (argon2id: a few seconds).
    const tokens = [];
    for (let i = 0; i < SESSIONS; i++) {
      const email = `refresh-${i}-${randomBytes(4).toString('hex')}@example.com`;
      await post(server.url, created.secretKey, '/v1/auth/sign-up', { email, password: PASSWORD });
      const r = await post(server.url, created.secretKey, '/v1/auth/sign-in', {
        email,
        password: PASSWORD,
      });
      tokens.push(r.refreshToken);
    }
    // The chains' latest tokens: each run takes its tokens from here and gives them back.
    const pool = tokens;
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      const before = await signsPerSecond();
      await refreshes(server.url, created.secretKey, pool, WARMUP_S).catch((e) => {
        throw new Error(`warm-up: ${e.message}`);
      });
      const cpu0 = processCpu(pid);
      const t0 = performance.now();
      const load = await refreshes(server.url, created.secretKey, pool, LOAD_S);
      const wall = (performance.now() - t0) / 1000;
      const cpu = processCpu(pid) - cpu0;
      const ceiling = await ceilingRate();
      const after = await signsPerSecond();
      const signs = (before + after) / 2;
      rounds.push({
        ceilingPerSecond: ceiling,
        ceilingRatio: load.perSecond / ceiling,
        refreshesPerSecond: load.perSecond,
        signsPerSecond: signs,
        signsBefore: before,
        signsAfter: after,
        ratio: load.perSecond / signs,
        serverCpuUsPerRefresh: (cpu / load.ok) * 1e6,
        serverCpuShare: cpu / wall,
        p99Ms: load.result.latency.p99,
      });
      console.log(
        `# ${name} round ${round + 1}: ${load.perSecond.toFixed(0)} refreshes/s, ${signs.toFixed(0)} RS256 signs/s (${before.toFixed(0)} before, ${after.toFixed(0)} after), ratio ${(load.perSecond / signs).toFixed(2)}; ceiling (bare node:http + one RS256 sign) ${ceiling.toFixed(0)}/s; server CPU ${((cpu / load.ok) * 1e6).toFixed(0)} us per refresh`,
      );
    }
    return {
      name,
      rounds,
      ratio: median(rounds.map((r) => r.ratio)),
      refreshesPerSecond: median(rounds.map((r) => r.refreshesPerSecond)),
      signsPerSecond: median(rounds.map((r) => r.signsPerSecond)),
      ceilingPerSecond: median(rounds.map((r) => r.ceilingPerSecond)),
      ceilingRatio: median(rounds.map((r) => r.ceilingRatio)),
      serverCpuUsPerRefresh: median(rounds.map((r) => r.serverCpuUsPerRefresh)),
    };
  } finally {
    await stopChild(server.child);
  }
}

async function reachable(fn) {
  try {
    await fn();
    return true;
  } catch {
    return false;
  }
}

async function main() {
  // BENCH_REFRESH_ONLY=sqlite|postgres runs one of the two.
  const only = process.env.BENCH_REFRESH_ONLY;
  const scenarios =
    only === 'postgres'
      ? []
      : [await scenario('sqlite', { DATABASE_URL: `sqlite:${join(tmp, 'bench.db')}` })];
  const pgOk =
    only !== 'sqlite' &&
    (await reachable(async () => {
      const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
      await c.connect();
      await c.end();
    }));
  if (pgOk) {
    const schema = `lk_bench_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    const u = new URL(PG_URL);
    u.searchParams.set('options', `-c search_path=${schema}`);
    try {
      scenarios.push(await scenario('postgres', { DATABASE_URL: u.toString(), REDIS_URL }));
    } finally {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    }
  } else {
    if (only !== 'sqlite')
      console.log('notice: PostgreSQL not reachable; only the SQLite scenario runs');
  }
  console.log(
    `\nREST refresh (POST /v1/auth/token), ${SESSIONS} sessions, ${CONNECTIONS} connections, ${LOAD_S} s a round, ${ROUNDS} rounds; server on CPU 0, load on CPU 1 (${CORES} cores, node ${process.version})`,
  );
  for (const s of scenarios) {
    console.log(
      `refresh_${s.name}/rs256_sign=${shownAtLeast(s.ratio, GOAL)} (${s.refreshesPerSecond.toFixed(0)} refreshes/s vs ${s.signsPerSecond.toFixed(0)} raw RS256 signs/s on the same core; server CPU ${s.serverCpuUsPerRefresh.toFixed(0)} us per refresh; goal >= ${GOAL}) ${s.ratio >= GOAL ? 'PASS' : 'FAIL'}`,
    );
    console.log(
      `refresh_${s.name}/ceiling=${s.ceilingRatio.toFixed(2)} (the ceiling: bare node:http + one RS256 sign, ${s.ceilingPerSecond.toFixed(0)} req/s = ${(s.ceilingPerSecond / s.signsPerSecond).toFixed(2)} of raw signs; reported)`,
    );
  }
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(
    RESULTS,
    `${JSON.stringify({ date: new Date().toISOString(), scenarios }, null, 2)}\n`,
  );
  if (scenarios.some((s) => s.ratio < GOAL)) process.exitCode = 1;
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 2;
  })
  .finally(async () => {
    await Promise.all([...children].map(stopChild));
    rmSync(tmp, { recursive: true, force: true });
  });
