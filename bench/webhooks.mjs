// Webhooks benchmark (issue 30, docs/design.md §17): sign-ups per second with one webhook
// endpoint subscribed to every event, against sign-ups with none, on the same server core;
// and the delivery lag (sign-up answered -> receiver got its user.created) at that load with
// a healthy receiver. See bench/README.md.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, pinLoadToCpu1, shownBelow } from './lib.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'packages/server/dist');
const MAIN = join(DIST, 'latchkey.mjs');
const RESULTS = join(ROOT, 'bench/results/webhooks.json');
const require = createRequire(join(ROOT, 'packages/server/package.json'));
const autocannon = require('autocannon');
const pg = require('pg');
const { Webhook } = require('standardwebhooks');
// The endpoint is made with the service function itself (the built modules), as the CLI's
// `latchkey webhook create` and the admin area do.
const dist = (path) => import(pathToFileURL(join(DIST, path)).href);
const { openDatabase } = await dist('storage/index.js');
const { SecretBox } = await dist('crypto/secret-box.js');
const { createEndpoint, deleteEndpoint, EVENT_TYPES } = await dist('modules/webhooks/index.js');

const PG_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PASSWORD = 'correct horse battery staple';
/** Rounds of one run without and one with the endpoint, the order flipped each round (AB BA AB). */
const ROUNDS = Number(process.env.BENCH_WEBHOOK_ROUNDS) || 3;
/** Each measured run's length, about: its number of sign-ups is set from the warm-up's rate. */
const RUN_S = Number(process.env.BENCH_WEBHOOK_SECONDS) || 6;
const WARMUP_S = 3;
/** 3 per core of the server (bench/run.mjs found 3 per core best); the server has one. */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS) || 3;
const DRAIN_TIMEOUT_MS = 60_000;
const DEADLINE_MS = 600_000;
const GOAL_COST_PERCENT = 5;
const GOAL_LAG_P99_MS = 1000;
/** Other processes using more than this (% of one core) during a run make it unreliable. */
const NOISE_LIMIT = 10;

// Server on CPU 0, this process (load generator and receiver) on CPU 1, as on the 2-core
// machine of the other benchmarks' figures. `-a`: every thread of this process.
const CORES = os.availableParallelism();
const PINNED = pinLoadToCpu1();

const now = () => performance.timeOrigin + performance.now();
const tmp = mkdtempSync(join(os.tmpdir(), 'latchkey-bench-webhooks-'));
const children = new Set();

async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const kill = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(kill);
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

function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * The healthy receiver, on this process's core: answers 204 at once, and records each
 * delivery (arrival time, webhook-id, type, user id, the body's timestamp) under the run
 * its path names, after verifying its signature with the `standardwebhooks` package.
 */
function startReceiver() {
  const runs = new Map(); // run name -> { secret, got: [] , bad: [] }
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const arrival = now();
      res.writeHead(204).end();
      const run = runs.get(req.url.slice('/hook/'.length));
      const body = Buffer.concat(chunks).toString('utf8');
      if (!run) return;
      try {
        const event = new Webhook(run.secret).verify(body, req.headers);
        run.got.push({
          arrival,
          id: req.headers['webhook-id'],
          type: event.type,
          userId: event.data?.id,
          timestamp: Date.parse(event.timestamp),
        });
      } catch (error) {
        run.bad.push(String(error));
      }
    });
  });
  server.keepAliveTimeout = 5000;
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, runs, port: server.address().port }));
  });
}

/** Starts `latchkey serve` pinned to CPU 0; resolves with { child, url }. */
async function startServer(env) {
  // BENCH_WEBHOOK_CPU_PROF=dir: a V8 CPU profile of each server, written there when it stops.
  const prof = process.env.BENCH_WEBHOOK_CPU_PROF;
  const args = [
    '--max-semi-space-size=4',
    ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []),
    MAIN,
    'serve',
  ];
  const child = PINNED
    ? spawn('taskset', ['-c', '0', process.execPath, ...args], { env })
    : spawn(process.execPath, args, { env });
  children.add(child);
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
  return { child, url, stderr: () => err };
}

let counter = 0;
/**
 * `amount` sign-ups at full speed over CONNECTIONS connections (each one counted to the
 * end, so every user whose sign-up committed is known); resolves with the rate, the
 * answer time of each user id, and the CPU the server, this process and others used.
 */
