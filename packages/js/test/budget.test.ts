/** The script tag's budget (docs/design.md §10.1): 6 KB min+gzip with buttons and marks, ES2017. */
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { parse } from 'acorn';
import { type BuildOptions, build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const BUDGET = 6144;
const SCRIPT = new URL('../dist/latchkey.js', import.meta.url);
/** Minified bytes per source file, recorded by `npm run record-sizes -w packages/js`. */
const RECORDED = JSON.parse(readFileSync(new URL('bundle-sizes.json', import.meta.url), 'utf8'));

function script(): string {
  if (!existsSync(SCRIPT)) throw new Error('dist/latchkey.js is missing: run npm run build');
  return readFileSync(SCRIPT, 'utf8');
}

/** Minified bytes of each source file in the bundle, biggest growth first. */
async function growth(): Promise<string> {
  const buildPath = '../build.mjs';
  const { iife } = (await import(buildPath)) as { iife: BuildOptions };
  const result = await build({ ...iife, write: false, metafile: true });
  const inputs = Object.values(result.metafile.outputs)[0]?.inputs ?? {};
  return Object.entries(inputs)
    .map(([file, { bytesInOutput }]) => {
      const name = file.replace(/^.*?(src\/)/, '$1');
      return { name, now: bytesInOutput, delta: bytesInOutput - (RECORDED[name] ?? 0) };
    })
    .sort((a, b) => b.delta - a.delta)
    .map(({ name, now, delta }) => `${name}: ${now} B minified (${delta >= 0 ? '+' : ''}${delta})`)
    .join('\n');
}

describe('dist/latchkey.js', () => {
  it(`is at most ${BUDGET} bytes minified and gzipped`, async () => {
    const size = gzipSync(script(), { level: 9 }).length;
    if (size > BUDGET) {
      expect.fail(
        `dist/latchkey.js is ${size} B min+gzip, over the ${BUDGET} B budget. Against test/bundle-sizes.json:\n${await growth()}`,
      );
    }
  });

  it('parses as ES2017 (no later syntax reaches older browsers)', () => {
    expect(() => parse(script(), { ecmaVersion: 2017, sourceType: 'script' })).not.toThrow();
    expect(() => parse('a?.b', { ecmaVersion: 2017 })).toThrow();
  });

  it('the recorded sizes name every source file of the bundle', async () => {
    const report = await growth();
    expect(
      report
        .split('\n')
        .map((line) => line.split(':')[0])
        .sort(),
    ).toEqual(Object.keys(RECORDED).sort());
  });
});
