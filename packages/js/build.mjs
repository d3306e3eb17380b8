// One source, two builds (docs/design.md §10.1): ESM for bundlers, and the script-tag IIFE. The ESM
// build has two entry points, dist/index.js (`@latchkey/js`) and dist/headless.js
// (`@latchkey/js/client`, without the buttons), which share one chunk: one client per key
// even in an app that imports both. The package's build script runs tsc afterwards for
// the .d.ts files. dist/mark-paths.js (`@latchkey/js/marks`) is the providers' marks as
// data, which the server's hosted page draws too. A third build, dist/preview.js, draws the
// same buttons for the admin area's Branding preview. Everything is built into a fresh folder
// and then moved over dist/ (scripts/replace-dir.mjs), so that a rebuild never breaks a
// server or a test reading it.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { freshDir, replaceDir } from '../../scripts/replace-dir.mjs';

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

/**
 * What an app that imports only `@latchkey/js/client` bundles, minified: never written, the
 * budget test measures it.
 */
export const clientOnly = {
  ...common,
  entryPoints: [here('src/headless.ts')],
  format: 'esm',
  minify: true,
};

/** Bundles measured by the budget test, by the name test/bundle-sizes.json records them under. */
export const measured = { 'dist/latchkey.js': iife, '@latchkey/js/client': clientOnly };

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = freshDir(here('.'));
  await Promise.all([
    build({
      ...common,
      entryPoints: [here('src/index.ts'), here('src/headless.ts'), here('src/mark-paths.ts')],
      format: 'esm',
      splitting: true,
      outdir: out,
    }),
    build({ ...iife, outfile: join(out, 'latchkey.js') }),
    build({ ...iife, entryPoints: [here('src/preview.ts')], outfile: join(out, 'preview.js') }),
  ]);
  // The .d.ts files.
  execFileSync(
    process.execPath,
    [
      here('../../node_modules/typescript/bin/tsc'),
      '-p',
      here('tsconfig.build.json'),
      '--outDir',
      out,
    ],
    { stdio: 'inherit' },
  );
  replaceDir(out, here('dist'));
}

// `npm run record-sizes -w packages/js`: the per-file sizes the budget test compares against.
if (process.argv.includes('--record-sizes')) {
  const sizes = {};
  for (const [name, options] of Object.entries(measured)) {
    const result = await build({ ...options, write: false, metafile: true });
    const inputs = Object.values(result.metafile.outputs)[0].inputs;
    sizes[name] = Object.fromEntries(
      Object.entries(inputs).map(([file, { bytesInOutput }]) => [
        file.replace(/^.*?(src\/)/, '$1'),
        bytesInOutput,
      ]),
    );
  }
  writeFileSync(here('test/bundle-sizes.json'), `${JSON.stringify(sizes, null, 2)}\n`);
}
