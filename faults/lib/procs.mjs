// Every process the fault suite starts runs in a process group of its own, is recorded
// here and in a registry file, and is killed on exit, on failure, on a signal, and by a
// detached watchdog when this process dies without cleaning up (SIGKILL, OOM).
import { spawn } from 'node:child_process';
import { appendFileSync, chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const groups = new Set();
const dirs = new Set();
const root = mkdtempSync(join(os.tmpdir(), 'latchkey-faults-'));
// Traversable by other users: the suite's own PostgreSQL runs as `postgres` inside it.
chmodSync(root, 0o711);
const registry = join(root, 'registry');
writeFileSync(registry, '');
dirs.add(root);
// Whoever imports this module, nothing it started outlives the process.
process.on('exit', () => killAll());

/** A temporary directory removed at cleanup. */
export function tempDir(name) {
  const dir = mkdtempSync(join(root, `${name}-`));
  dirs.add(dir);
  return dir;
}

/**
 * Starts `command` detached, in a process group of its own, so that its children (PostgreSQL's
 * backends, a shell's children) are signalled with it. Output is kept (the last 8 KB).
 */
export function start(command, args, options = {}) {
  const child = spawn(command, args, {
    ...options,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (d) => {
    output = (output + d).slice(-8192);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  if (child.pid) {
    groups.add(child.pid);
    appendFileSync(registry, `${child.pid}\n`);
  }
  child.exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      groups.delete(child.pid);
      resolve({ code, signal });
    }),
  );
  child.output = () => output;
  child.alive = () => child.exitCode === null && child.signalCode === null;
  return child;
}

/** Sends `signal` to the whole process group of `child`. */
export function signalGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
export async function stop(child, graceMs = 3000) {
  if (!child?.alive()) return;
  signalGroup(child, 'SIGCONT');
  signalGroup(child, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
  signalGroup(child, 'SIGKILL'); // leftovers of the group
}

/** Synchronous: safe in an 'exit' handler. */
export function killAll() {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {}
  }
  groups.clear();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}

/**
 * A detached watchdog: when this process is gone, or `deadlineMs` has passed, it SIGKILLs
 * every group in the registry and removes the temporary directory.
 */
export function startWatchdog(deadlineMs) {
  const dog = spawn(
    process.execPath,
    [join(HERE, 'watchdog.mjs'), String(process.pid), registry, root, String(deadlineMs)],
    { detached: true, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  dog.unref();
  return dog;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Polls `check` until it returns a truthy value; throws after `ms`. */
export async function until(check, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() > end) throw new Error(`${what} did not happen within ${ms} ms`);
    await sleep(50);
  }
}
