import { domainToASCII } from 'node:url';

/**
 * E-mail addresses are kept as typed (trimmed) and matched through a key: the local part
 * case-folded, the domain as DNS resolves it.
 *
 * The domain is mapped by UTS-46 (IDNA: the mapping every mail system applies before it
 * looks the domain up), so `yahoo.co.uk` written with a Kelvin sign (U+212A), full-width
 * letters or capitals is the one domain it reaches, and an internationalised domain matches
 * its `xn--` form.
 *
 * The local part belongs to the receiving server, so it is only case-folded, and only where
 * folding is safe: a code point is lowered only when upper-casing the result gives it back.
 * That folds `A`/`a` and `É`/`é`, but never merges look-alikes: the Kelvin sign lowers to
 * ASCII `k`, `İ` (U+0130) to `i` plus a combining dot; neither round-trips, so each stays
 * itself, and NFC and NFD spellings, full-width forms and dotless `ı` remain distinct.
 */
import { defaults } from '../../config/defaults.js';

export function emailKey(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 0) return foldCase(email);
  const domain = email.slice(at + 1);
  return `${foldCase(email.slice(0, at))}@${domainToASCII(domain) || foldCase(domain)}`;
}

function foldCase(text: string): string {
  let key = '';
  for (const ch of text) {
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
