import { sha1HexUpper } from '../../crypto/hash.js';
import type { FieldError } from '../../errors/index.js';
import { COMMON_PASSWORDS } from './common-passwords.js';

/**
 * docs/design.md §13: refuses a password that a breached-password range API knows
 * (k-anonymity: only the first 5 hex characters of its SHA-1 leave the server) or that the
 * bundled list of common passwords holds. The answer is a field error, or undefined.
 */
export interface BreachedPasswords {
  check(password: string): Promise<FieldError | undefined>;
}

export interface BreachedPasswordsOptions {
  /** `{url}/range/{prefix}` is asked; undefined: only the bundled list. */
  url: string | undefined;
  timeoutMs: number;
  /** Told when the range API failed and the bundled list alone decided. */
  warn: (fields: Record<string, unknown>, message: string) => void;
}

const ADVICE =
  'choose another one: a passphrase of four or more unrelated words is easy to remember and hard to guess';

function breached(count: number): FieldError {
  const times = count === 1 ? 'once' : `${count.toLocaleString('en-US')} times`;
  return {
    path: '/password',
    code: 'password_breached',
    message: `password has appeared in known data breaches (${times}), so attackers try it early; ${ADVICE}`,
  };
}

const COMMON: FieldError = {
  path: '/password',
  code: 'password_breached',
  message: `password is one of the most common passwords, so attackers try it first; ${ADVICE}`,
};

let common: Set<string> | undefined;

/** In the bundled list (lower case), compared as the hasher sees it, in any case. */
function isCommon(password: string): boolean {
  common ??= new Set(COMMON_PASSWORDS.split('\n'));
  return common.has(password.normalize('NFKC').toLowerCase());
}

/**
 * The range API's count for `suffix` in its answer: lines `SUFFIX:COUNT` (CRLF). A padding
 * line (`Add-Padding: true`) has count 0 and so is no breach.
 */
function countIn(body: string, suffix: string): number {
  for (const line of body.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0 || line.slice(0, colon).trim().toUpperCase() !== suffix) continue;
    const count = Number.parseInt(line.slice(colon + 1).trim(), 10);
    return Number.isFinite(count) && count > 0 ? count : 0;
  }
  return 0;
}

export function createBreachedPasswords(options: BreachedPasswordsOptions): BreachedPasswords {
  async function rangeCount(password: string): Promise<number | undefined> {
    if (!options.url) return undefined;
    const digest = sha1HexUpper(password.normalize('NFKC'));
    const prefix = digest.slice(0, 5);
    try {
      const res = await fetch(`${options.url}/range/${prefix}`, {
        headers: { 'add-padding': 'true' },
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      if (!res.ok) {
        await res.body?.cancel();
        throw new Error(`the range API answered ${res.status}`);
      }
      return countIn(await res.text(), digest.slice(5));
    } catch (error) {
      // The prefix alone is logged: never the password or its whole hash.
      options.warn(
        { err: error, prefix, timeoutMs: options.timeoutMs },
        'breached-password range API failed; the bundled list of common passwords decided',
      );
      return undefined;
    }
  }

  return {
    async check(password) {
      // The bundled list first: its passwords need no request.
      if (isCommon(password)) return COMMON;
      const count = await rangeCount(password);
      return count ? breached(count) : undefined;
    },
  };
}
