import { isImportedHash, splitImportedHash } from '../../../crypto/imported-hashes/index.js';
import type { ExportedUser } from '../export.service.js';
import type { ImportRow, Parser } from '../types.js';
import { numberedLines } from './lines.js';

/**
 * Latchkey's own export (export.service.ts), one JSON object a line. A tenant's argon2id
 * hash comes in as `argon2id` (re-hashed with this tenant's parameters at the first
 * sign-in); one not yet upgraded comes in as its algorithm. Factors are not carried: their
 * secrets never leave the server, so the user enrols them again.
 */
export const parseLatchkey: Parser = async function* (input) {
  for await (const { line, text } of numberedLines(input)) {
    yield toRow(line, text);
  }
};

function toRow(line: number, text: string): ImportRow {
  let u: Partial<ExportedUser>;
  try {
    u = JSON.parse(text) as Partial<ExportedUser>;
  } catch {
    return { line, reason: 'not a JSON object' };
  }
  if (typeof u !== 'object' || u === null || Array.isArray(u))
    return { line, reason: 'not a JSON object' };
  if (typeof u.email !== 'string') return { line, reason: 'email is missing' };
  if (u.identities !== undefined && !Array.isArray(u.identities))
    return { line, reason: 'identities must be a list' };
  const created = typeof u.createdAt === 'string' ? new Date(u.createdAt) : undefined;
  const hash = typeof u.passwordHash === 'string' ? u.passwordHash : undefined;
  return {
    line,
    email: u.email,
    emailVerified: u.emailVerified === true,
    name: typeof u.name === 'string' ? u.name : null,
    metadata: u.metadata,
    roles: u.roles,
    disabled: u.disabled === true,
    password:
      hash === undefined
        ? undefined
        : isImportedHash(hash)
          ? splitImportedHash(hash)
          : { algorithm: hash.startsWith('$argon2i$') ? 'argon2i' : 'argon2id', encoded: hash },
    identities: (u.identities ?? []).map((i) => ({
      provider: String(i?.provider),
      subject: String(i?.subject ?? ''),
      issuer: typeof i?.issuer === 'string' ? i.issuer : undefined,
      email: typeof i?.email === 'string' ? i.email : null,
    })),
    createdAt: created && !Number.isNaN(created.getTime()) ? created : undefined,
  };
}
