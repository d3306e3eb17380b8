/**
 * examples/nextjs built once per change (`next build`, kept in its .next folder with a stamp:
 * the hash of the example's sources, the built @latchkey/nextjs and @latchkey/node, and
 * Next.js's version) and started with `next start` on a loopback port.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const EXAMPLE = join(ROOT, 'examples/nextjs');
const NEXT = join(ROOT, 'node_modules/next/dist/bin/next');
const STAMP = join(EXAMPLE, '.next/latchkey-build-stamp');

function filesUnder(dir: string, skip: (path: string) => boolean): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .filter((path) => !skip(relative(dir, path)))
    .sort();
}

function sourcesHash(): string {
  const hash = createHash('sha256');
  const inputs = [
    ...filesUnder(EXAMPLE, (p) => /^(\.next|node_modules)\/|^next-env\.d\.ts$|^\.env/.test(p)),
    ...filesUnder(join(ROOT, 'packages/nextjs/dist'), () => false),
    ...filesUnder(join(ROOT, 'packages/node/dist'), () => false),
    join(ROOT, 'node_modules/next/package.json'),
  ];
  for (const file of inputs)
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file));
  return hash.digest('hex');
}

/** `next build` unless the last build was of these very sources; its duration in ms (0: cached). */
export function buildExample(): number {
  const hash = sourcesHash();
  if (existsSync(STAMP) && readFileSync(STAMP, 'utf8') === hash) return 0;
  const started = performance.now();
  execFileSync(process.execPath, [NEXT, 'build'], {
    cwd: EXAMPLE,
    stdio: 'pipe',
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
  });
  writeFileSync(STAMP, hash);
  return performance.now() - started;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

export interface RunningExample {
  output: () => string;
  stop(): Promise<void>;
}

/** `next start` on 127.0.0.1:`port`, with the five variables of docs/design.md §15 in `env`. */
export async function startExample(
  port: number,
  env: Record<string, string>,
): Promise<RunningExample> {
  let output = '';
  const child: ChildProcess = spawn(
    process.execPath,
    [NEXT, 'start', '--port', String(port), '--hostname', '127.0.0.1'],
    { cwd: EXAMPLE, env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', ...env } },
  );
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`next start exited:\n${output}`);
    const up = await fetch(`http://127.0.0.1:${port}/`).then(
      (r) => r.status > 0,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error(`next start did not answer:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    output: () => output,
    stop: () =>
      new Promise((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

/** Bytes of a folder's files, each gzipped (what a registry and a server-side bundler read). */
export function gzippedSize(dir: string, gzip: (b: Buffer) => Buffer): number {
  return filesUnder(dir, () => false).reduce((n, f) => n + gzip(readFileSync(f)).length, 0);
}
