import { randomBytes } from 'node:crypto';
import { type Config, ConfigError, writeSecretFile } from '../config/config.js';
import { rotateMasterSecret } from '../modules/master-secret/index.js';
import { parse, UsageError } from './args.js';
import type { OpenedDatabase } from './opened.js';
import { json, type Output } from './output.js';

/**
 * `latchkey secret rotate`: every sealed value sealed again under a new master secret, in one
 * transaction. The new secret comes from LATCHKEY_NEW_SECRET, or is generated; it replaces
 * the secret file when the old one came from there, and is printed once otherwise.
 */
export async function secretCommand(
  config: Config,
  database: OpenedDatabase,
  args: string[],
  output: Output,
  newSecret: string | undefined,
): Promise<void> {
  const [sub, ...rest] = args;
  const { values } = parse(rest, { json: { type: 'boolean' } });
  if (sub !== 'rotate') throw new UsageError('usage: latchkey secret rotate [--json]');
  if (newSecret !== undefined && newSecret.length < 32)
    throw new ConfigError('LATCHKEY_NEW_SECRET must be at least 32 characters');
  if (newSecret === config.secret)
    throw new ConfigError('LATCHKEY_NEW_SECRET is the current secret; nothing to rotate');
  const next = newSecret ?? randomBytes(32).toString('base64url');
  const resealed = await rotateMasterSecret(database.db, database.box, next);
  const source = config.secretSource;
  const file = source.kind === 'env' ? undefined : source.path;
  if (file) writeSecretFile(file, next, { replace: true });
  // Shown only when nobody else holds it: not given, and not written to a file.
  const shown = newSecret === undefined && !file ? next : undefined;
  if (values.json) return json(output, { resealed, file: file ?? null, secret: shown ?? null });
  const counts = Object.entries(resealed).map(([what, n]) => `${n} ${what}`);
  output.out(`Sealed again under the new master secret: ${counts.join(', ')}.`);
  if (file) output.out(`The new secret is in ${file}.`);
  if (shown) output.out(`New LATCHKEY_SECRET (shown only now): ${shown}`);
  if (!file)
    output.out('Set LATCHKEY_SECRET to the new secret on every instance, then start them.');
}
