// One source, two builds (DESIGN 10): ESM for bundlers, and the script-tag IIFE. The
// package's build script runs tsc afterwards for the ESM build's .d.ts files.
import { readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const { version } = JSON.parse(readFileSync(new URL('package.json', import.meta.url), 'utf8'));
const common = { bundle: true, target: 'es2017', legalComments: 'none', logLevel: 'warning' };

rmSync(new URL('dist', import.meta.url), { recursive: true, force: true });
await Promise.all([
  build({ ...common, entryPoints: ['src/index.ts'], format: 'esm', outfile: 'dist/index.js' }),
  build({
    ...common,
    entryPoints: ['src/global.ts'],
    format: 'iife',
    minify: true,
    define: { VERSION: JSON.stringify(version) },
    outfile: 'dist/latchkey.js',
  }),
]);
