import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/errors.js';

const readme = () => readFile(new URL('../README.md', import.meta.url), 'utf8');
const section = (text: string, heading: string) => {
  const start = text.indexOf(`\n## ${heading}`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
};

describe('public surface', () => {
  it('exports exactly these values from the one entry point', async () => {
    expect(Object.keys(await import('../src/index.js')).sort()).toEqual([
      'ERROR_CODES',
      'Latchkey',
      'LatchkeyError',
      'SERVER_STATE',
    ]);
  });

  it('documents every value export and every client method in the README', async () => {
    const exportsSection = section(await readme(), 'Exports');
    for (const name of Object.keys(await import('../src/index.js'))) {
      expect(exportsSection).toContain(`\`${name}`);
    }
    const { Latchkey } = await import('../src/index.js');
    const client = Latchkey({ publishableKey: 'pk_test_readme', authUrl: 'https://a.example' });
    for (const method of Object.keys(client)) expect(exportsSection).toContain(`${method}`);
  });

  it('documents every error code in the README', async () => {
    const documented = [...section(await readme(), 'Errors').matchAll(/^\| `([a-z_]+)` +\|/gm)];
    expect(documented.map((m) => m[1]).sort()).toEqual([...ERROR_CODES].sort());
  });

  it('SERVER_STATE is what a server renders: not loaded, signed out', async () => {
    const { SERVER_STATE } = await import('../src/index.js');
    expect(SERVER_STATE).toEqual({ isLoaded: false, isSignedIn: false, user: null });
  });
});
