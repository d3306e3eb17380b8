import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Config } from '../config/config.js';
import type { Environment, MfaPolicy, Plan } from '../config/defaults.js';
import { createTenantsFromLines, provisionTenant } from '../modules/provisioning/index.js';
import { SigningKeys } from '../modules/sessions/index.js';
import { getTenant, searchTenants, updateTenant } from '../modules/tenants/index.js';
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
  from: { type: 'string' },
  search: { type: 'string' },
  limit: { type: 'string' },
  after: { type: 'string' },
} as const;

/** docs/design.md §21: a page of `tenant list` unless --limit says otherwise. */
const LIST_LIMIT = { default: 100, max: 1000 };

export async function tenantCommand(
  config: Config,
  database: OpenedDatabase & { bus: Publisher },
  args: string[],
  output: Output,
): Promise<number> {
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
      if (values.from !== undefined) return createFromFile(database, values.from, output);
      required(values.name, '--name');
      if (values['add-origin'] || values['remove-origin'])
        throw new UsageError('tenant create takes --origin URL (repeat it for each origin)');
      const signingKeys = new SigningKeys(db, database.box);
      const { tenant, secretKey, publishableKey } = await provisionTenant(
        { db, signingKeys },
        { ...input, environment: values.env as Environment | undefined },
        { name: 'default' },
      );
      if (values.json) json(output, { tenant, secretKey, publishableKey });
      else {
        describeTenant(output, tenant, config.publicUrl);
        output.out(`secret key   ${secretKey}   (shown only now; store it safely)`);
        output.out(`publishable  ${publishableKey}`);
      }
      return 0;
    }
    case 'list': {
      const limit = integer(values.limit, '--limit') ?? LIST_LIMIT.default;
      if (limit < 1 || limit > LIST_LIMIT.max)
        throw new UsageError(`--limit must be 1 to ${LIST_LIMIT.max}`);
      const page = await searchTenants(db, { query: values.search, after: values.after, limit });
      if (values.json) json(output, page.data);
      else
        for (const t of page.data)
          output.out(`${t.id}  ${t.environment.padEnd(11)}  ${t.plan.padEnd(10)}  ${t.name}`);
      // On stderr, so that stdout stays the page itself (--json: one array).
      if (page.next) {
        const again = ['latchkey tenant list'];
        if (values.search) again.push(`--search ${JSON.stringify(values.search)}`);
        if (values.limit) again.push(`--limit ${limit}`);
        output.err(
          `next page: ${again.join(' ')} --after ${page.next}${values.json ? ' --json' : ''}`,
        );
      }
      return 0;
    }
    case 'show': {
      const tenant = await getTenant(db, required(positionals[0], 'TENANT_ID'));
      if (values.json) json(output, tenant);
      else describeTenant(output, tenant, config.publicUrl);
      return 0;
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
      if (values.json) json(output, tenant);
      else describeTenant(output, tenant, config.publicUrl);
      return 0;
    }
    default:
      throw new UsageError('usage: latchkey tenant create|list|show|update …');
  }
}

/**
 * `tenant create --from FILE.jsonl` (docs/design.md §21): one tenant per line, streamed;
 * stdout gets one JSON line per tenant created, with its keys (shown only now), stderr one
 * line per refused line. Exit status 1 when any line was refused.
 */
async function createFromFile(
  database: OpenedDatabase,
  file: string,
  output: Output,
): Promise<number> {
  const input = createReadStream(file);
  const opened = new Promise<void>((resolve, reject) => {
    input.once('open', () => resolve());
    input.once('error', (error) => reject(new UsageError(`cannot read ${file}: ${error.message}`)));
  });
  await opened;
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let created = 0;
  let refused = 0;
  for await (const result of createTenantsFromLines(database, lines)) {
    if ('created' in result) {
      created++;
      const { tenant, secretKey, publishableKey } = result.created;
      output.out(JSON.stringify({ line: result.line, tenant, secretKey, publishableKey }));
    } else {
      refused++;
      output.err(`refused line ${result.line}: ${result.refused}`);
    }
  }
  output.err(`created ${created}, refused ${refused}`);
  return refused > 0 ? 1 : 0;
}
