// The server as it runs: `tsc` compiles src/ to dist/ (types, and the modules that tests
// and `import '@latchkey/server'` use); this bundles dist/main.js into dist/latchkey.mjs,
// which `latchkey` (bin/latchkey.js), `npm start` and the benchmarks run.
//
// One file instead of about 1,100 modules keeps an idle server about 12 MB smaller: the
// ES module loader's records per module, and the comments and indentation of every
// dependency's source, which V8 keeps in memory for the life of the process. Only
// whitespace is removed: names stay, so stack traces stay readable (and
// `node --enable-source-maps` maps them back through dist/latchkey.mjs.map).
//
// The bundle must stay pure ASCII: one character outside it and V8 holds all 2.4 MB of
// source as a two-byte string. esbuild escapes strings; license comments go to
// dist/latchkey.mjs.LEGAL.txt instead of the end of the bundle (test/bundle.test.ts).
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

export const bundle = {
  entryPoints: [here('dist/main.js')],
  outfile: here('dist/latchkey.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22.12',
  // Native addons, and modules loaded only when configured (through createRequire, which
  // esbuild leaves alone: pg, ioredis, nodemailer) come from node_modules as before.
  external: ['better-sqlite3', '@node-rs/argon2', 'pg-native'],
  minifyWhitespace: true,
  legalComments: 'linked',
  charset: 'ascii',
  sourcemap: 'linked',
  // Bundled CommonJS dependencies call require() for Node's built-in modules.
  banner: {
    js: "import { createRequire as __latchkeyRequire } from 'node:module'; const require = __latchkeyRequire(import.meta.url);",
  },
  logLevel: 'warning',
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await build(bundle);
