import type { Parser } from '../types.js';
import { parseLatchkey } from './latchkey.js';

/**
 * The sources `latchkey import --from` reads (docs/design.md §16), one parser file each.
 * A source without a parser yet is listed with `undefined`: the CLI names it "not built yet".
 */
export const PARSERS: Record<ImportSource, Parser | undefined> = {
  latchkey: parseLatchkey,
  auth0: undefined,
  clerk: undefined,
  supabase: undefined,
  firebase: undefined,
};

export type ImportSource = 'latchkey' | 'auth0' | 'clerk' | 'supabase' | 'firebase';

export const IMPORT_SOURCES = Object.keys(PARSERS) as ImportSource[];
