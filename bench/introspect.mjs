// Introspection throughput: POST /api/auth/introspect on the real server, beside a bare
// node:http JSON endpoint measured in the same round on the same core (the ratio is what
// to compare across machines; the median of the rounds' ratios is judged), and its exact
// p99.9 latency at half of that peak beside the bare endpoint's at the same rate. Runs on SQLite,
// and on PostgreSQL + Redis (one instance) when reachable. Then cold introspection (every
// token new, so every one costs an RS256 verification) beside the ceiling of any server that
// verifies: the bare endpoint plus one node:crypto RS256 verify, driven the same way.
// Run with `npm run bench` (or `node bench/introspect.mjs` after `npm run build`).
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { median, pinLoadToCpu1, shownAtLeast, shownBelow } from './lib.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(ROOT, 'packages/server/dist/latchkey.mjs');
const RESULTS = join(ROOT, 'bench/results/introspect.json');
const require = createRequire(join(ROOT, 'packages/server/package.json'));
const autocannon = require('autocannon');
const pg = require('pg');

const CONNECTIONS = 10;
const WARMUP_S = 2;
const LOAD_S = 8;
/** Users signed in; their tokens are cycled (each connection walks through all of them). */
const TOKENS = 200;
/**
 * New tokens per cold run, minted by refresh chains on the first COLD_CHAINS sessions: about
 * two seconds of load, as the performance bar's 20,000 (10,000 until 2026-11-29: one second a
 * round, whose rounds spread from 0.70 to 1.02 in one run).
 */
const COLD = 20_000;
const COLD_CHAINS = 50;
/**
 * Rounds, each measuring the bare endpoint and Latchkey one after the other: every figure is
 * the median of its rounds' ratios (a noisy machine moves both of one round alike).
 */
const ROUNDS = Number(process.env.BENCH_INTROSPECT_ROUNDS ?? 3);
const PG_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECRET = randomBytes(32).toString('base64url');
/** The goal of issue 31: exact p99.9 at half of the warm peak, in ms. */
const P999_GOAL_MS = 5;
// Servers on CPU 0, this process (the load generator) on CPU 1, as the goals are set.
const PINNED = pinLoadToCpu1();
const children = new Set();
const tmp = mkdtempSync(join(os.tmpdir(), 'latchkey-bench-introspect-'));

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * The baseline: a bare node:http server that reads a JSON body and answers JSON. Given a
 * public key (env JWK), it is the cold ceiling: the same work plus one RS256 verification
 * of the token with that key (a KeyObject made once), and nothing else. No server that
 * checks every new token's signature can answer faster than that.
 */
const BASELINE = `
const http = require('node:http');
const crypto = require('node:crypto');
const answer = (active) => JSON.stringify({ active, sub: '6f0c2c4e-1111-4222-8333-444455556666', email: 'ada@example.com',
  tid: '6f0c2c4e-1111-4222-8333-444455556666', sid: '6f0c2c4e-1111-4222-8333-444455556666', roles: [],
  scope: 'openid email profile', exp: 1, iat: 1, iss: 'http://127.0.0.1/t/x', jti: 'x', token_type: 'Bearer' });
const [yes, no] = [answer(true), answer(false)];
const key = process.env.JWK && crypto.createPublicKey({ key: JSON.parse(process.env.JWK), format: 'jwk' });
const verified = (token) => {
  const dot = token.lastIndexOf('.');
  return crypto.verify('sha256', Buffer.from(token.slice(0, dot)), key, Buffer.from(token.slice(dot + 1), 'base64url'));
};
http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    const { token } = JSON.parse(body);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(!key || verified(token) ? yes : no);
  });
}).listen(Number(process.env.PORT), '127.0.0.1');`;

async function waitFor(url) {
  for (let i = 0; i < 150; i++) {
    try {
      if ((await fetch(url)).status < 500) return;
    } catch {}
    await sleep(100);
  }
  throw new Error(`${url} did not come up`);
}

