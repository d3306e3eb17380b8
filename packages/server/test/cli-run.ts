/** The real, built `latchkey` CLI as a child process, for the suites that drive it. */
import { type ChildProcess, type ExecFileException, execFile, spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { eventually } from './support.js';

export const MAIN = fileURLToPath(new URL('../dist/latchkey.mjs', import.meta.url));
const run = promisify(execFile);

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * One `latchkey …` process; never throws on a non-zero exit. It sees this process's
 * environment plus `env`, or with `{ only: true }` nothing but `env` and PATH (so that no
 * variable of the test run, LATCHKEY_SECRET say, stands in for one the test leaves out).
 */
export async function latchkey(
  args: string[],
  env: Record<string, string>,
  { only = false } = {},
): Promise<Result> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, ...args], {
      env: only ? { PATH: process.env.PATH ?? '', ...env } : { ...process.env, ...env },
      cwd: tmpdir(),
      timeout: 20_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as ExecFileException & { stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw error;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/**
 * Where a `latchkey serve` child listens, as its first line says (with PORT=0, on the port
 * the system chose); rejects if it exits before. Its stdout (a pipe) is read on to the end.
 */
export function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const read = (chunk: Buffer) => {
      out += chunk;
      const url = /^Latchkey is listening on (\S+)/m.exec(out)?.[1];
      if (url) {
        child.stdout?.off('data', read);
        child.stdout?.resume();
        resolve(url);
      }
    };
    child.stdout?.on('data', read);
    child.once('exit', (code) =>
      reject(new Error(`serve exited (${code}) before listening: ${out}`)),
    );
  });
}

/**
 * `latchkey serve` as a child process on a port the system chose (this process's
 * environment plus `env`), once `ready` (a path) answers 200. `exited` settles with its
 * exit code.
 */
export async function startServe(env: Record<string, string>, ready: '/healthz' | '/readyz') {
  const child = spawn(process.execPath, [MAIN, 'serve'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const url = await listeningUrl(child);
  await eventually(async () =>
    (await fetch(`${url}${ready}`).then(
      (r) => r.status,
      () => 0,
    )) === 200
      ? true
      : undefined,
  );
  return { child, url, exited };
}
