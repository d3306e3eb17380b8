#!/usr/bin/env node
/** The only file that reads process.env and process.argv. */
import { runCli } from './cli/index.js';

const output = {
  out: (line: string) => process.stdout.write(`${line}\n`),
  err: (line: string) => process.stderr.write(`${line}\n`),
};

const code = await runCli(process.argv.slice(2), process.env, output);
// `serve` keeps running; every other command ends here.
if (process.argv[2] !== 'serve' || code !== 0) process.exitCode = code;
