import type { Kysely } from 'kysely';
import {
  createOperatorKey,
  listOperatorKeys,
  type OperatorKey,
  revokeOperatorKey,
} from '../modules/operators/index.js';
import type { Schema } from '../storage/index.js';
import { parse, required, UsageError } from './args.js';
import { json, type Output } from './output.js';

const describe = (output: Output, k: OperatorKey) =>
  output.out(
    `${k.id}  ${k.display}  ${k.revokedAt ? `revoked ${k.revokedAt}` : 'live'}  ${k.name ?? ''}`.trimEnd(),
  );

/** docs/design.md §21: the keys of the operator REST API (/v1/operator/…). */
export async function operatorKeyCommand(
  db: Kysely<Schema>,
  args: string[],
  output: Output,
): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, {
    name: { type: 'string' },
    json: { type: 'boolean' },
  });
  switch (sub) {
    case 'create': {
      const { key, plaintext } = await createOperatorKey(db, values.name);
      if (values.json) return json(output, { key, plaintext });
      describe(output, key);
      output.out(`${plaintext}   (shown only now; store it safely)`);
      return;
    }
    case 'list': {
      const keys = await listOperatorKeys(db);
      if (values.json) return json(output, keys);
      for (const key of keys) describe(output, key);
      return;
    }
    case 'revoke': {
      const key = await revokeOperatorKey(db, required(positionals[0], 'KEY_ID'));
      return values.json ? json(output, key) : describe(output, key);
    }
    default:
      throw new UsageError('usage: latchkey operator-key create|list|revoke …');
  }
}
