import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CONFIG_ERROR_CODES, TOKEN_ERROR_CODES } from '../src/errors.js';

describe('public surface', () => {
  it('exports exactly these values from the one entry point', async () => {
    expect(Object.keys(await import('../src/index.js')).sort()).toEqual([
      'LatchkeyApiError',
      'LatchkeyError',
      'LatchkeyTokenError',
      'createLatchkey',
      'latchkeySession',
      'protectedResourceMetadata',
    ]);
  });

  it('exports exactly these values from @latchkey/node/session, which imports nothing of Node', async () => {
    expect(Object.keys(await import('../src/session/index.js')).sort()).toEqual([
      'LatchkeyError',
      'createLatchkeySession',
      'sessionConfigFromEnv',
    ]);
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
    expect(pkg.exports['./session']).toEqual({
      types: './dist/session/index.d.ts',
      default: './dist/session/index.js',
    });
    // Edge runtimes have Web APIs only: no node: modules, no Buffer, no process.env read directly.
    const dir = new URL('../src/session/', import.meta.url);
    for (const file of await readdir(dir)) {
      const source = await readFile(new URL(file, dir), 'utf8');
      expect(source, file).not.toMatch(/from 'node:|\bBuffer\b|require\(/);
    }
  });

  it('documents every error code in the README', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const errorsSection = readme.slice(readme.indexOf('\n## Errors'));
    const documented = new Set(
      [...errorsSection.matchAll(/^\| `([a-z_]+)` +\|/gm)].map((m) => m[1]),
    );
    expect([...documented].sort()).toEqual([...TOKEN_ERROR_CODES, ...CONFIG_ERROR_CODES].sort());
  });
});
