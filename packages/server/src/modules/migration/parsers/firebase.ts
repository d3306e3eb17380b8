import { firebaseScryptEncoded } from '../../../crypto/imported-hashes/index.js';
import type { FirebaseHashParameters, Parser } from '../types.js';
import {
  date,
  flag,
  importedMetadata,
  isObject,
  object,
  text,
  type VendorRow,
  type VendorUser,
} from './fields.js';
import { jsonArrayItems } from './json-items.js';

/**
 * Firebase Authentication (docs/design.md §16): `firebase auth:export users.json
 * --format=json` writes `{"users": [...]}`, each user pretty-printed over several lines:
 * `localId`, `email`, `emailVerified`, `passwordHash` and `salt` (standard base64),
 * `displayName`, `photoUrl`, `createdAt` (epoch milliseconds), `disabled`,
 * `customAttributes` (the custom claims, as JSON text) and `providerUserInfo[]`
 * (`providerId` such as `google.com`, `rawId`: the provider's id for the person). The
 * hashes are Firebase's modified scrypt; the project's parameters come from the command
 * line (`--hash-key --salt-separator --rounds --mem-cost`) and travel in each hash.
 */
export const parseFirebase: Parser = async function* (input, options) {
  for await (const { line, value } of jsonArrayItems(input, '$.users.*')) {
    yield fromUser(line, value, options.firebase);
  }
};

/** Firebase's `providerId` -> Latchkey's provider ids; `rawId` is the provider's subject. */
const SOCIAL: Record<string, string> = {
  'google.com': 'google',
  'facebook.com': 'facebook',
  'github.com': 'github',
  'apple.com': 'apple',
};

function fromUser(line: number, u: unknown, params: FirebaseHashParameters | undefined): VendorRow {
  if (!isObject(u)) return { line, reason: 'is not a user object' };
  const email = text(u.email);
  if (!email)
    return { line, reason: 'has no email (Latchkey users sign in with an e-mail address)' };
  const notes: string[] = [];
  const identities: VendorUser['identities'] = [];
  for (const info of Array.isArray(u.providerUserInfo) ? u.providerUserInfo.filter(isObject) : []) {
    const providerId = text(info.providerId);
    const subject = text(info.rawId);
    if (!providerId || !subject || providerId === 'password' || providerId === 'phone') continue;
    const provider = SOCIAL[providerId];
    if (provider) identities.push({ provider, subject, email: text(info.email) ?? null });
    else notes.push(`identity ${providerId}:${subject} skipped: Latchkey has no such provider`);
  }
  let password: VendorUser['password'];
  const hash = text(u.passwordHash);
  const salt = text(u.salt);
  if (hash && !params) {
    // Every password would be lost: better to stop and say what is missing.
    throw new Error(
      "Firebase password hashes need the project's --hash-key, --salt-separator, --rounds and --mem-cost (Firebase console: Authentication, Users, the menu above the list, Password hash parameters)",
    );
  }
  if (hash && salt && params) {
    password = {
      algorithm: 'firebase-scrypt',
      encoded: firebaseScryptEncoded({
        hash,
        salt,
        signerKey: params.hashKey,
        saltSeparator: params.saltSeparator,
        rounds: params.rounds,
        memCost: params.memCost,
      }),
    };
  } else if (hash) {
    // No salt: the engine finds the hash malformed and reports the user as passwordless.
    password = { algorithm: 'firebase-scrypt', encoded: hash };
  }
  const createdAt = date(u.createdAt);
  return {
    line,
    email,
    emailVerified: flag(u.emailVerified),
    name: text(u.displayName) ?? null,
    metadata: importedMetadata('firebase', text(u.localId), undefined, object(u.customAttributes)),
    identities,
    ...(flag(u.disabled) ? { disabled: true } : {}),
    ...(password ? { password } : {}),
    ...(createdAt ? { createdAt } : {}),
    ...(notes.length > 0 ? { notes } : {}),
  };
}
