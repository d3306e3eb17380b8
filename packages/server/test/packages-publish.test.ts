/**
 * The client packages are ready for `npm publish` (docs/design.md §10.1): what `npm pack`
 * would upload holds every file their package.json names, a README and a LICENSE, and
 * nothing of src/ or test/; each states its license, types and version (the server's).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const buildPath = '../build.mjs';
const { npmPackages, namedFiles } = (await import(buildPath)) as {
  npmPackages: string[];
  namedFiles: (packageJsonPath: string) => string[];
};
const packageJson = (name: string) =>
  fileURLToPath(new URL(`../../${name}/package.json`, import.meta.url));
const read = (name: string) => JSON.parse(readFileSync(packageJson(name), 'utf8'));
const { version } = read('server') as { version: string };

interface Packed {
  name: string;
  version: string;
  files: { path: string }[];
}

describe.each(npmPackages)('packages/%s, as npm publish would upload it', (name) => {
  it('has every file its package.json names, a README and a LICENSE, and nothing else', async () => {
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: fileURLToPath(new URL(`../../${name}/`, import.meta.url)),
      timeout: 30_000,
    });
    const [packed] = JSON.parse(stdout) as Packed[];
    const files = packed?.files.map((f) => f.path) ?? [];
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE']));
    const named = namedFiles(packageJson(name));
    expect(named.length).toBeGreaterThan(1);
    for (const file of named) expect(files, `${file}, named in package.json`).toContain(file);
    const stray = files.filter(
      (f) => /^(src|test|build)\//.test(f) || /\.(map|tsbuildinfo)$|\.test\./.test(f),
    );
    expect(stray).toEqual([]);
    // Every .d.ts comes with the module it describes, and the other way round.
    for (const file of files.filter(
      (f) => f.endsWith('.js') && !/\/(chunk-|latchkey|preview)/.test(f),
    ))
      expect(files, `types of ${file}`).toContain(file.replace(/\.js$/, '.d.ts'));
  });

  it('states its license, types, public access and the server version', () => {
    const pkg = read(name);
    expect(pkg).toMatchObject({ license: 'MIT', version, publishConfig: { access: 'public' } });
    expect(pkg.private).toBeUndefined();
    expect(pkg.types).toMatch(/\.d\.ts$/);
    // Each module entry of the exports map has its types; the script files need none.
    const entries = Object.entries(pkg.exports as Record<string, unknown>).filter(
      ([, target]) => typeof target === 'object',
    );
    expect(entries.length).toBeGreaterThan(0);
    for (const [path, target] of entries) expect(JSON.stringify(target), path).toMatch(/"types":/);
    // A dependency on another of these packages is on this very version (the one served).
    for (const [dependency, range] of Object.entries(pkg.dependencies ?? {}))
      if (dependency.startsWith('@latchkey/')) expect(range).toBe(version);
  });
});
