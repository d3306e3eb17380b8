import type { Parser } from '../types.js';
import { parseAuth0 } from './auth0.js';
import { parseClerk } from './clerk.js';
import { parseFirebase } from './firebase.js';
import { parseLatchkey } from './latchkey.js';
import { parseSupabase } from './supabase.js';

/**
 * The sources `latchkey import --from` reads (docs/design.md §16), one parser file each.
 * A source without a parser yet is listed with `undefined`: the CLI names it "not built yet".
 */
export const PARSERS: Record<ImportSource, Parser | undefined> = {
  latchkey: parseLatchkey,
  auth0: parseAuth0,
  clerk: parseClerk,
  supabase: parseSupabase,
  firebase: parseFirebase,
};

export type ImportSource = 'latchkey' | 'auth0' | 'clerk' | 'supabase' | 'firebase';

export const IMPORT_SOURCES = Object.keys(PARSERS) as ImportSource[];