function start(args, env) {
  const [command, ...rest] = PINNED
    ? ['taskset', '-c', '0', process.execPath, ...args]
    : [process.execPath, ...args];
  const child = spawn(command, rest, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(child);
  return child;
}

/** One prebuilt request per token body, cycled: no per-request work in the load generator. */
function cycle(url, bodies, headers, duration, extra = {}) {
  const { origin, pathname } = new URL(url);
  const requests = bodies.map((body) => ({ method: 'POST', path: pathname, headers, body }));
  return autocannon({ url: origin, connections: CONNECTIONS, duration, requests, ...extra });
}

/**
 * The requests at a fixed rate, with every answer's own time (float ms, as the performance
 * bar's driver takes them: no coordinated-omission correction): exact percentiles.
 */
async function atRate(url, bodies, headers, rate) {
  const times = [];
  const instance = cycle(url, bodies, headers, LOAD_S, { overallRate: rate });
  instance.on('response', (_client, status, _bytes, ms) => {
    if (status >= 200 && status < 300) times.push(ms);
  });
  const r = await instance;
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? Number.NaN;
  return { p99: at(0.99), p999: at(0.999), non2xx: r.non2xx, errors: r.errors };
}

/** Runs `measure` against the bare endpoint (with `env`), started for it and stopped after. */
async function withBare(env, measure) {
  const port = await freePort();
  const child = start(['-e', BASELINE], { PORT: String(port), ...env });
  await sleep(300);
  try {
    return await measure(`http://127.0.0.1:${port}/`);
  } finally {
    child.kill();
  }
}

/**
 * Each body sent once (the load generator hands out the next one per request), as a stream
 * of new tokens arrives; req/s counts up to the last answer. autocannon also builds one
 * request per connection when it starts, so there are a few more bodies than requests.
 * Every answer must be a 200 with `"active":true`, else the figure would reward a fast
 * refusal.
 */
async function once(url, bodies, headers, amount) {
  const { origin, pathname } = new URL(url);
  let next = 0;
  let inactive = 0;
  let last = 0;
  const started = performance.now();
  const instance = autocannon({
    url: origin,
    connections: CONNECTIONS,
    amount,
    requests: [
      {
        method: 'POST',
        path: pathname,
        headers,
        setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length] }),
        onResponse: (status, body) => {
          if (status !== 200 || !body.includes('"active":true')) inactive++;
        },
      },
    ],
  });
  instance.on('response', () => {
    last = performance.now();
  });
  const r = await instance;
  if (inactive) throw new Error(`${inactive} cold answers were not 200 and active`);
  return { rps: (r.requests.total / (last - started)) * 1000, total: r.requests.total };
}

/** New access tokens by refreshing each session's refresh token in turn. */
async function mint(post, refreshTokens, count) {
  const out = [];
  await Promise.all(
    refreshTokens.map(async (first) => {
      let refreshToken = first;
      while (out.length < count) {
        const r = await post('/v1/auth/token', { refreshToken });
        if (!r.accessToken) throw new Error(`refresh failed: ${JSON.stringify(r)}`);
        out.push(r.accessToken);
        refreshToken = r.refreshToken;
      }
    }),
  );
  return out.slice(0, count);
}

