import { Readable } from 'node:stream';
import type { Parser } from '../types.js';
import { csvRecords } from './csv-rows.js';
import {
  array,
  date,
  flag,
  importedMetadata,
  isObject,
  type Json,
  object,
  selfDescribed,
  text,
  type VendorRow,
  type VendorUser,
} from './fields.js';
import { jsonArrayItems } from './json-items.js';
import { numberedLines } from './lines.js';

/**
 * Supabase (docs/design.md §16): rows of `auth.users`, as CSV (`\copy … with csv header`)
 * or JSON (one object a line from `row_to_json`, or one array from `json_agg`), told apart
 * by the first character. Columns: `id`, `email`, `encrypted_password` (bcrypt),
 * `email_confirmed_at`, `raw_user_meta_data`, `raw_app_meta_data`, `created_at`,
 * `deleted_at`, `is_anonymous`; and, when the export query adds it, `identities`: the
 * user's `auth.identities` rows as a JSON array (`provider`, `provider_id`,
 * `identity_data`).
 */
export const parseSupabase: Parser = async function* (input) {
  const { first, stream } = await peek(input);
  if (first === '[') {
    for await (const { line, value } of jsonArrayItems(stream, '$.*')) yield fromRow(line, value);
  } else if (first === '{') {
    for await (const { line, text: json } of numberedLines(stream)) {
      let value: unknown;
      try {
        value = JSON.parse(json);
      } catch {
        yield { line, reason: 'is not a JSON object (one auth.users row a line)' };
        continue;
      }
      yield fromRow(line, value);
    }
  } else {
    for await (const { line, record, error } of csvRecords(stream, {
      format: 'auth.users as CSV',
      columns: ['id', 'email', 'encrypted_password'],
    })) {
      yield record ? fromRow(line, record) : { line, reason: error ?? 'unreadable record' };
    }
  }
};

/** Supabase's provider names -> Latchkey's. `email` and `phone` are not social. */
const SOCIAL: Record<string, string> = {
  google: 'google',
  facebook: 'facebook',
  github: 'github',
  apple: 'apple',
};

function fromRow(line: number, row: unknown): VendorRow {
  if (!isObject(row)) return { line, reason: 'is not an auth.users row' };
  const email = text(row.email);
  if (!email)
    return { line, reason: 'has no email (Latchkey users sign in with an e-mail address)' };
  if (text(row.deleted_at)) return { line, reason: 'was deleted in Supabase (deleted_at is set)' };
  if (flag(row.is_anonymous)) return { line, reason: 'is an anonymous Supabase user' };
  const notes: string[] = [];
  const identities: VendorUser['identities'] = [];
  for (const identity of (array(row.identities) ?? []).filter(isObject)) {
    const provider = text(identity.provider);
    const data = object(identity.identity_data);
    // `provider_id` since 2023; before, the provider's id was in `id`; `sub` is in both.
    const subject = text(identity.provider_id) ?? text(data?.sub) ?? text(identity.id);
    if (!provider || provider === 'email' || provider === 'phone' || !subject) continue;
    const mapped = SOCIAL[provider];
    if (mapped) identities.push({ provider: mapped, subject, email: text(data?.email) ?? null });
    else notes.push(`identity ${provider}:${subject} skipped: Latchkey has no such provider`);
  }
  const meta = object(row.raw_user_meta_data);
  const { provider: _p, providers: _ps, ...appMeta } = object(row.raw_app_meta_data) ?? {};
  const hash = text(row.encrypted_password);
  const createdAt = date(row.created_at);
  const bannedUntil = date(row.banned_until);
  return {
    line,
    email,
    emailVerified: Boolean(text(row.email_confirmed_at) ?? text(row.confirmed_at)),
    name: text(meta?.full_name) ?? text(meta?.name) ?? null,
    metadata: importedMetadata('supabase', text(row.id), meta, appMeta as Json),
    identities,
    ...((bannedUntil && bannedUntil.getTime() > Date.now()) || text(row.banned_until) === 'infinity'
      ? { disabled: true }
      : {}),
    ...(hash ? { password: selfDescribed(hash) } : {}),
    ...(createdAt ? { createdAt } : {}),
    ...(notes.length > 0 ? { notes } : {}),
  };
}

/** The first non-blank character of a stream, and the stream again from its start. */
async function peek(input: Readable): Promise<{ first: string; stream: Readable }> {
  const iterator = input[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const seen: Buffer[] = [];
  let first = '';
  while (first === '') {
    const next = await iterator.next();
    if (next.done) break;
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    seen.push(chunk);
    first = chunk
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .trimStart()
      .charAt(0);
  }
  async function* replay() {
    yield* seen;
    for (let next = await iterator.next(); !next.done; next = await iterator.next())
      yield next.value;
  }
  return { first, stream: Readable.from(replay(), { objectMode: false }) };
}
