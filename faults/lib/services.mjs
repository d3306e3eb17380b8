// The real processes the faults act on: the built `latchkey` server and CLI, a Redis of the
// suite's own, a PostgreSQL cluster of the suite's own, and fresh schemas on the machine's
// PostgreSQL. Nothing here ever stops or signals a service the suite did not start.
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from './http.mjs';
import { freePort, signalGroup, start, stop, tempDir, until } from './procs.mjs';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const MAIN = join(ROOT, 'packages/server/dist/latchkey.mjs');
const requireServer = createRequire(join(ROOT, 'packages/server/package.json'));
export const pg = requireServer('pg');
export const PG_URL = process.env.FAULTS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const SECRET = randomBytes(32).toString('base64url');

/** Runs the latchkey CLI with `env`; resolves with its stdout. */
export function cli(args, env) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { env: { ...process.env, LATCHKEY_SECRET: SECRET, ...env }, timeout: 30_000 },
      (error, out, err) => {
        if (error) reject(new Error(`latchkey ${args.join(' ')}: ${error.message}\n${err}`));
        else resolve(out);
      },
    );
  });
}

/** `latchkey tenant create --json` with limits that never bite, unless `plan` is given. */
export async function createTenant(env, { plan, name = 'Faults' } = {}) {
  const limits = plan
    ? ['--plan', plan]
    : ['--plan', 'enterprise', '--rps', '1000000', '--rpm', '1000000'];
  const out = await cli(['tenant', 'create', '--name', name, ...limits, '--json'], env);
  const created = JSON.parse(out);
  return {
    id: created.tenant.id,
    secretKey: created.secretKey,
    publishableKey: created.publishableKey,
  };
}

/**
 * Starts `latchkey serve` as `npm start` does, on a free port; resolves when `/healthz`
 * answers 200. `server.url`, `server.env` (to restart it the same way), `server.child`.
 */
export async function startServer(env, { port, ready = '/healthz' } = {}) {
  const p = port ?? (await freePort());
  const url = `http://127.0.0.1:${p}`;
  const full = {
    ...process.env,
    LATCHKEY_SECRET: SECRET,
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PUBLIC_URL: url,
    ...env,
    PORT: String(p),
  };
  const child = start(process.execPath, ['--max-semi-space-size=4', MAIN, 'serve'], { env: full });
  try {
    await until(
      async () => {
        if (!child.alive()) throw new Error('exited');
        return (await request(url, 'GET', ready, { timeoutMs: 1000 })).status === 200;
      },
      20_000,
      `latchkey serve on ${url} answering ${ready}`,
    );
  } catch (error) {
    await stop(child);
    throw new Error(`${error.message}\n${child.output()}`);
  }
  return { url, port: p, env, child, started: performance.now() };
}

/** Sends PING over RESP; resolves with the first line of the answer. */
function redisPing(port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.setTimeout(500, () => socket.destroy(new Error('timeout')));
    socket.once('data', (d) => {
      resolve(String(d).split('\r\n')[0]);
      socket.end();
    });
    socket.once('error', reject);
  });
}

/** A Redis server of the suite's own (no persistence), which the faults may stop and kill. */
export async function startRedis() {
  const port = await freePort();
  const child = start('redis-server', [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
  ]);
  await until(
    async () => {
      if (!child.alive()) throw new Error(child.output());
      return (await redisPing(port)) === '+PONG';
    },
    10_000,
    'redis-server answering PING',
  );
  return { url: `redis://127.0.0.1:${port}`, port, child };
}

/** A fresh schema on the machine's PostgreSQL (never stopped by the suite); dropped at `drop()`. */
export async function freshSchema() {
  const schema = `lk_faults_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}

/** Processes whose parent is `pid` (Linux /proc). */
function childrenOf(pid) {
  const out = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {} // gone meanwhile
  }
  return out;
}

function postgresBin() {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
  for (const v of versions)
    if (existsSync(join(base, v, 'bin/initdb'))) return join(base, v, 'bin');
  return undefined;
}

/** initdb refuses root: as root, the cluster belongs to the `postgres` user (Debian's). */
function asOwner(command, args) {
  if (process.getuid?.() !== 0) return [command, args];
  return ['runuser', ['-u', 'postgres', '--', command, ...args]];
}

/**
 * A PostgreSQL cluster of the suite's own (initdb in a temp dir, a free port, fsync on), so
 * that F1 can kill it. Resolves with { url, kill(), restart() } or throws why it cannot.
 */
export async function ownPostgres() {
  const bin = postgresBin();
  if (!bin) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  const dir = tempDir('pg');
  const data = join(dir, 'data');
  if (process.getuid?.() === 0) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'])), 0);
  const [initCmd, initArgs] = asOwner(join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '--no-sync',
    '-E',
    'UTF8',
  ]);
  execFileSync(initCmd, initArgs, { stdio: 'pipe', timeout: 60_000 });
  const port = await freePort();
  const launch = () => {
    const [cmd, args] = asOwner(join(bin, 'postgres'), [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=on',
      '-c',
      'synchronous_commit=on',
      '-c',
      'max_connections=50',
    ]);
    return start(cmd, args);
  };
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const ready = async (child) => {
    await until(
      async () => {
        if (!child.alive()) throw new Error(child.output());
        const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 500 });
        try {
          await c.connect();
          await c.query('select 1');
          return true;
        } finally {
          await c.end().catch(() => {});
        }
      },
      30_000,
      'own PostgreSQL accepting connections',
    );
  };
  let child = launch();
  await ready(child);
  return {
    url,
    child: () => child,
    /**
     * A crash: SIGKILL to the postmaster and every backend at once. Backends call setsid(),
     * so they are not in the launcher's process group; they are found by parent pid.
     */
    async crash() {
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      const pids = [postmaster, ...childrenOf(postmaster)];
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
      signalGroup(child, 'SIGKILL');
      await child.exited;
      await until(
        async () => pids.every((pid) => !existsSync(`/proc/${pid}`)),
        5000,
        'PostgreSQL gone',
      );
    },
    async restart() {
      child = launch();
      await ready(child);
    },
  };
}

/**
 * When no PostgreSQL of the suite's own can run (no binaries, no `postgres` user): a fresh
 * schema on the machine's PostgreSQL behind an in-process TCP proxy. `crash()` resets every
 * connection and stops listening, which kills the connection path, not the database.
 */
export async function proxiedPostgres() {
  const schema = await freshSchema();
  const target = new URL(PG_URL);
  const port = await freePort();
  const sockets = new Set();
  let server;
  const listen = () =>
    new Promise((resolve) => {
      server = net.createServer((inbound) => {
        const outbound = net.connect(Number(target.port || 5432), target.hostname);
        for (const s of [inbound, outbound]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => {});
        }
        inbound.pipe(outbound).pipe(inbound);
      });
      server.listen(port, '127.0.0.1', resolve);
    });
  await listen();
  const url = new URL(schema.url);
  url.port = String(port);
  return {
    url: url.toString(),
    async crash() {
      server.close();
      for (const s of sockets) s.resetAndDestroy();
    },
    restart: listen,
    async close() {
      await this.crash();
      await schema.drop();
    },
  };
}
