// Password sign-in benchmark (issue 31): REST sign-in (`POST /v1/auth/sign-in`) and the hosted
// sign-in page's form (GET the page, POST the form, up to the redirect) against the raw
// argon2id verify rate of the server's core, 2 in flight. See bench/README.md.
//
//   node bench/signin.mjs                 SQLite (gated), then PostgreSQL when reachable
//   BENCH_SIGNIN_PG=0 node bench/signin.mjs   SQLite only
//   BENCH_SIGNIN_CPU_PROF=DIR             V8 CPU profile of each server, written when it stops
//   BENCH_SIGNIN_POOL_CPU=1               the server's libuv pool moved to CPU 1 after the users
//                                         are made (profiling only: the ratios are then void)
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { pinLoadToCpu1, shownAtLeast } from './lib.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(ROOT, 'packages/server/dist/latchkey.mjs');
const RESULTS = join(ROOT, 'bench/results/signin.json');
const require = createRequire(join(ROOT, 'packages/server/package.json'));
const autocannon = require('autocannon');
const pg = require('pg');

const PG_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PASSWORD = 'correct horse battery staple';
/** The server's argon2id setting (OWASP): what every user's hash is made with. */
const ARGON2 = { memoryCost: 19456, timeCost: 2, parallelism: 1 };
/** Sign-ins (and raw verifies) in flight: 2, as in the issue's goal. */
const IN_FLIGHT = Number(process.env.BENCH_SIGNIN_IN_FLIGHT) || 2;
const USERS = Number(process.env.BENCH_SIGNIN_USERS) || 100;
const WARMUP_S = 3;
/**
 * The sign-ins and the raw verifies take turns, ROUNDS times, each for SLICE_S seconds:
 * the machine's speed drifts over tens of seconds (a verify's CPU time moved by 15 %
 * between two runs a minute apart), and a baseline taken only before and after the load
 * met another machine than the load did.
 */
const ROUNDS = Number(process.env.BENCH_SIGNIN_ROUNDS) || 4;
const SLICE_S = Number(process.env.BENCH_SIGNIN_SECONDS) || 3;
const GOALS = { rest: 0.9, hosted: 0.8 };
/** BENCH_SIGNIN_ONLY=rest or hosted: only that flow (for profiling one at a time). */
const ONLY = process.env.BENCH_SIGNIN_ONLY;
const KINDS = ['rest', 'hosted'].filter((kind) => !ONLY || kind === ONLY);
const DEADLINE_MS = 300_000;
/** Other processes using more than this (% of one core) during a run make it unreliable. */
const NOISE_LIMIT = 10;
const ORIGIN = 'http://localhost:5173';

// Server (and the raw verifies) on CPU 0, this process (the load) on CPU 1.
const CORES = os.availableParallelism();
const PINNED = pinLoadToCpu1();
const onServerCore = (argv) => (PINNED ? ['taskset', '-c', '0', ...argv] : argv);

const tmp = mkdtempSync(join(os.tmpdir(), 'latchkey-bench-signin-'));
const children = new Set();

async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(kill);
  children.delete(child);
}

const deadline = setTimeout(async () => {
  console.error(`bench: still running after ${DEADLINE_MS / 1000} s; giving up`);
  await Promise.all([...children].map(stopChild));
  rmSync(tmp, { recursive: true, force: true });
  process.exit(1);
}, DEADLINE_MS);
deadline.unref();