async function signUps(base, secretKey, amount, serverPid, tag) {
  const answered = new Map(); // user id -> answer time
  const failures = [];
  const busy0 = machineBusy();
  const server0 = processCpu(serverPid);
  const own0 = ownCpu();
  const started = now();
  await new Promise((resolve, reject) => {
    autocannon(
      {
        url: base,
        connections: CONNECTIONS,
        pipelining: 1,
        amount,
        timeout: 30,
        headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
        requests: [
          {
            method: 'POST',
            path: '/v1/auth/sign-up',
            setupRequest(req) {
              counter++;
              const body = { email: `${tag}-${counter}@bench.example`, password: PASSWORD };
              return { ...req, body: JSON.stringify(body) };
            },
            onResponse(status, body) {
              const at = now();
              if (status !== 201) failures.push(`${status} ${body}`.slice(0, 300));
              else answered.set(JSON.parse(body).userId, at);
            },
          },
        ],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
  // From the first request to the last answer: autocannon reports the end of an `amount`
  // run only at its next 1-second tick, which would round every run to whole seconds.
  const seconds = (Math.max(...answered.values()) - started) / 1000;
  const server1 = processCpu(serverPid);
  const serverCpu = server1.total - server0.total;
  const perSignUp = (group) => ((server1[group] - server0[group]) / amount) * 1000;
  const own = ownCpu() - own0;
  const foreign = Math.max(0, machineBusy() - busy0 - serverCpu - own);
  if (failures.length || answered.size !== amount)
    throw new Error(
      `${amount} sign-ups sent, ${answered.size} answered 201; failures: ${failures.slice(0, 5).join('; ')}`,
    );
  return {
    answered,
    seconds,
    perSecond: amount / seconds,
    serverCpuMsPerSignUp: (serverCpu / amount) * 1000,
    serverMainThreadMsPerSignUp: perSignUp('main'),
    serverLibuvMsPerSignUp: perSignUp('libuv'),
    otherProcessesPercent: Math.round((foreign / seconds) * 100),
  };
}

/** One database: tenant, server, warm-up, then ROUNDS rounds of A (no endpoint) and B (one). */
async function scenario(name, databaseUrl, receiver) {
  const env = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: databaseUrl,
    LATCHKEY_SECRET: randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'warn',
  };
  if (name === 'postgres') cli(['migrate'], env);
  const limits = ['--plan', 'enterprise', '--rps', '1000000', '--rpm', '60000000'];
  const created = JSON.parse(
    cli(['tenant', 'create', '--name', 'Bench', '--env', 'development', ...limits, '--json'], env),
  );
  const tenant = created.tenant;
  const database = openDatabase(databaseUrl, { poolSize: 1 });
  const box = new SecretBox(env.LATCHKEY_SECRET);
  const server = await startServer(env);
  const pid = server.child.pid;
  try {
    const warm = await signUps(
      server.url,
      created.secretKey,
      Math.max(CONNECTIONS, 20),
      pid,
      `${name}-warm0`,
    );
    const warm2 = await signUps(
      server.url,
      created.secretKey,
      Math.max(CONNECTIONS, Math.round(warm.perSecond * WARMUP_S)),
      pid,
      `${name}-warm`,
    );
    const amount = Math.max(30, Math.round(warm2.perSecond * RUN_S));
    const runs = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['none', 'one'] : ['one', 'none'];
      for (const kind of order) {
        await sleep(300);
        const tag = `${name}-r${round}-${kind}`;
        if (kind === 'none') {
          const r = await signUps(server.url, created.secretKey, amount, pid, tag);
          runs.push({ round, kind, ...r });
          continue;
        }
        const { endpoint, secret } = await createEndpoint({ db: database.db, box }, tenant, {
          url: `http://127.0.0.1:${receiver.port}/hook/${tag}`,
          events: [...EVENT_TYPES],
        });
        const record = { secret, got: [], bad: [] };
        receiver.runs.set(tag, record);
        const r = await signUps(server.url, created.secretKey, amount, pid, tag);
        // Every event delivered before the next run (and before counting).
        const until = Date.now() + DRAIN_TIMEOUT_MS;
        while (record.got.length + record.bad.length < amount && Date.now() < until)
          await sleep(20);
        await sleep(500); // a duplicate, if any, has time to show
        await deleteEndpoint(database.db, tenant.id, endpoint.id);
        runs.push({ round, kind, ...r, ...checkDeliveries(tag, r.answered, record) });
      }
    }
    return summarize(name, amount, runs);
  } finally {
    await stopChild(server.child);
    children.delete(server.child);
    await database.close();
  }
}

/**
 * Exactly one user.created per signed-up user, each with a valid signature, no other event,
 * no webhook-id twice; else the benchmark fails. Returns the lags of the run.
 */
function checkDeliveries(tag, answered, record) {
  const problems = [];
  if (record.bad.length)
    problems.push(`${record.bad.length} failed verification: ${record.bad[0]}`);
  const ids = new Set();
  const users = new Map();
  for (const d of record.got) {
    if (ids.has(d.id)) problems.push(`webhook-id ${d.id} delivered twice`);
    ids.add(d.id);
    if (d.type !== 'user.created') problems.push(`unexpected event ${d.type}`);
    else if (!answered.has(d.userId)) problems.push(`user.created for unknown user ${d.userId}`);
    else users.set(d.userId, (users.get(d.userId) ?? 0) + 1);
  }
  for (const id of answered.keys()) {
    const n = users.get(id) ?? 0;
    if (n !== 1) problems.push(`user ${id}: ${n} user.created delivered`);
  }
  if (problems.length)
    throw new Error(
      `run ${tag}: ${answered.size} sign-ups, ${record.got.length} deliveries; ${problems.length} problems:\n  ${problems.slice(0, 10).join('\n  ')}`,
    );
  return {
    deliveries: record.got.length,
    // From the sign-up's answer (after the commit) and from the event's own timestamp
    // (written in the transaction, just before the commit).
    lagsMs: record.got.map((d) => d.arrival - answered.get(d.userId)),
    lagsFromTimestampMs: record.got.map((d) => d.arrival - d.timestamp),
  };
}

function summarize(name, amount, runs) {
  const of = (kind) => runs.filter((r) => r.kind === kind);
  const pooled = (rs) => (rs.length * amount) / rs.reduce((a, r) => a + r.seconds, 0);
  const none = pooled(of('none'));
  const one = pooled(of('one'));
  const roundRatios = [];
  for (let round = 0; round < ROUNDS; round++) {
    const a = runs.find((r) => r.round === round && r.kind === 'none');
    const b = runs.find((r) => r.round === round && r.kind === 'one');
    roundRatios.push(b.perSecond / a.perSecond);
  }
  const avg = (rs, field) => rs.reduce((a, r) => a + r[field], 0) / rs.length;
  const cpu = (rs) => avg(rs, 'serverCpuMsPerSignUp');
  const lags = of('one')
    .flatMap((r) => r.lagsMs)
    .sort((a, b) => a - b);
  const lagsTs = of('one')
    .flatMap((r) => r.lagsFromTimestampMs)
    .sort((a, b) => a - b);
  const r1 = (n) => Math.round(n * 10) / 10;
  return {
    database: name,
    signUpsPerRun: amount,
    rounds: ROUNDS,
    connections: CONNECTIONS,
    signUpsPerSecondNoEndpoint: r1(none),
    signUpsPerSecondOneEndpoint: r1(one),
    // Unrounded: the outbox cost's verdict is judged on it.
    ratio: one / none,
    outboxCostPercent: r1((1 - one / none) * 100),
    roundRatios: roundRatios.map((r) => Number(r.toFixed(4))),
    medianRoundCostPercent: r1((1 - median(roundRatios)) * 100),
    serverCpuMsPerSignUp: { none: r1(cpu(of('none'))), one: r1(cpu(of('one'))) },
    serverCpuCostPercent: r1((cpu(of('one')) / cpu(of('none')) - 1) * 100),
    serverMainThreadMsPerSignUp: {
      none: r1(avg(of('none'), 'serverMainThreadMsPerSignUp')),
      one: r1(avg(of('one'), 'serverMainThreadMsPerSignUp')),
    },
    serverLibuvMsPerSignUp: {
      none: r1(avg(of('none'), 'serverLibuvMsPerSignUp')),
      one: r1(avg(of('one'), 'serverLibuvMsPerSignUp')),
    },
    deliveries: of('one').reduce((a, r) => a + r.deliveries, 0),
    // p99 unrounded: its verdict is judged on it.
    lagMs: { p50: r1(percentile(lags, 50)), p99: percentile(lags, 99), max: r1(lags.at(-1)) },
    lagFromEventTimestampMs: {
      p50: r1(percentile(lagsTs, 50)),
      p99: r1(percentile(lagsTs, 99)),
      max: r1(lagsTs.at(-1)),
    },
    otherProcessesPercentOfOneCore: Math.max(...runs.map((r) => r.otherProcessesPercent)),
    runs: runs.map((r) => ({
      round: r.round,
      endpoint: r.kind,
      signUpsPerSecond: r1(r.perSecond),
      serverCpuMsPerSignUp: r1(r.serverCpuMsPerSignUp),
      serverMainThreadMsPerSignUp: r1(r.serverMainThreadMsPerSignUp),
      serverLibuvMsPerSignUp: r1(r.serverLibuvMsPerSignUp),
      otherProcessesPercentOfOneCore: r.otherProcessesPercent,
    })),
  };
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

const receiver = await startReceiver();
const report = {
  date: new Date().toISOString(),
  machine: { cpu: os.cpus()[0]?.model, cores: CORES, node: process.version, pinned: PINNED },
  goals: { outboxCostPercent: GOAL_COST_PERCENT, lagP99Ms: GOAL_LAG_P99_MS },
  scenarios: [],
};
try {
  report.scenarios.push(await scenario('sqlite', `sqlite:${join(tmp, 'bench.db')}`, receiver));
  const schema = await postgresSchema();
  if (schema) {
    try {
      report.scenarios.push(await scenario('postgres', schema.url, receiver));
    } finally {
      await schema.drop();
    }
  } else console.log('notice: PostgreSQL not reachable; SQLite only');

  console.log(
    `\nWebhooks: sign-ups with no endpoint against one endpoint taking every event (healthy receiver on loopback); server on one core, ${CONNECTIONS} connections, ${ROUNDS} rounds`,
  );
  let failed = false;
  const verdict = (ok) => {
    if (!ok) failed = true;
    return ok ? 'PASS' : 'FAIL';
  };
  for (const s of report.scenarios) {
    const k = `webhooks_${s.database}`;
    console.log(
      `\n${s.database}: ${s.signUpsPerRun} sign-ups a run; no endpoint ${s.signUpsPerSecondNoEndpoint}/s, one endpoint ${s.signUpsPerSecondOneEndpoint}/s; round ratios ${s.roundRatios.join(', ')}; server CPU per sign-up ${s.serverCpuMsPerSignUp.none} / ${s.serverCpuMsPerSignUp.one} ms (main thread ${s.serverMainThreadMsPerSignUp.none} / ${s.serverMainThreadMsPerSignUp.one}, libuv pool ${s.serverLibuvMsPerSignUp.none} / ${s.serverLibuvMsPerSignUp.one}); ${s.deliveries} deliveries checked`,
    );
    const cost = (1 - s.ratio) * 100;
    console.log(
      `${k}_outbox_cost=${shownBelow(cost, GOAL_COST_PERCENT, 1)} % (goal < ${GOAL_COST_PERCENT} %) ${verdict(cost < GOAL_COST_PERCENT)}`,
    );
    console.log(`${k}_server_cpu_cost=${s.serverCpuCostPercent} % per sign-up`);
    console.log(
      `${k}_lag_p99_ms=${shownBelow(s.lagMs.p99, GOAL_LAG_P99_MS, 1)} (p50 ${s.lagMs.p50}, max ${s.lagMs.max}; from the event's timestamp: p50 ${s.lagFromEventTimestampMs.p50}, p99 ${s.lagFromEventTimestampMs.p99}) (goal < ${GOAL_LAG_P99_MS}) ${verdict(s.lagMs.p99 < GOAL_LAG_P99_MS)}`,
    );
    if (s.otherProcessesPercentOfOneCore > NOISE_LIMIT)
      console.log(
        `WARNING: other processes used up to ${s.otherProcessesPercentOfOneCore} % of a core during a run: the throughput figures are unreliable; re-run on a quiet machine (the CPU per sign-up is less affected)`,
      );
  }
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nwritten to ${RESULTS}`);
  if (failed) process.exitCode = 1;
} catch (error) {
  console.error(`bench failed: ${error.stack ?? error}`);
  process.exitCode = 1;
} finally {
  await Promise.all([...children].map(stopChild));
  receiver.server.close();
  receiver.server.closeAllConnections();
  rmSync(tmp, { recursive: true, force: true });
}
