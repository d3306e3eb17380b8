// ESM and CJS builds of one source (docs/design.md §11), leaving react and @latchkey/js to the app:
// one copy of @latchkey/js on the page means one client per publishable key. Built into a
// fresh folder and moved over dist/ (scripts/replace-dir.mjs): a rebuild never breaks a reader.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { freshDir, replaceDir } from '../../scripts/replace-dir.mjs';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const out = freshDir(here('.'));
const dist = pathToFileURL(`${out}/`);
const common = {
  entryPoints: ['src/index.ts'],
  bundle: true,
  packages: 'external',
  target: 'es2017',
  legalComments: 'none',
  logLevel: 'warning',
  // Hooks and effects: a client component for frameworks with server components (Next.js).
  banner: { js: '"use client";' },
};
await Promise.all([
  build({ ...common, format: 'esm', outfile: join(out, 'index.js') }),
  build({ ...common, format: 'cjs', outfile: join(out, 'cjs/index.js') }),
]);
execFileSync(
  process.execPath,
  ['../../node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--outDir', out],
  {
    stdio: 'inherit',
  },
);
// The same declarations again under a CommonJS package scope, for `require` (TypeScript picks
// the module kind of a .d.ts from the nearest package.json).
for (const file of readdirSync(dist)) {
  if (file.endsWith('.d.ts')) cpSync(new URL(file, dist), new URL(`cjs/${file}`, dist));
}
writeFileSync(new URL('cjs/package.json', dist), '{ "type": "commonjs" }\n');
replaceDir(out, here('dist'));
