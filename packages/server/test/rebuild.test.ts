/**
 * A rebuild while the suite runs (docs/design.md §10.1): `npm run build -w packages/js`
 * builds into a fresh folder and moves each file over dist/, so a server starting or a test
 * reading meanwhile finds every file, whole. Before, the build removed dist/ first.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const JS = fileURLToPath(new URL('../../js/', import.meta.url));
// What the server, the admin area and the React suites read from @latchkey/js.
const FILES = ['dist/latchkey.js', 'dist/preview.js', 'dist/index.js', 'dist/index.d.ts'];

describe('rebuilding packages/js', () => {
  it('never leaves a file of dist/ missing or half written', async () => {
    const before = new Map(FILES.map((f) => [f, readFileSync(JS + f)]));
    const build = run(process.execPath, ['build.mjs'], { cwd: JS, timeout: 60_000 });
    let building = true;
    build.finally(() => {
      building = false;
    });
    const seen: string[] = [];
    let reads = 0;
    while (building) {
      for (const file of FILES) {
        reads++;
        try {
          // One build of one source: the same bytes as before, or a bad read.
          if (!readFileSync(JS + file).equals(before.get(file) as Buffer))
            seen.push(`${file} changed`);
        } catch (error) {
          seen.push(`${file}: ${(error as Error).message}`);
        }
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    await build;
    expect(seen).toEqual([]);
    expect(reads).toBeGreaterThan(FILES.length * 10);
  }, 60_000);
});