/** Runs the latchkey CLI (not pinned: it is not measured); resolves with its stdout. */
function cli(args, env) {
  const r = spawnSync(process.execPath, [MAIN, ...args], {
    env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (r.status !== 0) throw new Error(`latchkey ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** CPU seconds of `pid` (Linux /proc) by thread group: main thread, libuv pool (argon2), others. */
function processCpu(pid) {
  const groups = { main: 0, libuv: 0, other: 0, total: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / 100;
      const group = tid === String(pid) ? 'main' : name === 'libuv-worker' ? 'libuv' : 'other';
      groups[group] += seconds;
      groups.total += seconds;
    } catch {} // the thread ended meanwhile
  }
  return groups;
}

/** Busy CPU seconds of the whole machine (all cores) from /proc/stat. */
function machineBusy() {
  const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (user + nice + system + irq + softirq + steal) / 100;
}

function ownCpu() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

// ----- The baseline: raw argon2id verifies, IN_FLIGHT at a time, on the server's core -----

const RAW_SCRIPT = `
const { hash, verify } = require(${JSON.stringify(require.resolve('@node-rs/argon2'))});
const [seconds, inFlight] = [Number(process.argv[1]), Number(process.argv[2])];
(async () => {
  const digest = await hash(${JSON.stringify(PASSWORD)}, ${JSON.stringify(ARGON2)});
  const run = async (ms) => {
    let n = 0;
    const t0 = performance.now();
    const end = t0 + ms;
    const lane = async () => {
      while (performance.now() < end) {
        if (!(await verify(digest, ${JSON.stringify(PASSWORD)}))) throw new Error('verify failed');
        n++;
      }
    };
    await Promise.all(Array.from({ length: inFlight }, lane));
    return { verifies: n, seconds: (performance.now() - t0) / 1000 };
  };
  await run(1000);
  const cpu0 = process.cpuUsage();
  const r = await run(seconds * 1000);
  const cpu = process.cpuUsage(cpu0);
  const all = process.cpuUsage();
  console.log(JSON.stringify({
    ...r,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    processCpuSeconds: (all.user + all.system) / 1e6,
  }));
})();
`;

/** Raw verifies per second in a child process pinned to the server's core. */
async function rawVerifies(seconds) {
  const busy0 = machineBusy();
  const t0 = performance.now();
  const own0 = ownCpu();
  const argv = onServerCore([
    process.execPath,
    '-e',
    RAW_SCRIPT,
    String(seconds),
    String(IN_FLIGHT),
  ]);
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  children.delete(child);
  if (code !== 0) throw new Error(`raw verify run failed (${code})`);
  const r = JSON.parse(out);
  const elapsed = (performance.now() - t0) / 1000;
  const foreign = Math.max(0, machineBusy() - busy0 - r.processCpuSeconds - ownCpu() + own0);
  return {
    ...r,
    perSecond: r.verifies / r.seconds,
    cpuMsPerVerify: (r.cpuSeconds / r.verifies) * 1000,
    otherProcessesPercent: Math.round((foreign / elapsed) * 100),
  };
}

// ----- The server -----

async function startServer(env) {
  const prof = process.env.BENCH_SIGNIN_CPU_PROF;
  const args = [
    '--max-semi-space-size=4',
    ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []),
    MAIN,
    'serve',
  ];
  const argv = onServerCore([process.execPath, ...args]);
  const child = spawn(argv[0], argv.slice(1), { env });
  children.add(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => {
    err = (err + d).slice(-4000);
  });
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (c) => {
      out += c;
      if (/listening on (\S+)/.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`serve exited (${code}):\n${out}\n${err}`)));
  });
  child.stdout.resume();
  return child;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** One HTTP request; resolves with { status, headers, body }. */
function request(port, method, path, headers = {}, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path, headers, agent, timeout: 30_000 },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `task(i)` for i < n, `width` at a time. */
async function pool(n, width, task) {
  let next = 0;
  const lane = async () => {
    while (next < n) await task(next++);
  };
  await Promise.all(Array.from({ length: width }, lane));
}

/**
 * One flow in turns with the raw verifies (see ROUNDS): its warm-up, then per round the
 * baseline's slice and the flow's. Pooled: all rounds' verifies over all their seconds,
 * all sign-ins over all theirs, and their CPU.
 */
async function interleaved(pid, run) {
  await run(WARMUP_S);
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) {
    const raw = await rawVerifies(SLICE_S);
    const load = await measured(pid, () => run(SLICE_S));
    rounds.push({ raw, load, ratio: load.perSecond / raw.perSecond });
    await sleep(200);
  }
  const sum = (list, pick) => list.reduce((total, item) => total + pick(item), 0);
  const raws = rounds.map((r) => r.raw);
  const loads = rounds.map((r) => r.load);
  const count = sum(loads, (m) => m.count);
  const perSignIn = (name) => sum(loads, (m) => m[name] * m.count) / count;
  const verifies = sum(raws, (r) => r.verifies);
  const rawVerify = {
    perSecond: verifies / sum(raws, (r) => r.seconds),
    cpuMsPerVerify: (sum(raws, (r) => r.cpuSeconds) / verifies) * 1000,
    otherProcessesPercent: Math.max(...raws.map((r) => r.otherProcessesPercent)),
  };
  const load = {
    count,
    seconds: sum(loads, (m) => m.seconds),
    perSecond: count / sum(loads, (m) => m.seconds),
    serverCpuMsPerSignIn: perSignIn('serverCpuMsPerSignIn'),
    serverMainThreadMsPerSignIn: perSignIn('serverMainThreadMsPerSignIn'),
    serverLibuvMsPerSignIn: perSignIn('serverLibuvMsPerSignIn'),
    serverOtherThreadsMsPerSignIn: perSignIn('serverOtherThreadsMsPerSignIn'),
    loadGeneratorPercentOfOneCore: Math.max(...loads.map((m) => m.loadGeneratorPercentOfOneCore)),
    otherProcessesPercent: Math.max(...loads.map((m) => m.otherProcessesPercent)),
    failures: sum(loads, (m) => m.failures ?? 0),
    firstFailure: loads.find((m) => m.firstFailure)?.firstFailure,
  };
  return { ...load, rawVerify, rounds: rounds.map((r) => r.ratio) };
}

/** Measures `fn` (which resolves with its count of completed sign-ins) with the CPU it cost. */
async function measured(pid, fn) {
  const busy0 = machineBusy();
  const server0 = processCpu(pid);
  const own0 = ownCpu();
  const t0 = performance.now();
  const { count, extra, seconds: reported } = await fn();
  // autocannon's own duration when it gives one: its start-up is not load.
  const seconds = reported ?? (performance.now() - t0) / 1000;
  const server1 = processCpu(pid);
  const own = ownCpu() - own0;
  const serverCpu = server1.total - server0.total;
  const foreign = Math.max(0, machineBusy() - busy0 - serverCpu - own);
  const per = (group) => ((server1[group] - server0[group]) / count) * 1000;
  return {
    count,
    seconds,
    perSecond: count / seconds,
    serverCpuMsPerSignIn: (serverCpu / count) * 1000,
    serverMainThreadMsPerSignIn: per('main'),
    serverLibuvMsPerSignIn: per('libuv'),
    serverOtherThreadsMsPerSignIn: per('other'),
    loadGeneratorPercentOfOneCore: Math.round((own / seconds) * 100),
    otherProcessesPercent: Math.round((foreign / seconds) * 100),
    ...extra,
  };
}

/** REST sign-in: autocannon, IN_FLIGHT connections, one prebuilt request per user, cycled. */
function restRun(port, secretKey, emails, seconds) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: IN_FLIGHT,
        pipelining: 1,
        duration: seconds,
        timeout: 30,
        requests: emails.map((email) => ({
          method: 'POST',
          path: '/v1/auth/sign-in',
          headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ email, password: PASSWORD }),
        })),
      },
      (error, result) => {
        if (error) return reject(error);
        const bad = result.non2xx + result.errors + result.timeouts;
        resolve({
          count: result['2xx'],
          seconds: result.duration,
          extra: {
            failures: bad,
            latencyMs: { p50: result.latency.p50, p99: result.latency.p99 },
            ...(bad ? { statusCodes: result.statusCodeStats } : {}),
          },
        });
      },
    );
  });
}

const cookiesOf = (headers) =>
  (headers['set-cookie'] ?? []).map((c) => c.slice(0, c.indexOf(';'))).join('; ');

/**
 * The hosted page as a new browser signs in: GET /sign-in (its CSRF cookie and token), POST
 * the form to the action it names, with that cookie, Origin and Sec-Fetch-Site as browsers
 * send them; done at the 303 that sends the browser back with its access token.
 */
async function hostedSignIn(port, query, email) {
  const page = await request(port, 'GET', `/sign-in?${query}`, {
    accept: 'text/html',
    'sec-fetch-site': 'cross-site',
    'sec-fetch-mode': 'navigate',
  });
  if (page.status !== 200) throw new Error(`GET /sign-in: ${page.status}`);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  const action = /<form[^>]* method="post" action="([^"]*\/sign-in\?[^"]*)"/.exec(page.body)?.[1];
  if (!csrf || !action) throw new Error('the sign-in page has no form with a CSRF token');
  const body = new URLSearchParams({ _csrf: csrf, email, password: PASSWORD }).toString();
  const posted = await request(
    port,
    'POST',
    action.replaceAll('&amp;', '&'),
    {
      accept: 'text/html',
      cookie: cookiesOf(page.headers),
      origin: `http://127.0.0.1:${port}`,
      'sec-fetch-site': 'same-origin',
      'sec-fetch-mode': 'navigate',
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': Buffer.byteLength(body),
    },
    body,
  );
  if (posted.status !== 303 || !posted.headers.location?.includes('#access_token='))
    throw new Error(`POST /sign-in: ${posted.status} ${posted.body.slice(0, 300)}`);
}

async function hostedRun(port, query, emails, seconds) {
  let count = 0;
  let failures = 0;
  let firstFailure;
  let next = 0;
  const end = performance.now() + seconds * 1000;
  const lane = async () => {
    while (performance.now() < end) {
      try {
        await hostedSignIn(port, query, emails[next++ % emails.length]);
        count++;
      } catch (error) {
        failures++;
        firstFailure ??= String(error.message ?? error);
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return { count, extra: { failures, ...(firstFailure ? { firstFailure } : {}) } };
}

// ----- One database -----

async function scenario(name, databaseUrl) {
  const port = await freePort();
  const env = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: databaseUrl,
    LATCHKEY_SECRET: randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'warn',
  };
  delete env.REDIS_URL;
  if (name === 'postgres') cli(['migrate'], env);
  const limits = ['--plan', 'enterprise', '--rps', '1000000', '--rpm', '60000000'];
  const created = JSON.parse(
    cli(
      ['tenant', 'create', '--name', 'Bench', '--env', 'development', '--origin', ORIGIN].concat(
        limits,
        ['--json'],
      ),
      env,
    ),
  );
  const server = await startServer(env);
  const pid = server.pid;
  try {
    // The users, all with the same password (each sign-up hashes it with its own salt).
    const emails = Array.from({ length: USERS }, (_, i) => `user-${i}@bench.example`);
    const signUp = await measured(pid, async () => {
      await pool(USERS, IN_FLIGHT, async (i) => {
        const r = await request(
          port,
          'POST',
          '/v1/auth/sign-up',
          { authorization: `Bearer ${created.secretKey}`, 'content-type': 'application/json' },
          JSON.stringify({ email: emails[i], password: PASSWORD }),
        );
        if (r.status !== 201) throw new Error(`sign-up: ${r.status} ${r.body.slice(0, 300)}`);
      });
      return { count: USERS };
    });
    const query = new URLSearchParams({
      pk: created.publishableKey,
      redirect_url: `${ORIGIN}/callback`,
    }).toString();

    // Profiling aid: the pool's threads (argon2) moved off the server's core, so that they
    // do not preempt the main thread in the middle of what its V8 profile samples.
    if (PINNED && process.env.BENCH_SIGNIN_POOL_CPU)
      for (const tid of readdirSync(`/proc/${pid}/task`))
        if (readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === 'libuv-worker')
          spawnSync('taskset', ['-pc', process.env.BENCH_SIGNIN_POOL_CPU, tid]);
    const out = { database: name, signUp };
    if (ONLY !== 'hosted') {
      out.rest = await interleaved(pid, (seconds) =>
        restRun(port, created.secretKey, emails, seconds),
      );
      await sleep(300);
    }
    if (ONLY !== 'rest')
      out.hosted = await interleaved(pid, (seconds) => hostedRun(port, query, emails, seconds));
    return out;
  } finally {
    await stopChild(server);
  }
}

async function postgresSchema() {
  const schema = `lk_bench_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
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

// ----- Main -----

const fmt2 = (n) => n.toFixed(2);
const fmt1 = (n) => n.toFixed(1);

try {
  const report = {
    date: new Date().toISOString(),
    machine: { cpu: os.cpus()[0]?.model, cores: CORES, node: process.version, pinned: PINNED },
    loadAverageAtStart: os.loadavg().map((n) => Math.round(n * 100) / 100),
    inFlight: IN_FLIGHT,
    users: USERS,
    argon2: ARGON2,
    scenarios: [],
  };
  const databases = [['sqlite', `sqlite:${join(tmp, 'signin.db')}`]];
  const schema = process.env.BENCH_SIGNIN_PG === '0' ? undefined : await postgresSchema();
  if (schema) databases.push(['postgres', schema.url]);
  else if (process.env.BENCH_SIGNIN_PG !== '0')
    console.log(`notice: PostgreSQL at ${PG_URL} unreachable: SQLite only`);

  for (const [name, url] of databases) {
    const s = await scenario(name, url);
    s.ratios = Object.fromEntries(
      KINDS.map((kind) => [kind, s[kind].perSecond / s[kind].rawVerify.perSecond]),
    );
    // The same comparison in CPU time: a raw verify's against a sign-in's (server, every
    // thread). Other processes on the server's core move it much less than the rates.
    s.cpuRatios = Object.fromEntries(
      KINDS.map((kind) => [kind, s[kind].rawVerify.cpuMsPerVerify / s[kind].serverCpuMsPerSignIn]),
    );
    report.scenarios.push(s);
    if (name === 'postgres') await schema.drop();
  }
  report.loadAverageAtEnd = os.loadavg().map((n) => Math.round(n * 100) / 100);

  console.log(
    `\nPassword sign-in, ${IN_FLIGHT} in flight, ${USERS} users cycled, after ${WARMUP_S} s of warm-up ${ROUNDS} rounds of ${SLICE_S} s of raw verifies then ${SLICE_S} s of sign-ins (${PINNED ? 'server and raw verifies on CPU 0, load on CPU 1' : 'not pinned'}; load average ${report.loadAverageAtStart.join(' ')})`,
  );
  let failed = false;
  for (const s of report.scenarios) {
    console.log(`\n[${s.database}]`);
    const u = s.signUp;
    console.log(
      `  (setup: ${USERS} sign-ups, server CPU per sign-up ${fmt2(u.serverCpuMsPerSignIn)} ms: main thread ${fmt2(u.serverMainThreadMsPerSignIn)}, libuv pool ${fmt2(u.serverLibuvMsPerSignIn)})`,
    );
    for (const kind of KINDS) {
      const m = s[kind];
      const r = m.rawVerify;
      console.log(
        `  ${kind.padEnd(6)} raw argon2id verify (m=19456,t=2,p=1, ${IN_FLIGHT} in flight) ${fmt1(r.perSecond)}/s, ${fmt2(r.cpuMsPerVerify)} ms CPU each; the rounds' ratios ${m.rounds.map(fmt2).join(', ')}`,
      );
      console.log(
        `  ${''.padEnd(6)} ${fmt1(m.perSecond)} sign-ins/s; server CPU per sign-in ${fmt2(m.serverCpuMsPerSignIn)} ms: main thread ${fmt2(m.serverMainThreadMsPerSignIn)}, libuv pool ${fmt2(m.serverLibuvMsPerSignIn)}, other threads ${fmt2(m.serverOtherThreadsMsPerSignIn)}; load generator ${m.loadGeneratorPercentOfOneCore} %, other processes ${m.otherProcessesPercent} % of a core${m.failures ? `; ${m.failures} FAILED${m.firstFailure ? ` (${m.firstFailure})` : ''}` : ''}`,
      );
      if (m.failures || m.count === 0) failed = true;
      const noise = Math.max(m.otherProcessesPercent, r.otherProcessesPercent);
      if (noise > NOISE_LIMIT)
        console.log(
          `  WARNING: other processes used up to ${noise} % of a core: the ratio is unreliable`,
        );
    }
  }
  console.log('');
  for (const s of report.scenarios) {
    const suffix = s.database === 'sqlite' ? '' : `_${s.database}`;
    for (const kind of KINDS) {
      const ratio = s.ratios[kind];
      const gated = s.database === 'sqlite';
      const pass = ratio >= GOALS[kind];
      if (gated && !pass) failed = true;
      console.log(
        `signin_${kind}${suffix}/argon2_verify=${shownAtLeast(ratio, GOALS[kind])} (goal >= ${fmt2(GOALS[kind])}) ${pass ? 'PASS' : 'FAIL'}${gated ? '' : ' (reported, not gated)'}; in CPU time ${fmt2(s.cpuRatios[kind])}`,
      );
    }
  }
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nwritten to ${RESULTS}`);
  if (failed) process.exitCode = 1;
} catch (error) {
  console.error(`bench failed: ${error.stack ?? error}`);
  process.exitCode = 2;
} finally {
  await Promise.all([...children].map(stopChild));
  rmSync(tmp, { recursive: true, force: true });
}
