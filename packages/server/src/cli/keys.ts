import type { Kysely } from 'kysely';
import { createKey, type KeyKind, listKeys, revokeKey } from '../modules/keys/index.js';
import type { Publisher, Schema } from '../storage/index.js';
import { parse, required, UsageError } from './args.js';
import { describeKey, json, type Output } from './output.js';

const KEY_FLAGS = {
  tenant: { type: 'string' },
  kind: { type: 'string' },
  scope: { type: 'string', multiple: true },
  name: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export async function keysCommand(
  deps: { db: Kysely<Schema>; bus: Publisher },
  args: string[],
  output: Output,
): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, KEY_FLAGS);
  const tenantId = required(values.tenant, '--tenant');
  const { db } = deps;
  switch (sub) {
    case 'create': {
      const kind = (values.kind ?? 'secret') as KeyKind;
      if (kind !== 'secret' && kind !== 'publishable')
        throw new UsageError('--kind must be secret or publishable');
      const { key, plaintext } = await createKey(db, tenantId, {
        kind,
        scopes: values.scope,
        name: values.name,
      });
      if (values.json) return json(output, { key, plaintext });
      describeKey(output, key);
      output.out(
        kind === 'secret' ? `${plaintext}   (shown only now; store it safely)` : plaintext,
      );
      return;
    }
    case 'list': {
      const keys = await listKeys(db, tenantId);
      if (values.json) return json(output, keys);
      for (const key of keys) describeKey(output, key);
      return;
    }
    case 'revoke': {
      const key = await revokeKey(deps, tenantId, required(positionals[0], 'KEY_ID'));
      return values.json ? json(output, key) : describeKey(output, key);
    }
    default:
      throw new UsageError('usage: latchkey keys create|list|revoke --tenant ID …');
  }
}
