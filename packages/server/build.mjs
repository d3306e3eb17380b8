// The server as it runs: `tsc` compiles src/ to dist/ (types, and the modules that tests
// and `import '@latchkey/server'` use); this bundles dist/main.js into dist/latchkey.mjs,
// which `latchkey` (bin/latchkey.js), `npm start` and the benchmarks run, and packs the
// client packages into dist/npm/ for `GET /sdk/npm/{name}.tgz` (docs/design.md §10.1).
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
//
// Every file is written beside its place and renamed into it, so that a server or a test
// starting during a rebuild reads the old file or the new one, never half of one.
import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

/**
 * An ES module import of node:http (`import { STATUS_CODES } from 'node:http'`, in
 * oidc-provider), hoisted to the top of the bundle, makes Node.js build that module's ES
 * facade, which reads every export: its lazy WebSocket, CloseEvent and MessageEvent load
 * undici, 24 ms of every command's start and about 3 MB of every process. Such imports read
 * the module's object instead, as app.ts does: its plain values, none of its getters.
 */
const nodeHttpWithoutFacade = {
  name: 'node-http-without-facade',
  setup(build) {
    build.onResolve({ filter: /^(node:)?http$/ }, (args) =>
      args.kind === 'import-statement' || args.kind === 'dynamic-import'
        ? { path: 'node:http', namespace: 'node-http-object' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'node-http-object' }, async () => {
      const http = await import('node:http');
      const plain = Object.entries(Object.getOwnPropertyDescriptors(http.default))
        .filter(([name, descriptor]) => 'value' in descriptor && /^[A-Za-z_$][\w$]*$/.test(name))
        .map(([name]) => name);
      return {
        contents: [
          "const http = process.getBuiltinModule('node:http');",
          'export default http;',
          ...plain.map((name) => `export const ${name} = http.${name};`),
        ].join('\n'),
        loader: 'js',
      };
    });
  },
};

export const bundle = {
  entryPoints: [here('dist/main.js')],
  outfile: here('dist/latchkey.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22.12',
  // Native addons, and modules loaded only when configured (through createRequire, which
  // esbuild leaves alone: pg, ioredis, nodemailer) come from node_modules as before.
  external: ['better-sqlite3', '@node-rs/argon2', '@node-rs/bcrypt', 'pg-native'],
  minifyWhitespace: true,
  legalComments: 'linked',
  charset: 'ascii',
  sourcemap: 'linked',
  // Bundled CommonJS dependencies call require() for Node's built-in modules.
  banner: {
    js: "import { createRequire as __latchkeyRequire } from 'node:module'; const require = __latchkeyRequire(import.meta.url);",
  },
  logLevel: 'warning',
  plugins: [nodeHttpWithoutFacade],
};

/**
 * The workspace packages the server hands out as npm tarballs, `packages/{name}` each, built
 * before the server (the root package.json lists them first). A new one is one more name.
 */
export const npmPackages = ['js', 'react', 'node', 'nextjs'];

/** Where `@scope/name` is served: npm pack's file name without the version. */
export const tarballName = (packageName) =>
  `${packageName.replace(/^@/, '').replace('/', '-')}.tgz`;

function writeInPlace(path, contents) {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, path);
}

/**
 * `npm pack` of each package, exactly what `npm publish` would upload (npm gives every entry
 * the same mtime, so the bytes depend only on the files), into dist/npm/; tarballs of
 * packages no longer in the list are removed.
 */
function packPackages() {
  const written = new Set();
  const out = here('dist/npm');
  mkdirSync(out, { recursive: true });
  const scratch = mkdtempSync(join(here('dist'), '.npm-pack-'));
  // Run by `npm run build`, npm says where it is; run directly, it is on the PATH.
  const npm = process.env.npm_execpath
    ? [process.execPath, [process.env.npm_execpath]]
    : ['npm', []];
  try {
    for (const name of npmPackages) {
      const [packed] = JSON.parse(
        execFileSync(
          npm[0],
          [...npm[1], 'pack', '--json', '--ignore-scripts', '--pack-destination', scratch],
          { cwd: here(`../${name}`), encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
        ),
      );
      const files = new Set(packed.files.map((f) => f.path));
      const missing = namedFiles(here(`../${name}/package.json`)).filter((f) => !files.has(f));
      if (missing.length) {
        throw new Error(
          `packages/${name} names ${missing.join(', ')}, which its tarball lacks: build it before the server`,
        );
      }
      renameSync(join(scratch, packed.filename), join(out, tarballName(packed.name)));
      written.add(tarballName(packed.name));
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  for (const file of readdirSync(out)) {
    if (!written.has(file)) rmSync(join(out, file), { force: true });
  }
}

/** The files a package.json points at (main, module, types, every export), without `./`. */
export function namedFiles(packageJsonPath) {
  const pkg = JSON.parse(readFileSync(packageJsonPath, 'utf8'));
  const found = new Set();
  const walk = (value) => {
    if (typeof value === 'string') found.add(value.replace(/^\.\//, ''));
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk([pkg.main, pkg.module, pkg.types, pkg.exports].filter(Boolean));
  return [...found];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await build({ ...bundle, write: false });
  for (const file of result.outputFiles) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeInPlace(file.path, file.contents);
  }
  packPackages();
}
