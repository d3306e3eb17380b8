// Sign-up throughput benchmark: how close does POST /v1/auth/sign-up get to the raw
// argon2id hash rate of this machine? See bench/README.md. Run with `npm run bench`.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { shownAtLeast } from './lib.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(ROOT, 'packages/server/dist/latchkey.mjs');
const RESULTS = join(ROOT, 'bench/results/latest.json');

const CORES = os.availableParallelism();
/**
 * 2, 3, 4 and 8 connections per core were tried on a 2-core machine: 3 per core gave the
 * most sign-ups/s (2 per core left the hash threads idle between a response and the next
 * request; 4 and more only added queueing latency). BENCH_CONNECTIONS overrides it.
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS) || 3 * CORES;
const ARGON2 = { memoryCost: 19456, timeCost: 2, parallelism: 1 };
const PASSWORD = 'correct horse battery staple';
const HASH_WARMUP_MS = 1000;
/** The raw rate is measured twice, before and after the load, and the two are pooled. */
const HASH_SLICE_MS = 3000;
const IDLE_MS = 2000;
const LOAD_WARMUP_S = 2;
const LOAD_S = 10;
const DEADLINE_MS = 58_000;
/** Other processes using more than this (% of one core) make the figures unreliable. */
const NOISE_LIMIT = 10;

// The baseline must be measured with at least as many libuv threads as cores, otherwise on a
// machine with more than 4 cores (libuv's default pool) it would be capped, and flattering.
// The pool size is read once, when the pool starts, so this script re-runs itself with it.
if ((Number(process.env.UV_THREADPOOL_SIZE) || 4) < CORES && !process.env.BENCH_REEXEC) {
  const env = {
    ...process.env,
    UV_THREADPOOL_SIZE: String(CORES),
    BENCH_REEXEC: '1',
    BENCH_SERVER_UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '',
  };
  const self = spawnSync(process.execPath, [fileURLToPath(import.meta.url)], {
    stdio: 'inherit',
    env,
  });
  process.exit(self.status ?? 1);
}
/** What the server gets: the caller's own setting, never the one set above for the baseline. */
const serverPool = process.env.BENCH_REEXEC
  ? process.env.BENCH_SERVER_UV_THREADPOOL_SIZE
  : process.env.UV_THREADPOOL_SIZE;

const require = createRequire(join(ROOT, 'packages/server/package.json'));
const { hash } = require('@node-rs/argon2');
const autocannon = require('autocannon');

const tmp = mkdtempSync(join(os.tmpdir(), 'latchkey-bench-'));
let server; // the child process
let cannon; // the running autocannon instance
let cleaned = false;

async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  cannon?.stop();
  if (server && server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    const kill = setTimeout(() => server.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(kill);
  }
  rmSync(tmp, { recursive: true, force: true });
}

const deadline = setTimeout(async () => {
  console.error(`bench: still running after ${DEADLINE_MS / 1000} s; giving up`);
  await cleanup();
  process.exit(1);
}, DEADLINE_MS);
deadline.unref();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await cleanup();
    process.exit(130);
  });
}

/** Keeps `concurrency` hashes in flight for `ms`; returns { hashes, seconds }. */
async function hashRun(concurrency, ms) {
  let hashes = 0;
  const started = performance.now();
  const end = started + ms;
  const lane = async () => {
    while (performance.now() < end) {
      await hash(PASSWORD, ARGON2);
      hashes++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { hashes, seconds: (performance.now() - started) / 1000 };
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

/** Runs the latchkey CLI; resolves with its stdout. */
function cli(args, env) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [MAIN, ...args], { env, timeout: 15_000 }, (error, out, err) => {
      if (error) reject(new Error(`latchkey ${args.join(' ')} failed: ${error.message}\n${err}`));
      else resolve(out);
    });
  });
}

function getStatus(port, path) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

/** VmRSS in MB (MiB) from /proc. */
function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) / 1024;
}

/** CPU seconds of each thread of `pid` (Linux): Map of thread id to { name, seconds }. */
function threadCpu(pid) {
  const out = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime + stime, in USER_HZ ticks (100 on every Linux ABI Node supports)
      out.set(tid, { name, seconds: (Number(fields[11]) + Number(fields[12])) / 100 });
    } catch {} // the thread ended meanwhile
  }
  return out;
}

/** CPU seconds used between two threadCpu() readings, by group: main, libuv pool, others. */
function cpuByGroup(pid, before, after) {
  const groups = { main: 0, libuv: 0, other: 0 };
  for (const [tid, { name, seconds }] of after) {
    const used = seconds - (before.get(tid)?.seconds ?? 0);
    if (tid === String(pid)) groups.main += used;
    else if (name === 'libuv-worker') groups.libuv += used;
    else groups.other += used;
  }
  return groups;
}

