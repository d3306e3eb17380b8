import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CONFIG_ERROR_CODES, TOKEN_ERROR_CODES } from '../src/errors.js';

describe('public surface', () => {
  it('exports exactly these values from the one entry point', async () => {
    expect(Object.keys(await import('../src/index.js')).sort()).toEqual([
      'LatchkeyApiError',
      'LatchkeyError',
      'LatchkeyTokenError',
      'createLatchkey',
      'protectedResourceMetadata',
    ]);
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
