/**
 * E-mail addresses are kept as typed (trimmed) and matched through a case-folded key.
 *
 * Folding lowers a code point only when upper-casing the result gives the same code point
 * back. That folds `A`/`a` and `É`/`é`, but never merges look-alikes: the Kelvin sign
 * (U+212A) lowers to ASCII `k`, `İ` (U+0130) to `i` plus a combining dot, the Angstrom sign
 * to `å`; none of them round-trips, so each stays itself. No Unicode normalisation is
 * applied, so NFC and NFD spellings, full-width forms and dotless `ı` remain distinct.
 */
import { defaults } from '../../config/defaults.js';

export function emailKey(email: string): string {
  let key = '';
  for (const ch of email) {
    const lower = ch.toLowerCase();
    key += lower !== ch && lower.toUpperCase() === ch && [...lower].length === 1 ? lower : ch;
  }
  return key;
}

const utf8 = new TextEncoder();
// Control, format (zero-width, bidi), unassigned, private-use, surrogate, and separators.
const INVISIBLE = /[\p{C}\p{Z}]/u;
const LOCAL_FORBIDDEN = /["(),:;<>@[\\\]]/;
const LABEL = /^(?!-)[\p{L}\p{M}\p{N}-]{1,63}(?<!-)$/u;

/**
 * A practical check of an address as people type them (RFC 5321 limits, internationalised
 * addresses allowed; quoted local parts, comments and IP-literal domains refused).
 */
export function isValidEmail(email: string): boolean {
  if (!email.isWellFormed() || INVISIBLE.test(email)) return false;
  if (utf8.encode(email).length > defaults.email.maxLength) return false;
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1) return false;
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (utf8.encode(local).length > 64 || LOCAL_FORBIDDEN.test(local)) return false;
  if (local.startsWith('.') || local.endsWith('.') || local.includes('..')) return false;
  const labels = domain.split('.');
  if (labels.length < 2) return false;
  if (!labels.every((label) => LABEL.test(label))) return false;
  return !/^\d+$/.test(labels[labels.length - 1] ?? '');
}
