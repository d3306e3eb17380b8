/** The root README's React section is copy-paste from examples/react-vite: held to the files. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');

describe('README, React section', () => {
  it('quotes the example app verbatim', () => {
    const readme = read('README.md');
    const section = readme.slice(readme.indexOf('\n## React'), readme.indexOf('\n## Sign up'));
    const blocks = [
      ...section.matchAll(/```jsx?\n\/\/ (examples\/[\w./-]+\w)[^\n]*\n([\s\S]*?)```/g),
    ];
    expect(blocks.map((b) => b[1])).toEqual([
      'examples/react-vite/src/main.jsx',
      'examples/react-vite/src/App.jsx',
      'examples/react-vite/api.js',
    ]);
    for (const [, path, code] of blocks) expect(read(path as string)).toContain(code);
  });
});
