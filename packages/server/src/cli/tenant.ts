import type { Config } from '../config/config.js';
import type { Environment, MfaPolicy, Plan } from '../config/defaults.js';
import { provisionTenant } from '../modules/provisioning/index.js';
import { SigningKeys } from '../modules/sessions/index.js';
import { getTenant, listTenants, updateTenant } from '../modules/tenants/index.js';
import type { Publisher } from '../storage/index.js';
import { bool, integer, parse, required, UsageError } from './args.js';
import type { OpenedDatabase } from './opened.js';
import { describeTenant, json, type Output } from './output.js';

const TENANT_FLAGS = {
  name: { type: 'string' },
  plan: { type: 'string' },
  rps: { type: 'string' },
  rpm: { type: 'string' },
  env: { type: 'string' },
  origin: { type: 'string', multiple: true },
  'add-origin': { type: 'string', multiple: true },
  'remove-origin': { type: 'string', multiple: true },
  'require-verification': { type: 'string' },
  'token-ttl': { type: 'string' },
  'logo-url': { type: 'string' },
  'primary-color': { type: 'string' },
  audience: { type: 'string' },
  mfa: { type: 'string' },
  passkeys: { type: 'string' },
  'dynamic-registration': { type: 'string' },
  json: { type: 'boolean' },
} as const;

export async function tenantCommand(
  config: Config,
  database: OpenedDatabase & { bus: Publisher },
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
    // `--origin ''` on its own allows none.
    allowedOrigins: values.origin?.filter(Boolean),
    requireEmailVerification: bool(values['require-verification'], '--require-verification'),
    accessTokenTtl: integer(values['token-ttl'], '--token-ttl'),
    logoUrl: values['logo-url'],
    primaryColor: values['primary-color'],
    audience: values.audience,
    // docs/design.md §13; an unknown policy is refused by the tenant's validation.
    mfaPolicy: values.mfa as MfaPolicy | undefined,
    passkeysEnabled: bool(values.passkeys, '--passkeys', 'on or off'),
    // docs/design.md §14: RFC 7591 registration at /t/{id}/oauth/register.
    dynamicRegistration: bool(
      values['dynamic-registration'],
      '--dynamic-registration',
      'on or off',
    ),
  };
  switch (sub) {
    case 'create': {
      required(values.name, '--name');
      if (values['add-origin'] || values['remove-origin'])
        throw new UsageError('tenant create takes --origin URL (repeat it for each origin)');
      const signingKeys = new SigningKeys(db, database.box);
      const { tenant, secretKey, publishableKey } = await provisionTenant(
        { db, signingKeys },
        { ...input, environment: values.env as Environment | undefined },
        { name: 'default' },
      );
      if (values.json) return json(output, { tenant, secretKey, publishableKey });
      describeTenant(output, tenant, config.publicUrl);
      output.out(`secret key   ${secretKey}   (shown only now; store it safely)`);
      output.out(`publishable  ${publishableKey}`);
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
      return values.json ? json(output, tenant) : describeTenant(output, tenant, config.publicUrl);
    }
    case 'update': {
      if (values.env)
        throw new UsageError('a tenant cannot change environment; create another tenant');
      const id = required(positionals[0], 'TENANT_ID');
      const adding = values['add-origin'] ?? [];
      const removing = values['remove-origin'] ?? [];
      if (values.origin && (adding.length || removing.length))
        throw new UsageError(
          '--origin replaces the whole list; give either --origin, or --add-origin / --remove-origin',
        );
      const before = values.origin ? (await getTenant(db, id)).allowedOrigins : [];
      const tenant = await updateTenant(database, id, {
        ...input,
        addOrigins: adding,
        removeOrigins: removing,
      });
      const dropped = before.filter((o) => !tenant.allowedOrigins.includes(o));
      if (dropped.length)
        output.err(
          `note: --origin replaced the allowed origins; no longer allowed: ${dropped.join(' ')} (--add-origin adds one and keeps the others)`,
        );
      return values.json ? json(output, tenant) : describeTenant(output, tenant, config.publicUrl);
    }
    default:
      throw new UsageError('usage: latchkey tenant create|list|show|update …');
  }
}
