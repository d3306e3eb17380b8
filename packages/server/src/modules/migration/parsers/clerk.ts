import { firebaseScryptEncoded } from '../../../crypto/imported-hashes/index.js';
import type { Parser } from '../types.js';
import { csvRecords } from './csv-rows.js';
import { importedMetadata, personName, text, type VendorUser } from './fields.js';

/**
 * Clerk (docs/design.md §16): the CSV the dashboard exports (Settings -> User exports), the
 * only export with password digests. Columns: `id, first_name, last_name, username,
 * primary_email_address, primary_phone_number, verified_email_addresses,
 * unverified_email_addresses, verified_phone_numbers, unverified_phone_numbers,
 * totp_secret, password_digest, password_hasher`. The export has no metadata and no
 * external (social) accounts; those come only from Clerk's API, without passwords.
 */
export const parseClerk: Parser = async function* (input) {
  for await (const { line, record, error } of csvRecords(input, {
    format: "Clerk's user export",
    columns: ['id', 'primary_email_address'],
  })) {
    if (!record) {
      yield { line, reason: error ?? 'unreadable record' };
      continue;
    }
    const email = text(record.primary_email_address);
    if (!email) {
      yield {
        line,
        reason: 'has no primary_email_address (Latchkey users sign in with an e-mail address)',
      };
      continue;
    }
    const notes: string[] = [];
    const password = digest(record.password_digest, record.password_hasher);
    const others = addresses(record.verified_email_addresses)
      .concat(addresses(record.unverified_email_addresses))
      .filter((a) => a.toLowerCase() !== email.toLowerCase());
    if (others.length > 0) notes.push(`other addresses not carried: ${others.join(', ')}`);
    if (text(record.totp_secret))
      notes.push('authenticator app (TOTP) not carried: the user sets it up again');
    const username = text(record.username);
    const user: VendorUser = {
      line,
      email,
      emailVerified: addresses(record.verified_email_addresses).some(
        (a) => a.toLowerCase() === email.toLowerCase(),
      ),
      name: personName(record.first_name, record.last_name),
      metadata: importedMetadata(
        'clerk',
        text(record.id),
        username ? { username } : undefined,
        undefined,
      ),
      identities: [],
      ...(password ? { password } : {}),
      ...(notes.length > 0 ? { notes } : {}),
    };
    yield user;
  }
};

/** A list column: Clerk separates several addresses with `|` (commas and `;` accepted too). */
const addresses = (v: string | undefined): string[] =>
  (v ?? '').split(/[|,;\s]+/).filter((a) => a.includes('@'));

/**
 * `password_digest` by `password_hasher`, in the forms Clerk documents for each hasher.
 * The others (md5, sha256, phpass, pbkdf2_sha1, bcrypt_sha256_django, Clerk's base64-salt
 * `pbkdf2_sha256`) go on under their Clerk names: `importUsers` imports such a user
 * without a password and reports it.
 */
function digest(value: string | undefined, hasher: string | undefined): VendorUser['password'] {
  const encoded = text(value);
  if (!encoded) return undefined;
  const name = text(hasher)?.toLowerCase() ?? 'bcrypt';
  switch (name) {
    case 'bcrypt':
      return { algorithm: 'bcrypt', encoded };
    case 'argon2id':
      return { algorithm: 'argon2id', encoded };
    case 'argon2i':
      return { algorithm: 'argon2i', encoded };
    // Django's own form, `pbkdf2_sha256$<iterations>$<salt>$<base64 hash>`.
    case 'pbkdf2_sha256_django':
      return { algorithm: 'pbkdf2-sha256', encoded };
    case 'scrypt_firebase': {
      // `<hash>$<salt>$<signer key>$<salt separator>$<rounds>$<memory cost>`, all but the
      // last two in base64.
      const [hash = '', salt = '', signerKey = '', saltSeparator = '', rounds, memCost] =
        encoded.split('$');
      if (!/^\d{1,2}$/.test(rounds ?? '') || !/^\d{1,2}$/.test(memCost ?? ''))
        return { algorithm: name, encoded };
      return {
        algorithm: 'firebase-scrypt',
        encoded: firebaseScryptEncoded({
          hash,
          salt,
          signerKey,
          saltSeparator,
          rounds: Number(rounds),
          memCost: Number(memCost),
        }),
      };
    }
    default:
      return { algorithm: name, encoded };
  }
}
