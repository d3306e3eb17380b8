import type { Environment, Plan } from '../config/defaults.js';
import { createKey } from '../modules/keys/index.js';
import { createTenant, getTenant, listTenants, updateTenant } from '../modules/tenants/index.js';
import type { Database } from '../storage/index.js';
import { bool, integer, parse, required, UsageError } from './args.js';
import { describeTenant, json, type Output } from './output.js';

const TENANT_FLAGS = {
  name: { type: 'string' },
  plan: { type: 'string' },
  rps: { type: 'string' },
  rpm: { type: 'string' },
  env: { type: 'string' },
  origin: { type: 'string', multiple: true },
  'require-verification': { type: 'string' },
  'token-ttl': { type: 'string' },
  'logo-url': { type: 'string' },
  'primary-color': { type: 'string' },
  json: { type: 'boolean' },
} as const;

export async function tenantCommand(
  database: Database,
  args: string[],
  output: Output,
): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, TENANT_FLAGS);
  const db = database.db;
  const input = {
    name: values.name,
    plan: values.plan as Plan | undefined,
    rps: integer(values.rps, '--rps'),
    rpm: integer(values.rpm, '--rpm'),
    allowedOrigins: values.origin,
    requireEmailVerification: bool(values['require-verification'], '--require-verification'),
    accessTokenTtl: integer(values['token-ttl'], '--token-ttl'),
    logoUrl: values['logo-url'],
    primaryColor: values['primary-color'],
  };
  switch (sub) {
    case 'create': {
      required(values.name, '--name');
      const tenant = await createTenant(db, {
        ...input,
        environment: values.env as Environment | undefined,
      });
      const secret = await createKey(db, tenant.id, { kind: 'secret', name: 'default' });
      const publishable = await createKey(db, tenant.id, { kind: 'publishable', name: 'default' });
      if (values.json) {
        return json(output, {
          tenant,
          secretKey: secret.plaintext,
          publishableKey: publishable.plaintext,
        });
      }
      describeTenant(output, tenant);
      output.out(`secret key   ${secret.plaintext}   (shown only now; store it safely)`);
      output.out(`publishable  ${publishable.plaintext}`);
      return;
    }
    case 'list': {
      const tenants = await listTenants(db);
      if (values.json) return json(output, tenants);
      for (const t of tenants)
        output.out(`${t.id}  ${t.environment.padEnd(11)}  ${t.plan.padEnd(10)}  ${t.name}`);
      return;
    }
    case 'show': {
      const tenant = await getTenant(db, required(positionals[0], 'TENANT_ID'));
      return values.json ? json(output, tenant) : describeTenant(output, tenant);
    }
    case 'update': {
      if (values.env)
        throw new UsageError('a tenant cannot change environment; create another tenant');
      const tenant = await updateTenant(db, required(positionals[0], 'TENANT_ID'), input);
      return values.json ? json(output, tenant) : describeTenant(output, tenant);
    }
    default:
      throw new UsageError('usage: latchkey tenant create|list|show|update …');
  }
}
