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

  it('exports from @latchkey/js/client the same values, a client without the buttons', async () => {
    expect(Object.keys(await import('../src/headless.js')).sort()).toEqual([
      'ERROR_CODES',
      'Latchkey',
      'LatchkeyError',
      'SERVER_STATE',
    ]);
  });

  it('the built entry points share one client per key and one LatchkeyError', async () => {
    const main = await import('@latchkey/js');
    const headless = await import('@latchkey/js/client');
    expect(headless.LatchkeyError).toBe(main.LatchkeyError);
    expect(headless.ERROR_CODES).toBe(main.ERROR_CODES);
    const options = { publishableKey: 'pk_test_entries', authUrl: 'https://a.example' };
    // Made without the buttons first, the client gains them from the main entry point.
    const client = headless.Latchkey(options);
    expect('mount' in client).toBe(false);
    expect(main.Latchkey(options)).toBe(client);
    expect(typeof (client as { mount?: unknown }).mount).toBe('function');
    expect(headless.Latchkey(options)).toBe(client);
  });

  it('documents every value export and every client method in the README', async () => {
    const exportsSection = section(await readme(), 'Exports');
    for (const name of Object.keys(await import('../src/index.js'))) {
      expect(exportsSection).toContain(`\`${name}`);
    }
    expect(exportsSection).toContain('`@latchkey/js/client`');
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
