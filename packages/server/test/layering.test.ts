/**
 * The server's layers, as packages/server/README.md and docs/design.md §2 draw them:
 * modules hold the rules and the SQL and know no HTTP; views hold every page; the HTTP
 * layer holds neither SQL nor markup.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const files = sources(SRC).map((path) => ({
  path: relative(SRC, path),
  text: readFileSync(path, 'utf8'),
}));
const offenders = (where: (path: string) => boolean, pattern: RegExp) =>
  files.filter((f) => where(f.path) && pattern.test(f.text)).map((f) => f.path);

const SQL = /\.(selectFrom|insertInto|updateTable|deleteFrom)\(|\bsql`/;
const MARKUP = /<!doctype|<(form|input|div|main|p|a)[\s>]|\bhtml`/i;

describe('layering of packages/server/src', () => {
  it('reads the whole tree', () => {
    expect(files.length).toBeGreaterThan(100);
    // The patterns find what they look for where it belongs.
    expect(offenders((p) => p.startsWith('views/'), MARKUP).length).toBeGreaterThan(5);
    expect(offenders((p) => p.startsWith('modules/'), SQL).length).toBeGreaterThan(5);
  });

  it('no module imports Fastify or the views', () => {
    expect(
      offenders((p) => p.startsWith('modules/'), /from 'fastify'|from '\.\.\/\.\.\/views\//),
    ).toEqual([]);
  });

  it('no SQL outside modules/ and storage/', () => {
    expect(offenders((p) => !/^(modules|storage)\//.test(p), SQL)).toEqual([]);
  });

  it('no markup outside views/', () => {
    expect(offenders((p) => !p.startsWith('views/'), MARKUP)).toEqual([]);
  });

  it('no repository layer: a module keeps its queries in its services', () => {
    expect(files.filter((f) => f.path.endsWith('.repository.ts')).map((f) => f.path)).toEqual([]);
  });
});
