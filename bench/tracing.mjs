// What OpenTelemetry tracing costs (docs/design.md §7.1): warm introspection and idle memory
// of this build with tracing off, beside the same sources built with no tracing code at all
// (src/tracing/tracing.ts swapped for a module whose functions only run what they wrap),
// run in turns in the same run on the same core; the build from the last commit before
// tracing existed (BENCH_TRACING_BASE, c5c1598) for reference; and this build with tracing
// on, sending every span to an OTLP/HTTP receiver.
// Run with `npm run bench` (or `node bench/tracing.mjs` after `npm run build`).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { shownAtLeast, shownBelow } from './lib.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SERVER = join(ROOT, 'packages/server');
const OUT = join(ROOT, 'bench/results');
const HEAD = join(OUT, 'tracing-head/latchkey.mjs');
const BASE = join(OUT, 'tracing-base/latchkey.mjs');
const NONE = join(OUT, 'tracing-none/latchkey.mjs');
const BASE_COMMIT = process.env.BENCH_TRACING_BASE ?? 'c5c1598';
const require = createRequire(join(SERVER, 'package.json'));
const autocannon = require('autocannon');

const CONNECTIONS = 10;
const WARMUP_S = 3;
const LOAD_S = Number(process.env.BENCH_LOAD_S ?? 3);
/**
 * No tracing code and tracing off, the pair the verdict judges, run side by side: both
 * servers up at once, the load moved from one to the other every SLICE_S seconds, SLICES
 * each a round, so that the machine's slower and faster stretches fall on both alike.
 */
const SLICE_S = 1;
const SLICES = Number(process.env.BENCH_SLICES ?? 2);
/**
 * Calibration: the judged pair is the no-tracing bundle against itself. Each server started
 * is its own sample (the same bundle started twice differs by several per cent, from one
 * start to the next), and this shows how far apart two identical servers' rounds fall.
 */
const SAME = process.env.BENCH_TRACING_SAME === '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
/** Tracing on and the build before tracing, references only: in the first rounds. */
const REFERENCE_ROUNDS = Math.min(ROUNDS, 3);
const TOKENS = 200;
const SECRET = randomBytes(32).toString('base64url');
const children = new Set();
const tmp = mkdtempSync(join(os.tmpdir(), 'latchkey-bench-tracing-'));
/** Server on CPU 0, the load generator (this process) on CPU 1, when the machine allows. */
const CORES = os.availableParallelism();
const PIN = CORES >= 2 && spawnSync('taskset', ['-V']).status === 0;

/**
 * Both servers bundled the same way from their TypeScript sources, with this build's
 * esbuild options (packages/server/build.mjs) and compiler settings, so that the code is
 * the only difference: this tree's packages/server/src, and the same folder at
 * BASE_COMMIT. The bundles are written under bench/results/, inside the repository, so
 * that their createRequire finds node_modules as the real bundle's does.
 */
const NO_TRACING = `
export type TracingSettings = unknown;
export const tracer = undefined;
export function startTracing(_settings: unknown): void {}
export async function stopTracing(): Promise<void> {}
export function traceRequest(_request: unknown, _response: unknown, handle: () => void): void {
  handle();
}
export function setRoute(_response: unknown, _route: unknown): void {}
export function childSpan(_name: string, _attributes?: unknown, _kind?: unknown): undefined {
  return undefined;
}
export function failSpan(_span: unknown, _error: unknown): void {}
export function traced<T>(_name: string, _attributes: unknown, task: () => Promise<T>): Promise<T> {
  return task();
}
export function tracedSync<T>(_name: string, _attributes: unknown, task: () => T): T {
  return task();
}
export function querySpans(_system: string) {
  return (_event: unknown) => {};
}
`;

