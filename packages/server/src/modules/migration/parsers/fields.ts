import type { ImportedUser, RowRefusal } from '../types.js';

/** Small readers shared by the vendor parsers: a vendor's file is untrusted input. */

/** A user as a vendor parser reads it, with its `notes` (what was not carried). */
export type VendorUser = ImportedUser;
export type VendorRow = VendorUser | RowRefusal;

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A non-empty trimmed string, or undefined. */
export function text(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  return t === '' ? undefined : t;
}

/** JSON true/false, or the words PostgreSQL and CSV files write for them. */
export function flag(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  return typeof v === 'string' && /^(t|true|1|yes)$/i.test(v.trim());
}

/** A date from an ISO string, epoch milliseconds (number or digits) or `{ "$date": … }`. */
export function date(v: unknown): Date | undefined {
  if (isObject(v)) return date(v.$date);
  if (typeof v === 'number' || (typeof v === 'string' && /^\d{10,}$/.test(v))) {
    const d = new Date(Number(v));
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  if (typeof v !== 'string' || v.trim() === '') return undefined;
  const d = new Date(v.trim());
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** A JSON object from an object or from text holding one (a jsonb column in a CSV file). */
export function object(v: unknown): Json | undefined {
  if (isObject(v)) return v;
  const t = text(v);
  if (!t?.startsWith('{')) return undefined;
  try {
    const parsed: unknown = JSON.parse(t);
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON array from an array or from text holding one. */
export function array(v: unknown): unknown[] | undefined {
  if (Array.isArray(v)) return v;
  const t = text(v);
  if (!t?.startsWith('[')) return undefined;
  try {
    const parsed: unknown = JSON.parse(t);
    return Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** An object with at least one key, or undefined (empty metadata is not carried). */
export const nonEmpty = (v: Json | undefined): Json | undefined =>
  v && Object.keys(v).length > 0 ? v : undefined;

/** A person's name from its parts, or the full name. */
export function personName(first: unknown, last: unknown, full?: unknown): string | null {
  const parts = [text(first), text(last)].filter(Boolean);
  return parts.length > 0 ? parts.join(' ') : (text(full) ?? null);
}

/**
 * The user's metadata in Latchkey's shape: what the user may see and change goes to
 * `public` (the only part a browser sees), what the application set to `private`, and
 * where the user came from to `importedFrom`, so an application can map its own rows.
 */
export function importedMetadata(
  from: string,
  id: string | undefined,
  publicPart: Json | undefined,
  privatePart: Json | undefined,
): Record<string, unknown> {
  return {
    ...(nonEmpty(publicPart) ? { public: publicPart } : {}),
    ...(nonEmpty(privatePart) ? { private: privatePart } : {}),
    importedFrom: id ? { source: from, id } : { source: from },
  };
}

/**
 * A stored hash named by its own prefix. Auth0 and Supabase keep bcrypt, but also keep, as
 * given, hashes their own imports brought (argon2 PHC strings); anything else goes on as
 * bcrypt, and the engine reports what it cannot read.
 */
export function selfDescribed(encoded: string): NonNullable<ImportedUser['password']> {
  if (encoded.startsWith('$argon2id$')) return { algorithm: 'argon2id', encoded };
  if (encoded.startsWith('$argon2i$')) return { algorithm: 'argon2i', encoded };
  return { algorithm: 'bcrypt', encoded };
}
