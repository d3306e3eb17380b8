import type { Kysely } from 'kysely';
import {
  APP_TYPES,
  type App,
  createApp,
  deleteApp,
  getApp,
  listApps,
  rotateAppSecret,
  updateApp,
} from '../modules/oauth/index.js';
import type { AppType, Publisher, Schema } from '../storage/index.js';
import { parse, required, UsageError } from './args.js';
import { json, type Output } from './output.js';

const APP_FLAGS = {
  tenant: { type: 'string' },
  name: { type: 'string' },
  type: { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  'post-logout-redirect-uri': { type: 'string', multiple: true },
  grace: { type: 'string' },
  'pkce-optional': { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--grace 24h`: a whole number of seconds, minutes, hours or days; `0` for none. */
function duration(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (value === '0') return 0;
  const match = /^(\d+)([smhd])$/.exec(value);
  if (!match?.[1] || !match[2])
    throw new UsageError(`${flag} must be a duration such as 30m, 24h or 7d (or 0)`);
  return Number(match[1]) * (UNITS[match[2]] ?? 0);
}

function describeApp(output: Output, app: App): void {
  output.out(`app          ${app.id}`);
  output.out(`name         ${app.name}`);
  output.out(`type         ${app.type} (${app.confidential ? 'confidential' : 'public'})`);
  if (app.type !== 'm2m')
    output.out(`pkce         ${app.pkceOptional ? 'optional' : 'required (S256)'}`);
  output.out(`redirect     ${app.redirectUris.join(' ') || '(none)'}`);
  if (app.postLogoutRedirectUris.length)
    output.out(`after logout ${app.postLogoutRedirectUris.join(' ')}`);
  if (app.previousSecretExpiresAt)
    output.out(`old secret   accepted until ${app.previousSecretExpiresAt}`);
}

/** `latchkey app …` (docs/design.md §14): a tenant's OAuth clients. */
export async function appCommand(
  deps: { db: Kysely<Schema>; bus: Publisher },
  args: string[],
  output: Output,
): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, APP_FLAGS);
  const tenantId = required(values.tenant, '--tenant');
  const { db } = deps;
  switch (sub) {
    case 'create': {
      const type = required(values.type, '--type');
      if (!(APP_TYPES as readonly string[]).includes(type))
        throw new UsageError(`--type must be ${APP_TYPES.join(', ')}`);
      if (values['pkce-optional'] && type !== 'web')
        throw new UsageError('--pkce-optional is for web apps: public clients always use PKCE');
      const made = await createApp(db, tenantId, {
        name: required(values.name, '--name'),
        type: type as AppType,
        redirectUris: values['redirect-uri'],
        postLogoutRedirectUris: values['post-logout-redirect-uri'],
        pkceOptional: values['pkce-optional'],
      });
      if (values.json) return json(output, made);
      describeApp(output, made.app);
      if (made.clientSecret)
        output.out(`secret       ${made.clientSecret}   (shown only now; store it safely)`);
      return;
    }
    case 'list': {
      const apps = await listApps(db, tenantId);
      if (values.json) return json(output, apps);
      for (const app of apps) output.out(`${app.id}  ${app.type.padEnd(6)}  ${app.name}`);
      return;
    }
    case 'show': {
      const app = await getApp(db, tenantId, required(positionals[0], 'APP_ID'));
      return values.json ? json(output, app) : describeApp(output, app);
    }
    case 'update': {
      const appId = required(positionals[0], 'APP_ID');
      if (values.type) throw new UsageError("an app's type cannot change: create a new app");
      const redirects = values['redirect-uri'];
      const postLogout = values['post-logout-redirect-uri'];
      if (values.name === undefined && !redirects && !postLogout)
        throw new UsageError(
          'nothing to update: give --name, --redirect-uri or --post-logout-redirect-uri',
        );
      // Each list replaces the stored one as a whole; `--post-logout-redirect-uri ''` empties it.
      const app = await updateApp(deps, tenantId, appId, {
        name: values.name,
        redirectUris: redirects?.filter(Boolean),
        postLogoutRedirectUris: postLogout?.filter(Boolean),
      });
      return values.json ? json(output, app) : describeApp(output, app);
    }
    case 'delete': {
      const app = await deleteApp(deps, tenantId, required(positionals[0], 'APP_ID'));
      if (values.json) return json(output, app);
      output.out(`deleted ${app.id} (${app.name})`);
      return;
    }
    case 'rotate-secret': {
      const appId = required(positionals[0], 'APP_ID');
      const made = await rotateAppSecret(deps, tenantId, appId, duration(values.grace, '--grace'));
      if (values.json) return json(output, made);
      describeApp(output, made.app);
      output.out(`secret       ${made.clientSecret}   (shown only now; store it safely)`);
      return;
    }
    default:
      throw new UsageError(
        'usage: latchkey app create|list|show|update|delete|rotate-secret --tenant ID …',
      );
  }
}
