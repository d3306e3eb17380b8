// ESM and CJS builds of one source (docs/design.md §11), leaving react and @latchkey/js to the app:
// one copy of @latchkey/js on the page means one client per publishable key.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const dist = new URL('dist/', import.meta.url);
rmSync(dist, { recursive: true, force: true });
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
  build({ ...common, format: 'esm', outfile: 'dist/index.js' }),
  build({ ...common, format: 'cjs', outfile: 'dist/cjs/index.js' }),
]);
execFileSync(
  process.execPath,
  ['../../node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'],
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
