import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Comments and docs cite the design as `docs/design.md §N` or `§N.M`, so that someone who
 * clones the repository can follow the reasoning. These tests hold every citation to a
 * heading that exists, as the operations suite holds docs/errors.md to the error catalogue.
 */
const root = new URL('../../../', import.meta.url).pathname;

/** The section numbers of docs/design.md: `## N. Title` and `### N.M Title`. */
function sections(): string[] {
  const doc = readFileSync(join(root, 'docs/design.md'), 'utf8');
  return [...doc.matchAll(/^(?:## (\d+)\. |### (\d+\.\d+) )\S/gm)].map((m) => m[1] ?? m[2] ?? '');
}

/** Where a citation may stand: the repository's sources and docs. */
const CITING = ['*.ts', '*.tsx', '*.mjs', '*.md'];

/**
 * The files that may cite it, tracked or new but not ignored (so node_modules, dist and data
 * never count), with their lines.
 */
const files = (() => {
  let read: { file: string; lines: string[] }[] | undefined;
  return () => {
    read ??= execFileSync(
      'git',
      ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...CITING],
      { cwd: root, encoding: 'utf8' },
    )
      .split('\0')
      .filter((file) => file && !/(^|\/)(node_modules|dist)\//.test(file))
      .map((file) => ({ file, lines: readFileSync(join(root, file), 'utf8').split('\n') }));
    return read;
  };
})();

/** `file:line: text` for every match of `pattern` (global) that `wrong` says is wrong. */
function offending(pattern: RegExp, wrong: (match: RegExpMatchArray) => boolean): string[] {
  const found: string[] = [];
  for (const { file, lines } of files()) {
    lines.forEach((line, i) => {
      for (const match of line.matchAll(pattern)) {
        if (wrong(match)) found.push(`${file}:${i + 1}: ${line.trim()}`);
      }
    });
  }
  return found;
}

describe('docs/design.md and its citations', () => {
  it('numbers each section once, the top level counting up from 1', () => {
    const numbers = sections();
    expect(new Set(numbers).size).toBe(numbers.length);
    const top = numbers.filter((n) => !n.includes('.')).map(Number);
    expect(top).toEqual(top.map((_, i) => i + 1));
    for (const sub of numbers.filter((n) => n.includes('.'))) {
      expect(top, `§${sub} has no section ${sub.split('.')[0]}`).toContain(
        Number(sub.split('.')[0]),
      );
    }
  });

  it('every citation names a section that exists', () => {
    const known = new Set(sections());
    const cited = offending(/docs\/design\.md §(\d+(?:\.\d+)*)/g, (m) => !known.has(m[1] ?? ''));
    expect(cited).toEqual([]);
  });

  it('every citation is written one way: docs/design.md §N', () => {
    const loose = offending(
      /[\w./-]*design\.md[^\w\n]{0,3}(?:section\s*|§\s*)?\d/gi,
      (m) => !/^docs\/design\.md §\d$/.test(m[0]),
    );
    expect(loose).toEqual([]);
  });

  it('no citation of the old kind, naming documents outside the repository, is left', () => {
    const old = offending(
      /\bDESIGN(?:\.md)?(?:\s+section)?\s+\d|\b[Rr]eference\s+section\s+\d/g,
      () => true,
    );
    expect(old).toEqual([]);
  });
});
