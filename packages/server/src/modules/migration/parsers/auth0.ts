import { createReadStream } from 'node:fs';
import type { Parser } from '../types.js';
import {
  date,
  flag,
  importedMetadata,
  isObject,
  type Json,
  object,
  personName,
  selfDescribed,
  text,
  type VendorRow,
  type VendorUser,
} from './fields.js';
import { numberedLines } from './lines.js';

/**
 * Auth0 (docs/design.md §16). Two files:
 * - the user export, NDJSON (the dashboard's export, the export job, or the User
 *   Import/Export extension): `user_id` (`auth0|…`, `google-oauth2|…`), `email`,
 *   `email_verified`, `name`, `given_name`, `family_name`, `user_metadata`, `app_metadata`,
 *   `identities[]` (`provider`, `user_id`, `connection`, `isSocial`), `created_at`;
 * - the password-hash export Auth0 support hands out (the first companion file), NDJSON
 *   with `_id: { $oid }`, `alt_id` (a custom id, when the user has one), `email`,
 *   `email_verified`, `passwordHash` (bcrypt, `$2b$10$…`) and `connection`.
 * A database user's id is `auth0|` + (`alt_id` or `_id.$oid`); a row joins its hash by that
 * id, else by e-mail. Hash records no user row claimed are imported on their own (their
 * lines are those of the hash export). The hash export is held in memory while the user
 * export streams: about 150 bytes a user.
 */
export const parseAuth0: Parser = async function* (input, options) {
  const hashes = options.companions?.[0] ? await readHashExport(options.companions[0]) : undefined;
  for await (const { line, text: json } of numberedLines(input)) {
    let record: unknown;
    try {
      record = JSON.parse(json);
    } catch {
      yield { line, reason: 'is not a JSON object (the user export has one user a line)' };
      continue;
    }
    if (!isObject(record)) {
      yield { line, reason: 'is not a JSON object (the user export has one user a line)' };
      continue;
    }
    yield fromUserRecord(line, record, hashes);
  }
  if (hashes) yield* hashes.unclaimed();
};

/**
 * Auth0's social connections (identity `provider`) -> Latchkey's provider ids. The subject
 * is the identity's `user_id`, which is the provider's own id for these.
 */
const SOCIAL: Record<string, string> = {
  'google-oauth2': 'google',
  facebook: 'facebook',
  github: 'github',
  apple: 'apple',
};

function fromUserRecord(line: number, u: Json, hashes: HashExport | undefined): VendorRow {
  const userId = text(u.user_id);
  const email = text(u.email);
  if (!email)
    return { line, reason: 'has no email (Latchkey users sign in with an e-mail address)' };
  const notes: string[] = [];
  const identities: VendorUser['identities'] = [];
  let databaseId: string | undefined;
  const listed = Array.isArray(u.identities)
    ? u.identities.filter(isObject)
    : // An export without the identities field: the user id says the primary one.
      userId?.includes('|')
      ? [
          {
            provider: userId.slice(0, userId.indexOf('|')),
            user_id: userId.slice(userId.indexOf('|') + 1),
          },
        ]
      : [];
  for (const identity of listed) {
    const provider = text(identity.provider);
    const subject =
      text(identity.user_id) ??
      (typeof identity.user_id === 'number' ? String(identity.user_id) : undefined);
    if (!provider || !subject) continue;
    if (provider === 'auth0') {
      databaseId = subject;
    } else if (SOCIAL[provider]) {
      identities.push({
        provider: SOCIAL[provider],
        subject,
        email: text(object(identity.profileData)?.email) ?? null,
      });
    } else {
      // Among them Microsoft (`windowslive`, `waad`): Auth0 keeps an id Latchkey's Microsoft
      // sign-in never sees (Live id, or Azure's per-application `sub`; Latchkey keys `oid`).
      notes.push(`identity ${provider}|${subject} skipped: Latchkey has no such provider`);
    }
  }
  // Only a database user has a hash; a social-only user with the same address is another
  // Auth0 user, whose hash this is not.
  const hash = databaseId || listed.length === 0 ? hashes?.claim(databaseId, email) : undefined;
  let password: VendorUser['password'];
  if (hash?.passwordHash) password = selfDescribed(hash.passwordHash);
  else if (databaseId && hashes)
    notes.push('no password hash in the hash export: imported without a password');
  return {
    line,
    email,
    emailVerified: flag(u.email_verified) || hash?.emailVerified === true,
    name: personName(u.given_name, u.family_name, text(u.name) === email ? undefined : u.name),
    metadata: importedMetadata('auth0', userId, object(u.user_metadata), object(u.app_metadata)),
    password,
    identities,
    ...(flag(u.blocked) ? { disabled: true } : {}),
    ...(date(u.created_at) ? { createdAt: date(u.created_at) } : {}),
    ...(notes.length > 0 ? { notes } : {}),
  };
}

interface HashRecord {
  line: number;
  id: string | undefined;
  email: string | undefined;
  emailVerified: boolean;
  passwordHash: string | undefined;
  claimed: boolean;
  error?: string;
}

interface HashExport {
  claim(id: string | undefined, email: string): HashRecord | undefined;
  unclaimed(): Iterable<VendorRow>;
}

async function readHashExport(path: string): Promise<HashExport> {
  const byId = new Map<string, HashRecord>();
  const byEmail = new Map<string, HashRecord>();
  const all: HashRecord[] = [];
  for await (const { line, text: json } of numberedLines(createReadStream(path))) {
    let r: unknown;
    try {
      r = JSON.parse(json);
    } catch {}
    if (!isObject(r)) {
      all.push({
        line,
        id: undefined,
        email: undefined,
        emailVerified: false,
        passwordHash: undefined,
        claimed: false,
        error: 'is not a JSON object',
      });
      continue;
    }
    // Some records keep the address only in `identifiers` ({ type: 'email', value, verified }).
    const identifier = Array.isArray(r.identifiers)
      ? r.identifiers.filter(isObject).find((i) => i.type === 'email')
      : undefined;
    const record: HashRecord = {
      line,
      id: text(r.alt_id) ?? text(object(r._id)?.$oid) ?? text(r._id),
      email: text(r.email) ?? text(identifier?.value),
      emailVerified: flag(r.email_verified) || flag(identifier?.verified),
      passwordHash: text(r.passwordHash),
      claimed: false,
    };
    all.push(record);
    if (record.id) byId.set(record.id, record);
    if (record.email) byEmail.set(record.email.toLowerCase(), record);
  }
  return {
    claim(id, email) {
      const record = (id ? byId.get(id) : undefined) ?? byEmail.get(email.toLowerCase());
      if (record) record.claimed = true;
      return record;
    },
    *unclaimed() {
      for (const r of all) {
        if (r.claimed) continue;
        if (r.error) {
          yield { line: r.line, reason: `password-hash export: ${r.error}` };
        } else if (!r.email) {
          yield { line: r.line, reason: 'password-hash export: record has no email' };
        } else {
          yield {
            line: r.line,
            email: r.email,
            emailVerified: r.emailVerified,
            name: null,
            metadata: importedMetadata(
              'auth0',
              r.id ? `auth0|${r.id}` : undefined,
              undefined,
              undefined,
            ),
            ...(r.passwordHash ? { password: selfDescribed(r.passwordHash) } : {}),
            identities: [],
            notes: [
              'only in the password-hash export (line numbers of that file): no name or metadata',
            ],
          };
        }
      }
    },
  };
}
