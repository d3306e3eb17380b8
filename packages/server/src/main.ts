#!/usr/bin/env node
/** The only file that reads process.env and process.argv. */
import { availableParallelism } from 'node:os';

// argon2 runs on libuv's pool (4 threads by default): on a bigger machine that would cap
// sign-ups at 4 hashes at a time. Set before anything starts the pool.
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, availableParallelism()));

const { runCli } = await import('./cli/index.js');

const output = {
  out: (line: string) => process.stdout.write(`${line}\n`),
  err: (line: string) => process.stderr.write(`${line}\n`),
  stdout: process.stdout,
};

const code = await runCli(process.argv.slice(2), process.env, output);
// `serve` keeps running; every other command ends here.
if (process.argv[2] !== 'serve' || code !== 0) process.exitCode = code;
