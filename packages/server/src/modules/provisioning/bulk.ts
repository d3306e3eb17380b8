import type { Kysely } from 'kysely';
import type { Environment, MfaPolicy, Plan } from '../../config/defaults.js';
import type { SecretBox } from '../../crypto/secret-box.js';
import { LatchkeyError } from '../../errors/index.js';
import type { Schema } from '../../storage/index.js';
import { SigningKeys } from '../sessions/index.js';
import type { TenantInput } from '../tenants/index.js';
import { type ProvisionedTenant, provisionTenant } from './provisioning.service.js';

/**
 * One line of `latchkey tenant create --from FILE.jsonl` (docs/design.md §21): the options
 * of `tenant create`, by the same names, in camelCase.
 */
const FIELDS: Record<string, (v: unknown) => Partial<TenantInput> | undefined> = {
  name: (v) => (typeof v === 'string' ? { name: v } : undefined),
  plan: (v) => (typeof v === 'string' ? { plan: v as Plan } : undefined),
  env: (v) => (typeof v === 'string' ? { environment: v as Environment } : undefined),
  origins: (v) =>
    Array.isArray(v) && v.every((o) => typeof o === 'string')
      ? { allowedOrigins: v as string[] }
      : undefined,
  rps: (v) => (typeof v === 'number' ? { rps: v } : undefined),
  rpm: (v) => (typeof v === 'number' ? { rpm: v } : undefined),
  requireVerification: (v) =>
    typeof v === 'boolean' ? { requireEmailVerification: v } : undefined,
  tokenTtl: (v) => (typeof v === 'number' ? { accessTokenTtl: v } : undefined),
  logoUrl: (v) => (typeof v === 'string' ? { logoUrl: v } : undefined),
  primaryColor: (v) => (typeof v === 'string' ? { primaryColor: v } : undefined),
  audience: (v) => (typeof v === 'string' ? { audience: v } : undefined),
  mfa: (v) => (typeof v === 'string' ? { mfaPolicy: v as MfaPolicy } : undefined),
  passkeys: (v) => (typeof v === 'boolean' ? { passkeysEnabled: v } : undefined),
  dynamicRegistration: (v) => (typeof v === 'boolean' ? { dynamicRegistration: v } : undefined),
};

/** The tenant input of one JSON line, or why it is refused. */
function tenantLine(text: string): TenantInput | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not valid JSON';
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'not a JSON object';
  const input: TenantInput = {};
  for (const [key, field] of Object.entries(value)) {
    const read = FIELDS[key];
    if (!read) return `unknown field ${key} (known: ${Object.keys(FIELDS).join(', ')})`;
    const part = read(field);
    if (!part) return `${key} has the wrong type`;
    Object.assign(input, part);
  }
  return input;
}

export type BulkResult =
  | { line: number; created: ProvisionedTenant }
  | { line: number; refused: string };

const reason = (error: unknown): string => {
  if (!(error instanceof LatchkeyError)) throw error;
  const fields = error.errors?.map((e) => `${e.path}: ${e.message}`).join('; ');
  return fields || error.message;
};

/**
 * Creates one tenant per line, each as `tenant create` does (signing key, publishable and
 * secret key), each in its own transaction: a line is created whole or refused with its
 * reason, and a refused line stops nothing. Blank lines are skipped. Streams: memory stays
 * flat however long the file.
 */
export async function* createTenantsFromLines(
  deps: { db: Kysely<Schema>; box: SecretBox },
  lines: AsyncIterable<string>,
): AsyncGenerator<BulkResult> {
  let line = 0;
  for await (const text of lines) {
    line++;
    if (!text.trim()) continue;
    const input = tenantLine(text);
    if (typeof input === 'string') {
      yield { line, refused: input };
      continue;
    }
    try {
      const created = await deps.db.transaction().execute((trx) =>
        provisionTenant({ db: trx, signingKeys: new SigningKeys(trx, deps.box) }, input, {
          name: 'default',
        }),
      );
      yield { line, created };
    } catch (error) {
      yield { line, refused: reason(error) };
    }
  }
}
