import { SigningKeys } from '../modules/sessions/index.js';
import { getTenant } from '../modules/tenants/index.js';
import { parse, required, UsageError } from './args.js';
import type { OpenedDatabase } from './opened.js';
import { json, type Output } from './output.js';

export async function signingKeyCommand(
  database: OpenedDatabase,
  args: string[],
  output: Output,
): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, {
    tenant: { type: 'string' },
    now: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  const tenant = await getTenant(database.db, required(values.tenant, '--tenant'));
  const keys = new SigningKeys(database.db, database.box);
  switch (sub) {
    case 'rotate': {
      const result = await keys.rotate(
        tenant.id,
        tenant.accessTokenTtl,
        values.now ? 0 : undefined,
      );
      if (values.json) return json(output, result);
      output.out(`new signing key ${result.kid}: published now, signs from ${result.activatesAt}`);
      if (result.retired)
        output.out(`the old key ${result.retired} verifies until its last token has expired`);
      return;
    }
    case 'revoke': {
      const kid = required(positionals[0], 'KID');
      const result = await keys.revoke(tenant.id, kid);
      if (values.json) return json(output, result);
      output.out(`revoked ${result.revoked}: its tokens are inactive now; ${result.signing} signs`);
      return;
    }
    case 'list': {
      const list = await keys.list(tenant.id);
      if (values.json) return json(output, list);
      for (const k of list) {
        const state = k.retiredAt
          ? `signs until ${k.retiredAt}, published until ${k.publishUntil}`
          : `signs from ${k.activatesAt}`;
        output.out(`${k.kid}  created ${k.createdAt}  ${state}`);
      }
      return;
    }
    default:
      throw new UsageError(
        'usage: latchkey signing-key rotate|list|revoke --tenant ID [KID] [--now] [--json]',
      );
  }
}
