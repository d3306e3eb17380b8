// A package's fresh build, moved over its dist/ one file at a time: a test or a server that
// reads dist/ while a build runs sees each file whole, old or new, and never a folder that is
// missing or half written. Files with new names (esbuild's chunks) come first, so that a new
// entry never points at a chunk not there yet; old files that the new build lacks go last.
//
//   node scripts/replace-dir.mjs FRESH TARGET     (or import { replaceDir })
import { mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Every file under `dir`, as paths relative to it. */
function files(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { recursive: true, withFileTypes: true });
  } catch {
    return [];
  }
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
}

const exists = (path) => {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
};

/** Moves every file of `fresh` into `target` (renames, so both must be on one file system). */
export function replaceDir(fresh, target) {
  const incoming = files(fresh);
  const added = incoming.filter((f) => !exists(join(target, f)));
  const replaced = incoming.filter((f) => !added.includes(f));
  for (const file of [...added, ...replaced]) {
    mkdirSync(join(target, file, '..'), { recursive: true });
    renameSync(join(fresh, file), join(target, file));
  }
  const kept = new Set(incoming);
  for (const file of files(target)) if (!kept.has(file)) rmSync(join(target, file));
  rmSync(fresh, { recursive: true, force: true });
}

/** A fresh folder for a build of `packageDir`, on the same file system as its dist/. */
export function freshDir(packageDir) {
  const dir = join(packageDir, 'build', `dist.${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [fresh, target] = process.argv.slice(2);
  if (!fresh || !target) throw new Error('usage: node scripts/replace-dir.mjs FRESH TARGET');
  replaceDir(resolve(fresh), resolve(target));
}
