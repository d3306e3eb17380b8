/**
 * The public exports are a contract (docs/design.md §11): the built package, as `import` and as
 * `require` sees it, against a snapshot. A change here is a change to the API.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);

describe('@latchkey/react exports', () => {
  it('exports exactly these names, the same from ESM and CJS', async () => {
    const esm = await import('@latchkey/react');
    const cjs = require('@latchkey/react') as Record<string, unknown>;
    const names = Object.keys(esm).sort();
    expect(names).toMatchInlineSnapshot(`
      [
        "LatchkeyError",
        "LatchkeyProvider",
        "SignIn",
        "SignedIn",
        "SignedOut",
        "UserButton",
        "useAuth",
        "useLatchkey",
        "useUser",
      ]
    `);
    expect(Object.keys(cjs).sort()).toEqual(names);
    for (const name of names) {
      expect(typeof (esm as Record<string, unknown>)[name], name).toBe('function');
    }
  });

  it('shares @latchkey/js with the app (one client per key), and declares its package rules', async () => {
    const pkg = require('@latchkey/react/package.json') as Record<string, unknown>;
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.peerDependencies).toEqual({ react: '>=17' });
    const { LatchkeyError } = await import('@latchkey/js');
    const react = await import('@latchkey/react');
    expect(react.LatchkeyError).toBe(LatchkeyError);
  });

  it('documents every export in the README, and nothing that is not one', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const table = readme.slice(readme.indexOf('\n## Exports'), readme.indexOf('\n## How'));
    const documented = [...table.matchAll(/^\| ([^|]+)\|/gm)]
      .flatMap((row) => [...(row[1] as string).matchAll(/`(\w+)(?:\(\))?`/g)])
      .map((m) => m[1])
      .sort();
    expect(documented).toEqual(Object.keys(await import('@latchkey/react')).sort());
  });
});