async function scenario(name, env) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const full = {
    ...env,
    LATCHKEY_SECRET: SECRET,
    LOG_LEVEL: 'warn',
    PORT: String(port),
    PUBLIC_URL: url,
  };
  const cli = (...args) =>
    execFileSync(process.execPath, [MAIN, ...args], {
      env: { ...process.env, ...full },
    }).toString();
  if (!env.DATABASE_URL.startsWith('sqlite:')) cli('migrate');
  const created = JSON.parse(
    cli(
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
    ),
  );
  const server = start(['--max-semi-space-size=4', MAIN, 'serve'], full);
  await waitFor(`${url}/healthz`);
  const headers = {
    authorization: `Bearer ${created.secretKey}`,
    'content-type': 'application/json',
  };
  const post = (path, body) =>
    fetch(url + path, { method: 'POST', headers, body: JSON.stringify(body) }).then((r) =>
      r.json(),
    );
  const tokens = [];
  const refreshTokens = [];
  const password = 'correct horse battery staple';
  await Promise.all(
    Array.from({ length: 4 }, async (_, worker) => {
      for (let i = worker; i < TOKENS; i += 4) {
        const email = `bench-${i}@example.com`;
        await post('/v1/auth/sign-up', { email, password });
        const signedIn = await post('/v1/auth/sign-in', { email, password });
        tokens.push(signedIn.accessToken);
        if (refreshTokens.length < COLD_CHAINS) refreshTokens.push(signedIn.refreshToken);
      }
    }),
  );
  for (const token of tokens.slice(0, 3))
    if (!(await post('/api/auth/introspect', { token })).active)
      throw new Error('token not active');
  const warm = tokens.map((token) => JSON.stringify({ token }));
  const introspectUrl = `${url}/api/auth/introspect`;
  // The bare endpoint reads token-sized bodies, as many, with the same headers.
  const bareBodies = warm.map((_, i) => JSON.stringify({ token: `${i}`.padEnd(900, 'x') }));
  const warmRounds = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const bare = await withBare({}, async (bareUrl) => {
      await cycle(bareUrl, bareBodies, headers, WARMUP_S);
      return (await cycle(bareUrl, bareBodies, headers, LOAD_S)).requests.average;
    });
    await cycle(introspectUrl, warm, headers, WARMUP_S);
    const peak = await cycle(introspectUrl, warm, headers, LOAD_S);
    // The same requests at half of that peak: latency when not saturated; and its floor,
    // the bare endpoint at the same rate. No node:http server answers faster than that.
    const halfRate = Math.max(1, Math.round(peak.requests.average / 2));
    const half = await atRate(introspectUrl, warm, headers, halfRate);
    const bareHalf = await withBare({}, async (bareUrl) => {
      await cycle(bareUrl, bareBodies, headers, WARMUP_S);
      return atRate(bareUrl, bareBodies, headers, halfRate);
    });
    const r = {
      bare,
      rps: peak.requests.average,
      halfRate,
      halfP99: half.p99,
      halfP999: half.p999,
      bareHalfP999: bareHalf.p999,
      faults: peak.non2xx + peak.errors + half.non2xx + half.errors,
    };
    warmRounds.push(r);
    console.log(
      `  ${name} round ${round}: warm ${r.rps.toFixed(0)} req/s, bare ${bare.toFixed(0)} (${(r.rps / bare).toFixed(2)}); at ${halfRate} req/s p99.9 ${r.halfP999.toFixed(2)} ms, bare ${r.bareHalfP999.toFixed(2)} ms`,
    );
  }
  if (warmRounds.some((r) => r.faults > 0)) throw new Error('warm answers that were not 200');
  if (!(await post('/api/auth/introspect', { token: tokens[0] })).active)
    throw new Error('token not active after the load');

  // Cold: each round new tokens, never seen by Latchkey, once each; beside them the ceiling
  // (warmed as Latchkey was, by the warm tokens, every one verified there each time).
  const minted = await mint(post, refreshTokens, ROUNDS * (COLD + 2 * CONNECTIONS));
  const { kid } = JSON.parse(Buffer.from(tokens[0].split('.')[0], 'base64url').toString());
  const jwks = await (await fetch(`${url}/t/${created.tenant.id}/.well-known/jwks.json`)).json();
  const jwk = jwks.keys?.find((k) => k.kid === kid);
  if (!jwk) throw new Error(`the tenant's JWKS has no key ${kid}`);
  const coldRounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const size = COLD + 2 * CONNECTIONS;
    const cold = minted
      .slice(round * size, (round + 1) * size)
      .map((token) => JSON.stringify({ token }));
    const ceiling = await withBare({ JWK: JSON.stringify(jwk) }, async (ceilingUrl) => {
      await cycle(ceilingUrl, warm, headers, WARMUP_S);
      return (await once(ceilingUrl, cold, headers, COLD)).rps;
    });
    const rps = (await once(introspectUrl, cold, headers, COLD)).rps;
    coldRounds.push({ rps, ceiling });
    console.log(
      `  ${name} round ${round + 1}: cold ${rps.toFixed(0)} req/s, ceiling ${ceiling.toFixed(0)} (${(rps / ceiling).toFixed(2)})`,
    );
  }

  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  return {
    name,
    warmRounds,
    coldRounds,
    rps: median(warmRounds.map((r) => r.rps)),
    bare: median(warmRounds.map((r) => r.bare)),
    warmRatio: median(warmRounds.map((r) => r.rps / r.bare)),
    halfRate: median(warmRounds.map((r) => r.halfRate)),
    halfP99: median(warmRounds.map((r) => r.halfP99)),
    halfP999: median(warmRounds.map((r) => r.halfP999)),
    bareHalfP999: median(warmRounds.map((r) => r.bareHalfP999)),
    cold: median(coldRounds.map((r) => r.rps)),
    bareVerify: median(coldRounds.map((r) => r.ceiling)),
    coldRatio: median(coldRounds.map((r) => r.rps / r.ceiling)),
  };
}

