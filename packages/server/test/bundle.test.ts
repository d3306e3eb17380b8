/**
 * dist/latchkey.mjs, the one-file server that `latchkey` runs (build.mjs). The CLI, instance
 * and fault suites run it as a child process; this checks what they cannot see.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SECRET } from './support.js';

const BUNDLE = fileURLToPath(new URL('../dist/latchkey.mjs', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/latchkey.js', import.meta.url));
const run = promisify(execFile);

/** `latchkey` with no command: the usage on stdout, exit 2. */
async function usage(file: string): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, [file], {
      env: { ...process.env, LATCHKEY_SECRET: SECRET },
      cwd: tmpdir(),
      timeout: 20_000,
    });
    return { code: 0, stdout };
  } catch (error) {
    const { code, stdout } = error as { code: number; stdout: string };
    return { code, stdout };
  }
}

describe('the bundled server (dist/latchkey.mjs)', () => {
  it('is pure ASCII, so that V8 keeps its source as one byte per character', () => {
    const source = readFileSync(BUNDLE);
    const at = source.findIndex((byte) => byte > 0x7f);
    // One non-ASCII byte (a name in a license comment did it) doubles the 2.4 MB that
    // every server holds in memory: say where it is.
    const around = at < 0 ? '' : source.subarray(Math.max(0, at - 120), at + 40).toString();
    expect(at, `non-ASCII byte at offset ${at}, in: ${around}`).toBe(-1);
  });

  it('loads native addons and optional drivers from node_modules instead of inlining them', () => {
    const source = readFileSync(BUNDLE, 'utf8');
    // `import … from "x"`, `require("x")` (esbuild may rename it require2) or
    // `createRequire(import.meta.url)("x")`.
    const loads = (name: string) =>
      new RegExp(`(from|require\\d*\\(|\\.url\\)\\()"${name.replace('/', '\\/')}"`).test(source);
    for (const name of ['better-sqlite3', '@node-rs/argon2', 'pg', 'ioredis', 'nodemailer'])
      expect(loads(name), `${name} is not loaded from node_modules`).toBe(true);
    expect(/\.node["']\)/.test(source), 'a native .node file is required by path').toBe(false);
  });

  it("starts without node:http's ES facade, whose lazy exports load undici", async () => {
    // `latchkey` (the usage) run inside a process that then says what Node.js loaded.
    const probe = [
      'process.argv.length = 2;',
      `await import(${JSON.stringify(BUNDLE)});`,
      "console.error(JSON.stringify(process.moduleLoadList.filter((m) => m.includes('undici'))));",
    ].join('\n');
    const loaded = await new Promise<string>((resolve) => {
      execFile(
        process.execPath,
        ['--input-type=module', '-e', probe],
        { env: { ...process.env, LATCHKEY_SECRET: SECRET }, cwd: tmpdir(), timeout: 20_000 },
        (_error, stdout, stderr) => {
          expect(stdout).toMatch(/latchkey serve/);
          resolve(stderr.trim().split('\n').at(-1) ?? '');
        },
      );
    });
    expect(JSON.parse(loaded)).toEqual([]);
  });

  it('is what bin/latchkey.js runs', async () => {
    const [viaBin, viaBundle] = await Promise.all([usage(BIN), usage(BUNDLE)]);
    expect(viaBundle.code).toBe(2);
    expect(viaBundle.stdout).toMatch(/latchkey serve/);
    expect(viaBin).toEqual(viaBundle);
    expect(readFileSync(BIN, 'utf8')).toContain("new URL('../dist/latchkey.mjs', import.meta.url)");
  });
});
