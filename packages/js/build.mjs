// One source, two builds (docs/design.md §10.1): ESM for bundlers, and the script-tag IIFE. The
// package's build script runs tsc afterwards for the ESM build's .d.ts files. A third
// build, dist/preview.js, draws the same buttons for the admin area's Branding preview.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const { version } = JSON.parse(readFileSync(here('package.json'), 'utf8'));
const common = { bundle: true, target: 'es2017', legalComments: 'none', logLevel: 'warning' };

/** dist/latchkey.js; the budget test builds it again with a metafile to say what grew. */
export const iife = {
  ...common,
  entryPoints: [here('src/global.ts')],
  format: 'iife',
  minify: true,
  define: { VERSION: JSON.stringify(version) },
  outfile: here('dist/latchkey.js'),
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  rmSync(here('dist'), { recursive: true, force: true });
  await Promise.all([
    build({
      ...common,
      entryPoints: [here('src/index.ts')],
      format: 'esm',
      outfile: here('dist/index.js'),
    }),
    build(iife),
    build({ ...iife, entryPoints: [here('src/preview.ts')], outfile: here('dist/preview.js') }),
  ]);
}

// `npm run record-sizes -w packages/js`: the per-file sizes the budget test compares against.
if (process.argv.includes('--record-sizes')) {
  const result = await build({ ...iife, write: false, metafile: true });
  const inputs = Object.values(result.metafile.outputs)[0].inputs;
  const sizes = Object.fromEntries(
    Object.entries(inputs).map(([file, { bytesInOutput }]) => [
      file.replace(/^.*?(src\/)/, '$1'),
      bytesInOutput,
    ]),
  );
  writeFileSync(here('test/bundle-sizes.json'), `${JSON.stringify(sizes, null, 2)}\n`);
}