async function reachable(check) {
  try {
    await check();
    return true;
  } catch {
    return false;
  }
}

async function main() {
  const timer = setTimeout(() => {
    console.error('bench: over time, stopping');
    cleanup();
    process.exit(1);
  }, 900_000);
  timer.unref();
  const scenarios = [await scenario('sqlite', { DATABASE_URL: `sqlite:${join(tmp, 'bench.db')}` })];
  const pgOk = await reachable(async () => {
    const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
    await c.connect();
    await c.end();
  });
  if (pgOk) {
    const schema = `lk_bench_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    const u = new URL(PG_URL);
    u.searchParams.set('options', `-c search_path=${schema}`);
    try {
      scenarios.push(await scenario('postgres + redis', { DATABASE_URL: u.toString(), REDIS_URL }));
    } finally {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    }
  } else {
    console.log('notice: PostgreSQL not reachable; only the SQLite scenario runs');
  }
  clearTimeout(timer);

  console.log(
    `\nIntrospection, ${TOKENS} tokens cycled, ${CONNECTIONS} connections, ${LOAD_S} s each (${PINNED ? 'server on CPU 0, load on CPU 1' : 'not pinned'}, node ${process.version})`,
  );
  for (const s of scenarios) {
    console.log(
      `  /api/auth/introspect on ${s.name.padEnd(17)} warm ${s.rps.toFixed(0)} req/s (bare node:http ${s.bare.toFixed(0)}), cold ${s.cold.toFixed(0)} req/s (ceiling ${s.bareVerify.toFixed(0)}), medians of ${ROUNDS} rounds`,
    );
  }
  // Issue 31's goals; the performance bar of ../shared/bench/latchkey judges them too.
  const ok = (met) => (met ? 'PASS' : 'FAIL');
  for (const s of scenarios) {
    const key = s.name.replace(/\W+/g, '_');
    const warm = s.warmRatio;
    const cold = s.coldRatio;
    console.log(
      `introspect_${key}_warm/bare=${shownAtLeast(warm, 0.7)} (goal >= 0.70) ${ok(warm >= 0.7)}`,
    );
    // Where even the bare endpoint misses the goal at that rate, no server can meet it on
    // this machine: then within 1 ms of the bare endpoint's own p99.9 is the goal proposed.
    const p999 = s.halfP999;
    const floor = s.bareHalfP999;
    const verdict =
      p999 < P999_GOAL_MS
        ? 'PASS'
        : floor >= P999_GOAL_MS
          ? `NOT MET, out of reach here: bare node:http at the same rate ${floor.toFixed(2)} ms; within 1 ms of it ${p999 <= floor + 1 ? 'MET' : 'NOT MET'}`
          : 'FAIL';
    console.log(
      `introspect_${key}_p99.9_at_half_peak_ms=${shownBelow(p999, P999_GOAL_MS)} (exact p99 ${s.halfP99.toFixed(2)}, at ${s.halfRate} req/s; bare node:http at that rate p99.9 ${floor.toFixed(2)}; goal < ${P999_GOAL_MS}) ${verdict}`,
    );
    console.log(
      `introspect_${key}_cold/bare_verify=${shownAtLeast(cold, 0.9)} (cold ${s.cold.toFixed(0)} req/s; bare node:http + one RS256 verify ${s.bareVerify.toFixed(0)} req/s, each of ${COLD} new tokens once; goal >= 0.90) ${ok(cold >= 0.9)}`,
    );
  }
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(
    RESULTS,
    `${JSON.stringify({ date: new Date().toISOString(), scenarios }, null, 2)}\n`,
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
