/**
 * The package's contract (docs/design.md §15): what each entry exports, and that the
 * server entry, which the middleware brings into Next.js's edge runtime, needs no Node.js
 * module (the session core is Web Crypto and fetch only).
 */
import { builtinModules } from 'node:module';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import * as client from '../src/client/index.js';
import * as server from '../src/index.js';

describe('@latchkey/nextjs exports', () => {
  it('server: the middleware, auth(), currentUser(), protect() and the route handler', () => {
    expect(Object.keys(server).sort()).toEqual([
      'auth',
      'currentUser',
      'handlers',
      'latchkeyMiddleware',
      'protect',
    ]);
    expect(Object.keys(server.handlers).sort()).toEqual(['GET', 'POST']);
  });

  it('client: the names of @latchkey/react', () => {
    expect(Object.keys(client).sort()).toEqual([
      'LatchkeyProvider',
      'SignedIn',
      'SignedOut',
      'UserButton',
      'useAuth',
      'useUser',
    ]);
  });

  it('the server entry bundles for the edge runtime without any Node.js module', async () => {
    const node = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    const result = await build({
      entryPoints: [new URL('../src/index.ts', import.meta.url).pathname],
      bundle: true,
      write: false,
      metafile: true,
      format: 'esm',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      conditions: ['edge-light', 'worker', 'import'],
      // Next.js supplies these to the edge runtime itself.
      external: ['next', 'next/*', 'react', 'react/*'],
      logLevel: 'silent',
    });
    const imports = Object.values(result.metafile.inputs).flatMap((i) =>
      i.imports.map((x) => x.path),
    );
    expect(imports.filter((path) => node.has(path))).toEqual([]);
  });
});