async function buildAll() {
  const src = join(tmp, 'base');
  mkdirSync(src, { recursive: true });
  const archive = execFileSync('git', ['archive', BASE_COMMIT, 'packages/server/src'], {
    cwd: ROOT,
    maxBuffer: 64 << 20,
  });
  execFileSync('tar', ['-x', '-C', src], { input: archive });
  // This tree's sources with no tracing: every hook the plain call it wraps.
  const none = join(tmp, 'none');
  cpSync(join(SERVER, 'src'), join(none, 'src'), { recursive: true });
  writeFileSync(join(none, 'src/tracing/tracing.ts'), NO_TRACING);
  const { build } = createRequire(join(SERVER, 'build.mjs'))('esbuild');
  const { bundle } = await import(join(SERVER, 'build.mjs'));
  for (const [entry, outfile] of [
    [join(src, 'packages/server/src/main.ts'), BASE],
    [join(SERVER, 'src/main.ts'), HEAD],
    [join(none, 'src/main.ts'), NONE],
  ])
    await build({
      ...bundle,
      entryPoints: [entry],
      outfile,
      absWorkingDir: SERVER,
      tsconfig: join(SERVER, 'tsconfig.build.json'),
      nodePaths: [join(ROOT, 'node_modules')],
      legalComments: 'none',
      sourcemap: false,
    });
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitFor(url) {
  for (let i = 0; i < 150; i++) {
    try {
      if ((await fetch(url)).status < 500) return;
    } catch {}
    await sleep(100);
  }
  throw new Error(`${url} did not come up`);
}

/** The process's CPU time so far (every thread, user and system), in microseconds. */
function cpuUs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime, fields 14 and 15 of proc(5), in clock ticks (USER_HZ, 100 on Linux).
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

function rssMb(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
  return line ? Number(line[1]) / 1024 : Number.NaN;
}

/** A server on the shared database; resolves once it answers and has settled. */
async function serve(main, env) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const node = [process.execPath, '--max-semi-space-size=4', main, 'serve'];
  const [cmd, ...args] = PIN ? ['taskset', '-c', '0', ...node] : node;
  const child = spawn(cmd, args, {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(child);
  await waitFor(`${url}/healthz`);
  await sleep(1000);
  return {
    url,
    idleRss: rssMb(child.pid),
    cpuUs: () => cpuUs(child.pid),
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      children.delete(child);
    },
  };
}

function cycle(url, bodies, headers, duration) {
  const { origin, pathname } = new URL(url);
  const requests = bodies.map((body) => ({ method: 'POST', path: pathname, headers, body }));
  return autocannon({ url: origin, connections: CONNECTIONS, duration, requests });
}

/** An OTLP/HTTP receiver that takes every export and counts them. */
async function receiver() {
  let exports = 0;
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on('data', (chunk) => {
      bytes += chunk.length;
    });
    request.on('end', () => {
      exports++;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    counts: () => ({ exports, bytes }),
    close: () => new Promise((r) => server.close(r)),
  };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  const timer = setTimeout(() => {
    console.error('bench: over time, stopping');
    cleanup();
    process.exit(1);
  }, 600_000);
  timer.unref();
  if (PIN) execFileSync('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });
  await buildAll();
  const env = {
    DATABASE_URL: `sqlite:${join(tmp, 'bench.db')}`,
    LATCHKEY_SECRET: SECRET,
    LOG_LEVEL: 'warn',
    // One issuer for every server, whatever its port: each accepts the tokens of the first.
    PUBLIC_URL: 'http://127.0.0.1:8788',
  };
  const created = JSON.parse(
    execFileSync(
      process.execPath,
      [
        HEAD,
        'tenant',
        'create',
        '--name',
        'Bench',
        '--plan',
        'enterprise',
        '--rps',
        '1000000',
        '--rpm',
        '60000000',
        '--json',
      ],
      { env: { ...process.env, ...env } },
    ).toString(),
  );
  const headers = {
    authorization: `Bearer ${created.secretKey}`,
    'content-type': 'application/json',
  };
  const sink = await receiver();
  const variants = {
    none: { main: NONE, env },
    base: { main: BASE, env },
    off: { main: SAME ? NONE : HEAD, env },
    on: {
      main: HEAD,
      env: { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_BSP_MAX_QUEUE_SIZE: '65536' },
    },
  };

  // Tokens for everyone: signed in through this build (the database and secret are shared).
  const first = await serve(HEAD, env);
  const post = (path, body) =>
    fetch(first.url + path, { method: 'POST', headers, body: JSON.stringify(body) }).then((r) =>
      r.json(),
    );
  const tokens = [];
  await Promise.all(
    Array.from({ length: 4 }, async (_, worker) => {
      for (let i = worker; i < TOKENS; i += 4) {
        const credentials = {
          email: `bench-${i}@example.com`,
          password: 'correct horse battery staple',
        };
        await post('/v1/auth/sign-up', credentials);
        tokens.push((await post('/v1/auth/sign-in', credentials)).accessToken);
      }
    }),
  );
  await first.stop();
  // Each variant on its own copy of the database: on SQLite a write by one server (a key's
  // last use, once a second) makes every other server on the file drop its caches.
  for (const [name, v] of Object.entries(variants)) {
    const file = join(tmp, `${name}.db`);
    for (const suffix of ['', '-wal', '-shm'])
      if (existsSync(join(tmp, `bench.db${suffix}`)))
        cpSync(join(tmp, `bench.db${suffix}`), `${file}${suffix}`);
    v.env = { ...v.env, DATABASE_URL: `sqlite:${file}` };
  }
  const bodies = tokens.map((token) => JSON.stringify({ token }));

  const results = { none: [], base: [], off: [], on: [] };
  const idle = { none: [], base: [], off: [], on: [] };
  /** The server's CPU time per request (µs) during each round's load. */
  const cpu = { none: [], base: [], off: [], on: [] };
  /** Loads `server` for `seconds`: its requests and its CPU time during them. */
  async function load(server, seconds) {
    const url = `${server.url}/api/auth/introspect`;
    const before = server.cpuUs();
    const r = await cycle(url, bodies, headers, seconds);
    const cpuSpent = server.cpuUs() - before;
    if (r.non2xx || r.errors) throw new Error(`${r.non2xx} non-2xx, ${r.errors} errors`);
    return { requests: r.requests.total, seconds: r.duration, cpu: cpuSpent };
  }
  async function started(name) {
    const v = variants[name];
    const server = await serve(v.main, v.env);
    idle[name].push(server.idleRss);
    const check = await fetch(`${server.url}/api/auth/introspect`, {
      method: 'POST',
      headers,
      body: bodies[0],
    }).then((r) => r.json());
    if (!check.active) throw new Error(`${name}: token not active`);
    await cycle(`${server.url}/api/auth/introspect`, bodies, headers, WARMUP_S);
    return server;
  }
  const record = (name, runs) => {
    const requests = runs.reduce((s, r) => s + r.requests, 0);
    results[name].push(requests / runs.reduce((s, r) => s + r.seconds, 0));
    cpu[name].push(runs.reduce((s, r) => s + r.cpu, 0) / requests);
  };

  for (let round = 0; round < ROUNDS; round++) {
    // The judged pair, side by side, the first slice alternating between rounds.
    const pair = round % 2 ? ['off', 'none'] : ['none', 'off'];
    const servers = {};
    for (const name of pair) servers[name] = await started(name);
    const runs = { none: [], off: [] };
    for (let slice = 0; slice < SLICES; slice++)
      for (const name of slice % 2 ? [...pair].reverse() : pair)
        runs[name].push(await load(servers[name], SLICE_S));
    for (const name of pair) {
      record(name, runs[name]);
      await servers[name].stop();
    }
    // The references, one after the other.
    if (round >= REFERENCE_ROUNDS) continue;
    for (const name of round % 2 ? ['base', 'on'] : ['on', 'base']) {
      const server = await started(name);
      record(name, [await load(server, LOAD_S)]);
      await server.stop();
    }
  }
  const sent = sink.counts();
  await sink.close();
  clearTimeout(timer);

  const rps = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)]));
  const rss = Object.fromEntries(Object.entries(idle).map(([k, v]) => [k, median(v)]));
  // Each started server is one sample, and one start of a bundle differs from the next by
  // up to 10 % (BENCH_TRACING_SAME=1 shows it): a round's ratio is as noisy as two samples.
  // So the judged ratios are of the variants' medians over all rounds, in throughput and in
  // server CPU per request (none's over off's: below 1 when off costs more); the rounds'
  // own ratios are printed beside them.
  const cpuMedian = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, median(v)]));
  const offRatio = rps.off / rps.none;
  const offCpuRatio = cpuMedian.none / cpuMedian.off;
  const offRounds = results.off.map((off, i) => off / results.none[i]);
  const offCpuRounds = cpu.off.map((off, i) => cpu.none[i] / off);
  const onRatio = rps.on / rps.off;
  console.log(
    `\nTracing, warm introspection on SQLite, ${TOKENS} tokens cycled, ${CONNECTIONS} connections, ${ROUNDS} rounds (the judged pair side by side, ${SLICES} slices of ${SLICE_S} s each; the references in ${REFERENCE_ROUNDS} rounds, ${LOAD_S} s each), medians (${PIN ? 'server on CPU 0, load on CPU 1' : 'not pinned'}; ${CORES} cores, node ${process.version})`,
  );
  const labels = {
    none: 'this build, no tracing code',
    base: `before tracing (${BASE_COMMIT})`,
    off: 'this build, tracing off',
    on: 'this build, tracing on',
  };
  for (const name of ['none', 'off', 'on', 'base'])
    console.log(
      `  ${labels[name].padEnd(32)} ${rps[name].toFixed(0).padStart(6)} req/s  [${results[name].map((x) => x.toFixed(0)).join(', ')}]  server CPU ${cpuMedian[name].toFixed(1)} us/request [${cpu[name].map((x) => x.toFixed(1)).join(', ')}]  idle RSS ${rss[name].toFixed(1)} MB`,
    );
  console.log(
    `  spans received while on: ${sent.exports} exports, ${(sent.bytes / 1e6).toFixed(1)} MB`,
  );
  console.log(
    `tracing_off/none=${offRatio.toFixed(2)} (each round's pair: ${offRounds.map((x) => x.toFixed(2)).join(', ')}) in CPU per request ${offCpuRatio.toFixed(2)} (each round's pair: ${offCpuRounds.map((x) => x.toFixed(2)).join(', ')}) idle_rss_off-none_mb=${(rss.off - rss.none).toFixed(1)}`,
  );
  console.log(
    `tracing_on/off=${onRatio.toFixed(2)} idle_rss_on-off_mb=${(rss.on - rss.off).toFixed(1)}`,
  );
  console.log(
    `tracing_off/base=${(rps.off / rps.base).toFixed(2)} (the build before tracing, ${BASE_COMMIT}: every change since, not tracing alone; reported)`,
  );
  // What tracing off costs is the server's CPU per request: met when its ratio of medians
  // is at least 0.97 (and the memory within 2 MB). The throughput also moves with the load
  // generator, which runs near its own limit here, so it cannot fail the goal alone: when
  // the CPU ratio is under and the throughput's is not, only a quieter run can tell.
  const memory = rss.off - rss.none < 2;
  const verdict =
    offCpuRatio >= 0.97 && memory
      ? 'MET'
      : offRatio < 0.97 || !memory
        ? 'NOT MET'
        : `INCONCLUSIVE (CPU ${shownAtLeast(offCpuRatio, 0.97)}, throughput ${shownAtLeast(offRatio, 0.97)}, load average ${os.loadavg()[0].toFixed(1)}: rerun on a quiet machine)`;
  console.log(
    `verdict tracing off costs nothing${SAME ? ' (CALIBRATION: the same bundle on both sides)' : ''}: ${verdict} (warm introspection with tracing off over the same build with no tracing code, medians of ${ROUNDS} servers each, >= 0.97 asked: server CPU per request ${shownAtLeast(offCpuRatio, 0.97)} (${cpuMedian.off.toFixed(1)} vs ${cpuMedian.none.toFixed(1)} us), throughput ${shownAtLeast(offRatio, 0.97)} (${rps.off.toFixed(0)} vs ${rps.none.toFixed(0)} req/s); idle RSS ${shownBelow(rss.off - rss.none, 2, 1)} MB more, goal < 2 MB)`,
  );
  mkdirSync(OUT, { recursive: true });
  writeFileSync(
    join(OUT, 'tracing.json'),
    `${JSON.stringify({ date: new Date().toISOString(), base: BASE_COMMIT, pinned: PIN, loadavg: os.loadavg(), results, cpu, idle, sent }, null, 2)}\n`,
  );
}

function cleanup() {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(cleanup);