/** Busy CPU seconds of the whole machine (all cores, steal included) from /proc/stat. */
function machineBusy() {
  const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (user + nice + system + irq + softirq + steal) / 100;
}

/** CPU seconds of this process so far. */
function ownCpu() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/**
 * Runs `fn` and measures CPU seconds: `own` (this process and the server, when `pid` is
 * given) and `foreign` (every other process: another build or test run on the machine).
 */
async function withCpu(fn, pid) {
  const sum = (m) => [...m.values()].reduce((a, t) => a + t.seconds, 0);
  const busy0 = machineBusy();
  const own0 = ownCpu() + (pid ? sum(threadCpu(pid)) : 0);
  const value = await fn();
  const own = ownCpu() + (pid ? sum(threadCpu(pid)) : 0) - own0;
  return { value, own, foreign: Math.max(0, machineBusy() - busy0 - own) };
}

let counter = 0;
function load(port, secretKey, seconds) {
  return new Promise((resolve, reject) => {
    cannon = autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: CONNECTIONS,
        pipelining: 1,
        duration: seconds,
        timeout: 30,
        headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
        requests: [
          {
            method: 'POST',
            path: '/v1/auth/sign-up',
            // Called for every request: each sign-up needs an e-mail address of its own.
            setupRequest(req) {
              counter++;
              const body = { email: `user-${counter}@bench.example`, password: PASSWORD };
              return { ...req, body: JSON.stringify(body) };
            },
          },
        ],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

async function main() {
  // 1. The baseline, first half: raw argon2id in this process, the server not started yet.
  await hashRun(CORES, HASH_WARMUP_MS);
  const before = await withCpu(() => hashRun(CORES, HASH_SLICE_MS));

  // 2. A tenant with limits that never bite, then the server.
  const port = await freePort();
  const env = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: `sqlite:${join(tmp, 'bench.db')}`,
    LATCHKEY_SECRET: randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'warn',
  };
  delete env.BENCH_REEXEC;
  delete env.BENCH_SERVER_UV_THREADPOOL_SIZE;
  if (serverPool) env.UV_THREADPOOL_SIZE = serverPool;
  else delete env.UV_THREADPOOL_SIZE;
  const limits = ['--plan', 'enterprise', '--rps', '1000000', '--rpm', '60000000'];
  const created = JSON.parse(
    await cli(['tenant', 'create', '--name', 'Bench', ...limits, '--json'], env),
  );
  if (!created.secretKey) throw new Error('tenant create printed no secretKey');

  let serverErr = '';
  // Started the way `npm start` and `latchkey serve` start it (see packages/server/bin).
  server = spawn(process.execPath, ['--max-semi-space-size=4', MAIN, 'serve'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  server.stderr.on('data', (d) => {
    serverErr = (serverErr + d).slice(-4000);
  });
  const exited = new Promise((_, reject) =>
    server.once('exit', (code, signal) => {
      if (!cleaned) reject(new Error(`the server exited (${signal ?? code}):\n${serverErr}`));
    }),
  );
  exited.catch(() => {});
  const until = Date.now() + 15_000;
  while ((await Promise.race([getStatus(port, '/healthz'), exited])) !== 200) {
    if (Date.now() > until)
      throw new Error(`GET /healthz did not answer 200 in 15 s\n${serverErr}`);
    await sleep(100);
  }

  // 3. Idle memory.
  await Promise.race([sleep(IDLE_MS), exited]);
  const idleRss = rssMb(server.pid);

  // 4. Load: a warm-up run, then the measured run.
  await Promise.race([load(port, created.secretKey, LOAD_WARMUP_S), exited]);
  const threadsBefore = threadCpu(server.pid);
  const benchCpuBefore = ownCpu();
  const signUp = await withCpu(
    () => Promise.race([load(port, created.secretKey, LOAD_S), exited]),
    server.pid,
  );
  const serverCpu = cpuByGroup(server.pid, threadsBefore, threadCpu(server.pid));
  const benchCpu = ownCpu() - benchCpuBefore;
  const loadedRss = rssMb(server.pid);
  const result = signUp.value;

  // 5. The baseline, second half: the server idle. Pooling the two halves cancels a slow
  // drift of the machine's speed (a shared or virtual machine) over the run.
  await sleep(300);
  const after = await withCpu(() => hashRun(CORES, HASH_SLICE_MS));

  const rateOf = (r) => r.value.hashes / r.value.seconds;
  const raw =
    (before.value.hashes + after.value.hashes) / (before.value.seconds + after.value.seconds);
  const drift = Math.abs(rateOf(before) - rateOf(after)) / raw;
  const ok = result['2xx'];
  const signUps = ok / result.duration; // successful sign-ups per second
  // CPU per sign-up (server and load generator) against CPU per raw hash: how much of the
  // work is not argon2. Unlike the ratio, other processes on the machine barely move it.
  const cpuPerHash = (before.own + after.own) / (before.value.hashes + after.value.hashes);
  const cpuPerSignUp = signUp.own / result.requests.total;
  const wall = result.duration;
  const pct = (seconds, time = wall) => Math.round((seconds / time) * 100);
  const foreign = {
    duringRawHash: pct(before.foreign + after.foreign, before.value.seconds + after.value.seconds),
    duringSignUp: pct(signUp.foreign),
  };

  const report = {
    date: new Date().toISOString(),
    machine: { cpu: os.cpus()[0]?.model, cores: CORES, node: process.version },
    argon2: {
      ...ARGON2,
      concurrency: CORES,
      hashesPerSecond: round(raw),
      beforeLoad: round(rateOf(before)),
      afterLoad: round(rateOf(after)),
    },
    signUp: {
      connections: CONNECTIONS,
      durationSeconds: round(result.duration),
      requestsPerSecond: round(signUps),
      responses2xx: ok,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
      serverUvThreadpoolSize: serverPool || 'default (4)',
    },
    ratio: signUps / raw,
    ratioPercent: round((signUps / raw) * 100),
    goalRatioPercent: 85,
    idleRssMb: round(idleRss),
    goalIdleRssMb: 100,
    rssUnderLoadMb: round(loadedRss),
    cpu: {
      msPerRawHash: round(cpuPerHash * 1000),
      msPerSignUp: round(cpuPerSignUp * 1000),
      efficiencyPercent: round((cpuPerHash / cpuPerSignUp) * 100),
      duringLoadPercentOfOneCore: {
        serverMainThread: pct(serverCpu.main),
        serverLibuvPool: pct(serverCpu.libuv),
        serverOtherThreads: pct(serverCpu.other),
        loadGenerator: pct(benchCpu),
        otherProcesses: foreign.duringSignUp,
        available: CORES * 100,
      },
      otherProcessesDuringRawHashPercentOfOneCore: foreign.duringRawHash,
    },
  };

  const line = (label, value) => console.log(`${label.padEnd(58)}${value}`);
  const lat = `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`;
  console.log('');
  line(`argon2id raw hash rate (m=19456,t=2,p=1, concurrency ${CORES}):`, `${fmt(raw)} hashes/s`);
  line(
    `sign-up through the server (${CONNECTIONS} connections):`,
    `${fmt(signUps)} req/s  (${lat})`,
  );
  line('ratio sign-up / raw hash rate:', `${fmt(report.ratioPercent)} %   (goal >= 85 %)`);
  line('server idle RSS:', `${fmt(idleRss)} MB  (goal < 100 MB, issue 13)`);
  console.log(
    `signup/raw_argon2=${shownAtLeast(report.ratio, 0.85)} (goal >= 0.85) ${report.ratio >= 0.85 ? 'PASS' : 'FAIL'}`,
  );
  const c = report.cpu.duringLoadPercentOfOneCore;
  console.log('\ndetails:');
  console.log(
    `  raw hash rate before / after the load: ${fmt(rateOf(before))} / ${fmt(rateOf(after))} hashes/s`,
  );
  console.log(
    `  CPU during the load (% of one core, ${c.available} available): server main thread ` +
      `${c.serverMainThread}, libuv pool ${c.serverLibuvPool}, other server threads ` +
      `${c.serverOtherThreads}, load generator ${c.loadGenerator}, other processes ${c.otherProcesses}`,
  );
  console.log(
    `  CPU per raw hash ${report.cpu.msPerRawHash} ms, per sign-up (server + load generator) ` +
      `${report.cpu.msPerSignUp} ms: CPU efficiency ${fmt(report.cpu.efficiencyPercent)} %`,
  );
  console.log(`  server RSS under load: ${fmt(loadedRss)} MB`);

  if (Math.max(foreign.duringRawHash, foreign.duringSignUp) > NOISE_LIMIT || drift > 0.15) {
    console.log(
      `\nWARNING: the machine was not quiet: other processes used ${foreign.duringRawHash} % ` +
        `(raw hash runs) and ${foreign.duringSignUp} % (sign-up run) of a core, and the raw ` +
        `rate moved ${Math.round(drift * 100)} % between before and after. The ratio is ` +
        'unreliable; re-run on a quiet machine (the CPU efficiency is less affected).',
    );
  }
  if (result.non2xx + result.errors + result.timeouts > 0 || ok === 0) {
    console.log(
      `\nWARNING: ${ok} responses 2xx, ${result.non2xx} non-2xx, ${result.errors} errors, ` +
        `${result.timeouts} timeouts; status codes: ${JSON.stringify(result.statusCodeStats)}`,
    );
    process.exitCode = 1;
  }

  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nwritten to ${RESULTS}`);
}

function round(n) {
  return Math.round(n * 10) / 10;
}

function fmt(n) {
  return n.toFixed(1);
}

try {
  await main();
} catch (error) {
  console.error(`bench failed: ${error.stack ?? error}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
