import { randomBytes } from 'node:crypto';
import { renameSync, rmSync } from 'node:fs';
import { type Config, ConfigError, writeSecretFile } from '../config/config.js';
import { SecretBox } from '../crypto/secret-box.js';
import { rotateMasterSecret } from '../modules/master-secret/index.js';
import type { Database } from '../storage/index.js';
import { parse, UsageError } from './args.js';
import { json, type Output } from './output.js';

/** What `latchkey secret rotate` reads from the environment besides the configuration. */
export interface RotationEnv {
  /** LATCHKEY_NEW_SECRET */
  next: string | undefined;
  /** LATCHKEY_PREVIOUS_SECRET: for a database an older version sealed with two secrets. */
  previous: string | undefined;
}

function checked(name: string, value: string | undefined): string | undefined {
  if (value !== undefined && value.length < 32)
    throw new ConfigError(`${name} must be at least 32 characters`);
  return value;
}

/**
 * `latchkey secret rotate`: every sealed value sealed again under a new master secret, in one
 * transaction. The new secret is kept before the database is tied to it: from
 * LATCHKEY_NEW_SECRET (the operator stored it first), or, when the current one is the data
 * folder's file, generated into `{file}.next` and moved in place once the database commits.
 */
export async function secretCommand(
  config: Config,
  database: Database,
  args: string[],
  output: Output,
  env: RotationEnv,
): Promise<void> {
  const [sub, ...rest] = args;
  const { values } = parse(rest, { json: { type: 'boolean' } });
  if (sub !== 'rotate') throw new UsageError('usage: latchkey secret rotate [--json]');
  const given = checked('LATCHKEY_NEW_SECRET', env.next);
  const previous = checked('LATCHKEY_PREVIOUS_SECRET', env.previous);
  if (given === config.secret)
    throw new ConfigError('LATCHKEY_NEW_SECRET is the current secret; nothing to rotate');
  const source = config.secretSource;
  const file = source.kind === 'env' ? undefined : source.path;
  if (!file && !given)
    throw new ConfigError(
      'Set LATCHKEY_NEW_SECRET to the new secret (at least 32 characters), stored first where your instances will read LATCHKEY_SECRET',
    );
  const next = given ?? randomBytes(32).toString('base64url');
  const pending = file ? `${file}.next` : undefined;
  if (pending) writeSecretFile(pending, next, { replace: true });
  const current = [config.secret, previous].flatMap((s) => (s ? [new SecretBox(s)] : []));
  let resealed: Record<string, number>;
  try {
    resealed = await rotateMasterSecret(database.db, current, next);
  } catch (error) {
    if (pending) rmSync(pending, { force: true });
    throw error;
  }
  if (file && pending) {
    try {
      renameSync(pending, file);
    } catch (error) {
      throw new ConfigError(
        `The database is sealed under the new secret, which is in ${pending}, but it could not be moved to ${file} (${(error as Error).message}): move it there before starting Latchkey.`,
      );
    }
  }
  if (values.json) return json(output, { resealed, file: file ?? null });
  const counts = Object.entries(resealed).map(([what, n]) => `${n} ${what}`);
  output.out(`Sealed again under the new master secret: ${counts.join(', ')}.`);
  if (file) output.out(`The new secret is in ${file}.`);
  else output.out('Set LATCHKEY_SECRET to the new secret on every instance, then start them.');
}
