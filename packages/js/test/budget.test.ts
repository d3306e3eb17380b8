/**
 * The script tag's budget (docs/design.md §10.1): 6 KB min+gzip with the buttons and marks,
 * ES2017. And `@latchkey/js/client`, for apps that never show the buttons: 3.5 KB, none of them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { parse } from 'acorn';
import { type BuildOptions, build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const BUDGET = 6144;
const CLIENT_BUDGET = 3584;
const dist = (file: string) => new URL(`../dist/${file}`, import.meta.url);
/** Minified bytes per source file of each bundle, recorded by `npm run record-sizes -w packages/js`. */
const RECORDED: Record<string, Record<string, number>> = JSON.parse(
  readFileSync(new URL('bundle-sizes.json', import.meta.url), 'utf8'),
);

function read(file: string): string {
  if (!existsSync(dist(file))) throw new Error(`dist/${file} is missing: run npm run build`);
  return readFileSync(dist(file), 'utf8');
}

const script = () => read('latchkey.js');

/** A bundle that build.mjs measures, built in memory: its bytes, and minified bytes per source file. */
async function measure(name: string) {
  const buildPath = '../build.mjs';
  const { measured } = (await import(buildPath)) as { measured: Record<string, BuildOptions> };
  const result = await build({ ...measured[name], write: false, metafile: true });
  const inputs = Object.values(result.metafile.outputs)[0]?.inputs ?? {};
  return {
    bytes: result.outputFiles?.[0]?.contents ?? new Uint8Array(),
    sources: Object.fromEntries(
      Object.entries(inputs).map(([file, { bytesInOutput }]) => [
        file.replace(/^.*?(src\/)/, '$1'),
        bytesInOutput,
      ]),
    ),
  };
}

/** Minified bytes of each source file in a bundle, biggest growth first. */
async function growth(name: string): Promise<string> {
  const recorded = RECORDED[name] ?? {};
  return Object.entries((await measure(name)).sources)
    .map(([source, now]) => ({ source, now, delta: now - (recorded[source] ?? 0) }))
    .sort((a, b) => b.delta - a.delta)
    .map(
      ({ source, now, delta }) => `${source}: ${now} B minified (${delta >= 0 ? '+' : ''}${delta})`,
    )
    .join('\n');
}

/** The text of an ESM file of dist and of every chunk it imports, with esbuild's `// src/…` marks. */
function withImports(file: string, seen = new Set<string>()): string {
  if (seen.has(file)) return '';
  seen.add(file);
  const text = read(file);
  const imported = [...text.matchAll(/from "\.\/([\w-]+\.js)"/g)].map((m) => m[1] as string);
  return text + imported.map((f) => withImports(f, seen)).join('');
}

const sourcesOf = (text: string) =>
  [...text.matchAll(/^\/\/ (src\/[\w-]+\.ts)$/gm)].map((m) => m[1]);

describe('dist/latchkey.js', () => {
  it(`is at most ${BUDGET} bytes minified and gzipped`, async () => {
    const size = gzipSync(script(), { level: 9 }).length;
    if (size > BUDGET) {
      expect.fail(
        `dist/latchkey.js is ${size} B min+gzip, over the ${BUDGET} B budget. Against test/bundle-sizes.json:\n${await growth('dist/latchkey.js')}`,
      );
    }
  });

  it('parses as ES2017 (no later syntax reaches older browsers)', () => {
    expect(() => parse(script(), { ecmaVersion: 2017, sourceType: 'script' })).not.toThrow();
    expect(() => parse('a?.b', { ecmaVersion: 2017 })).toThrow();
  });
});

describe('@latchkey/js/client', () => {
  it(`adds at most ${CLIENT_BUDGET} bytes minified and gzipped to an app`, async () => {
    const size = gzipSync((await measure('@latchkey/js/client')).bytes, { level: 9 }).length;
    if (size > CLIENT_BUDGET) {
      expect.fail(
        `@latchkey/js/client is ${size} B min+gzip, over the ${CLIENT_BUDGET} B budget. Against test/bundle-sizes.json:\n${await growth('@latchkey/js/client')}`,
      );
    }
  });

  it('holds no buttons and no provider marks, in the build and in the files shipped', async () => {
    const built = Object.keys((await measure('@latchkey/js/client')).sources);
    expect(built).toContain('src/client.ts');
    expect(built).not.toContain('src/ui.ts');
    expect(built).not.toContain('src/marks.ts');

    const shipped = sourcesOf(withImports('headless.js'));
    expect(shipped).toContain('src/client.ts');
    expect(shipped).not.toContain('src/ui.ts');
    expect(shipped).not.toContain('src/marks.ts');
    // The main entry has them, and shares the client's chunk rather than copying it.
    const main = read('index.js');
    expect(sourcesOf(main)).toEqual(expect.arrayContaining(['src/ui.ts', 'src/marks.ts']));
    expect(sourcesOf(main)).not.toContain('src/client.ts');
    expect(sourcesOf(withImports('index.js'))).toContain('src/client.ts');
  });
});

describe('test/bundle-sizes.json', () => {
  it.each(Object.keys(RECORDED))('names every source file of %s', async (name) => {
    const report = await growth(name);
    expect(
      report
        .split('\n')
        .map((line) => line.split(':')[0])
        .sort(),
    ).toEqual(Object.keys(RECORDED[name] ?? {}).sort());
  });

  it('records each bundle build.mjs measures', async () => {
    const buildPath = '../build.mjs';
    const { measured } = (await import(buildPath)) as { measured: Record<string, unknown> };
    expect(Object.keys(RECORDED).sort()).toEqual(Object.keys(measured).sort());
  });
});
