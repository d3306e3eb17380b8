/**
 * The CLI's command table: every command and subcommand, its options and an example. The
 * dispatcher (index.ts) accepts only what is listed here, and answers `--help` / `-h` from it
 * before reading any configuration, so that a new command cannot go without its help.
 */

import { EVENT_TYPES } from '../modules/webhooks/index.js';

export interface Help {
  /** What follows `latchkey`, e.g. `tenant update ID [options]`. */
  usage: string;
  /** One or two sentences. */
  about: string;
  /** [flag, meaning]; `-h, --help` is added to every one. */
  options: readonly (readonly [string, string])[];
  /** A command line that works as shown, once its ids are filled in. */
  example: string;
}

export interface Command {
  /** One line for `latchkey help`. */
  summary: string;
  /** A command with subcommands (`latchkey tenant create`), or one that stands alone (`serve`). */
  subcommands?: Readonly<Record<string, Help>>;
  help?: Help;
}

const JSON_FLAG = ['--json', 'print JSON instead of text'] as const;

const EVENTS = EVENT_TYPES.join(', ');

const ORIGIN_FORM =
  'an origin is scheme://host[:port], e.g. https://app.example.com; http only for localhost / 127.0.0.1 on development tenants';

const MFA_FLAG = '--mfa off|optional|required';
const MFA_MEANING =
  'second factors: off, optional (users may add one), or required (set one up at the next sign-in)';

export const COMMANDS: Readonly<Record<string, Command>> = {
  serve: {
    summary: 'run the server',
    help: {
      usage: 'serve [--demo]',
      about:
        'Runs the HTTP server. It listens on HOST (default 0.0.0.0, every interface) and PORT (default 8787); with --demo (what `npm start` runs) HOST defaults to localhost, this machine only.',
      options: [
        [
          '--demo',
          'on first run create a demo tenant and an admin login and print them; listen on localhost unless HOST is set',
        ],
      ],
      example: 'PORT=8788 latchkey serve',
    },
  },
  migrate: {
    summary: 'bring a PostgreSQL database up to date (serve migrates SQLite itself)',
    help: {
      usage: 'migrate',
      about: 'Applies the pending database migrations, then exits.',
      options: [],
      example: 'DATABASE_URL=postgres://latchkey@db/latchkey latchkey migrate',
    },
  },
  tenant: {
    summary: 'create, list, show and change tenants',
    subcommands: {
      create: {
        usage: 'tenant create --name NAME [options] | --from FILE.jsonl',
        about:
          'Creates a tenant with its signing key, a secret key and a publishable key; the secret key is printed only once.',
        options: [
          ['--name NAME', 'the name users see on its pages (required)'],
          ['--env development|production', 'the environment (default development); never changes'],
          ['--plan free|pro|enterprise', 'the plan (default free)'],
          ['--rps N --rpm N', 'the rate limits of an enterprise tenant'],
          ['--origin URL', `an allowed origin; repeat for each (${ORIGIN_FORM})`],
          ['--require-verification true|false', 'sign-in needs a verified e-mail address'],
          ['--token-ttl SECONDS', 'access-token lifetime, 60 to 86400 (default 600)'],
          ['--logo-url https://...', 'the logo on its pages'],
          ['--primary-color #rrggbb', 'the colour of its pages'],
          ['--audience URI', "the tokens' aud (default {auth_url}/t/ID/api)"],
          [MFA_FLAG, `${MFA_MEANING} (default optional)`],
          ['--passkeys on|off', 'offer passkeys on its pages (default on)'],
          ['--dynamic-registration on|off', 'let apps register themselves (RFC 7591; default off)'],
          [
            '--from FILE.jsonl',
            'many tenants: one JSON object a line with the options above in camelCase (name, plan, env, origins, rps, rpm, requireVerification, tokenTtl, logoUrl, primaryColor, audience, mfa, passkeys, dynamicRegistration); prints one JSON line per tenant created, with its keys (shown only now); refused lines go to stderr with their number and reason, and the exit status is then 1',
          ],
          JSON_FLAG,
        ],
        example: 'latchkey tenant create --name Acme --origin http://localhost:5173',
      },
      list: {
        usage: 'tenant list [--search TEXT] [--limit N] [--after ID] [--json]',
        about:
          'Lists tenants, oldest first, a page at a time: id, environment, plan, name. When there are more, stderr says how to get the next page.',
        options: [
          ['--search TEXT', 'only tenants whose name or id contains TEXT, in any case'],
          ['--limit N', 'tenants on the page, 1 to 1000 (default 100)'],
          ['--after ID', 'the page after this tenant (the id the previous page named)'],
          JSON_FLAG,
        ],
        example: 'latchkey tenant list --search acme',
      },
      show: {
        usage: 'tenant show ID [--json]',
        about: 'Shows one tenant.',
        options: [JSON_FLAG],
        example: 'latchkey tenant show TENANT_ID --json',
      },
      update: {
        usage: 'tenant update ID [options]',
        about:
          'Changes a tenant; what is not given stays as it is. --add-origin and --remove-origin change the allowed origins one by one; --origin replaces the whole list.',
        options: [
          ['--add-origin URL', `allow one more origin; repeatable (${ORIGIN_FORM})`],
          ['--remove-origin URL', 'stop allowing an origin; repeatable'],
          [
            '--origin URL',
            "REPLACES the allowed origins with the ones given (repeat for each; --origin '' allows none)",
          ],
          ['--name NAME', 'a new name'],
          ['--plan free|pro|enterprise', 'another plan'],
          ['--rps N --rpm N', 'the rate limits of an enterprise tenant'],
          ['--require-verification true|false', 'sign-in needs a verified e-mail address'],
          ['--token-ttl SECONDS', 'access-token lifetime, 60 to 86400'],
          ['--logo-url https://...', "the logo on its pages ('' for none)"],
          ['--primary-color #rrggbb', "the colour of its pages ('' for the default)"],
          ['--audience URI', "the tokens' aud ('' for {auth_url}/t/ID/api)"],
          [MFA_FLAG, MFA_MEANING],
          ['--passkeys on|off', 'offer passkeys on its pages'],
          ['--dynamic-registration on|off', 'let apps register themselves (RFC 7591)'],
          JSON_FLAG,
        ],
        example: 'latchkey tenant update TENANT_ID --add-origin https://app.example.com',
      },
    },
  },
  'operator-key': {
    summary: 'create, list and revoke operator keys (the REST API for tenants, /v1/operator/…)',
    subcommands: {
      create: {
        usage: 'operator-key create [--name NAME] [--json]',
        about:
          'Makes an operator key (lko_…) for /v1/operator/tenants; it is printed only once and stored as a hash.',
        options: [['--name NAME', 'what the key is for'], JSON_FLAG],
        example: 'latchkey operator-key create --name provisioning',
      },
      list: {
        usage: 'operator-key list [--json]',
        about: 'Lists operator keys: id, prefix and last four characters, state, name.',
        options: [JSON_FLAG],
        example: 'latchkey operator-key list',
      },
      revoke: {
        usage: 'operator-key revoke KEY_ID [--json]',
        about: 'Revokes an operator key at once.',
        options: [JSON_FLAG],
        example: 'latchkey operator-key revoke KEY_ID',
      },
    },
  },
  keys: {
    summary: 'create, list and revoke API keys',
    subcommands: {
      create: {
        usage: 'keys create --tenant ID [options]',
        about:
          'Creates a key: secret (sk_test_... / sk_prod_..., for servers, printed only once) or publishable (pk_test_... / pk_live_..., for browsers).',
        options: [
          ['--tenant ID', 'the tenant (required)'],
          ['--kind secret|publishable', 'the kind (default secret)'],
          [
            '--scope S',
            'a scope of a secret key; repeatable (users:read, users:write, sessions:write, tokens:introspect; default all)',
          ],
          ['--name N', 'a name to recognise it by'],
          JSON_FLAG,
        ],
        example: 'latchkey keys create --tenant TENANT_ID --scope tokens:introspect',
      },
      list: {
        usage: 'keys list --tenant ID [--json]',
        about: "Lists a tenant's keys: id, kind, prefix and last four characters, scopes, state.",
        options: [['--tenant ID', 'the tenant (required)'], JSON_FLAG],
        example: 'latchkey keys list --tenant TENANT_ID',
      },
      revoke: {
        usage: 'keys revoke --tenant ID KEY_ID [--json]',
        about: 'Revokes a key (an exposed one, say); it stops working on the next request.',
        options: [['--tenant ID', 'the tenant (required)'], JSON_FLAG],
        example: 'latchkey keys revoke --tenant TENANT_ID KEY_ID',
      },
    },
  },
  app: {
    summary:
      "create, list, show, update and delete applications (the OAuth clients of a tenant's OpenID Provider)",
    subcommands: {
      create: {
        usage: 'app create --tenant ID --name NAME --type spa|native|web|m2m [options]',
        about:
          'Creates an application, an OAuth client whose id starts app_; web and m2m apps get a client secret, printed only once.',
        options: [
          ['--tenant ID', 'the tenant (required)'],
          ['--name NAME', 'the name users see (required)'],
          [
            '--type spa|native|web|m2m',
            'spa and native: public clients with PKCE; web: a server with a secret; m2m: client credentials only (required)',
          ],
          [
            '--redirect-uri URL',
            'where sign-in returns, matched exactly; repeat for each (required but for m2m; https, http only for localhost on development tenants; native: also http://127.0.0.1 and com.example.app:/path)',
          ],
          ['--post-logout-redirect-uri URL', 'where sign-out may return; repeatable'],
          [
            '--pkce-optional',
            'web only: the app may leave PKCE out (its secret authenticates the exchange); PKCE stays required of every other app',
          ],
          JSON_FLAG,
        ],
        example:
          'latchkey app create --tenant TENANT_ID --name Dashboard --type web --redirect-uri https://app.example.com/callback',
      },
      list: {
        usage: 'app list --tenant ID [--json]',
        about: "Lists a tenant's applications: id, type and name.",
        options: [['--tenant ID', 'the tenant (required)'], JSON_FLAG],
        example: 'latchkey app list --tenant TENANT_ID',
      },
      show: {
        usage: 'app show --tenant ID APP_ID [--json]',
        about:
          'Shows an application: its type, redirect URIs and whether an old secret still works. Never its secret.',
        options: [['--tenant ID', 'the tenant (required)'], JSON_FLAG],
        example: 'latchkey app show --tenant TENANT_ID APP_ID',
      },
      update: {
        usage:
          'app update --tenant ID APP_ID [--name NAME] [--redirect-uri URL]... [--post-logout-redirect-uri URL]... [--json]',
        about:
          'Renames an application or replaces its redirect URIs, under the rules of create; its type and secret stay. Each list given replaces the whole stored list; the client id does not change.',
        options: [
          ['--tenant ID', 'the tenant (required)'],
          ['--name NAME', 'the new name users see'],
          [
            '--redirect-uri URL',
            'replaces all redirect URIs; repeat for each (the rules of create)',
          ],
          [
            '--post-logout-redirect-uri URL',
            "replaces all post-logout redirect URIs; repeat for each ('' for none)",
          ],
          JSON_FLAG,
        ],
        example:
          'latchkey app update --tenant TENANT_ID APP_ID --redirect-uri https://app.example.com/callback',
      },
      delete: {
        usage: 'app delete --tenant ID APP_ID [--json]',
        about:
          'Deletes an application with its codes, refresh tokens and grants; its client id stops working.',
        options: [['--tenant ID', 'the tenant (required)'], JSON_FLAG],
        example: 'latchkey app delete --tenant TENANT_ID APP_ID',
      },
      'rotate-secret': {
        usage: 'app rotate-secret --tenant ID APP_ID [--grace 24h] [--json]',
        about:
          'Gives a web or m2m application a new client secret, printed only once; the old one keeps working for the grace period.',
        options: [
          ['--tenant ID', 'the tenant (required)'],
          [
            '--grace DURATION',
            'how long the old secret still works: 30m, 24h, 7d, at most 30d, or 0 (default 24h)',
          ],
          JSON_FLAG,
        ],
        example: 'latchkey app rotate-secret --tenant TENANT_ID APP_ID --grace 1h',
      },
    },
  },
  provider: {
    summary: 'set up social sign-in providers',
    subcommands: {
      set: {
        usage: 'provider set --tenant ID PROVIDER --client-id ID [options]',
        about:
          'Sets a social provider (google, facebook, github, apple, microsoft) of a tenant; secrets are sealed with the master secret.',
        options: [
          ['--tenant ID', 'the tenant (required)'],
          ['--client-id ID', "the provider app's client id"],
          ['--client-secret S', 'its client secret'],
          ['--client-secret-file F', 'the client secret, read from a file'],
          ['--enable | --disable', 'show it on the sign-in page, or not'],
          [
            '--mode development|live|off',
            'development: no credentials, Latchkey stands in for the provider (development tenants only)',
          ],
          ['--team-id --key-id --private-key-file', 'apple only'],
          ['--audience common|organizations|consumers|DIRECTORY_ID', 'microsoft only'],
          JSON_FLAG,
        ],
        example:
          'latchkey provider set --tenant TENANT_ID github --client-id Iv1.abc --client-secret-file github.secret --enable\n  latchkey provider set --tenant TENANT_ID google --mode development',
      },
      list: {
        usage: 'provider list --tenant ID [--json]',
        about: "Lists a tenant's providers.",
        options: [['--tenant ID', 'the tenant (required)'], JSON_FLAG],
        example: 'latchkey provider list --tenant TENANT_ID',
      },
    },
  },
  webhook: {
    summary: "add, change and remove a tenant's webhook endpoints; see and resend deliveries",
    subcommands: {
      create: {
        usage: 'webhook create --tenant ID --url URL [--event TYPE]... [--json]',
        about:
          'Adds an endpoint that receives the events (docs/design.md §17), signed per Standard Webhooks; its secret (whsec_...) is printed only once.',
        options: [
          ['--tenant ID', 'the tenant (required)'],
          [
            '--url URL',
            'where events are sent (required); production tenants: https only, no loopback, private or link-local address',
          ],
          ['--event TYPE', `an event it takes; repeat for each (default: every event): ${EVENTS}`],
          JSON_FLAG,
        ],
        example:
          'latchkey webhook create --tenant TENANT_ID --url https://api.example.com/webhooks/latchkey --event user.created',
      },
      list: {
        usage: 'webhook list --tenant ID [--json]',
        about: "Lists a tenant's endpoints: id, state, address and events. Never their secrets.",
        options: [['--tenant ID', 'the tenant (required)'], JSON_FLAG],
        example: 'latchkey webhook list --tenant TENANT_ID',
      },
      update: {
        usage:
          'webhook update --tenant ID --id ENDPOINT [--url URL] [--event TYPE]... [--all-events] [--disable | --enable] [--json]',
        about:
          'Changes an endpoint under the rules of create; --event replaces its whole list. A disabled endpoint gets no new events; --enable turns one back on (one disabled for failing, too).',
        options: [
          ['--tenant ID', 'the tenant (required)'],
          ['--id ENDPOINT', 'the endpoint (required)'],
          ['--url URL', 'the new address'],
          ['--event TYPE', 'replaces the events it takes; repeat for each'],
          ['--all-events', 'it takes every event'],
          ['--disable | --enable', 'stop or resume sending to it'],
          JSON_FLAG,
        ],
        example: 'latchkey webhook update --tenant TENANT_ID --id ENDPOINT_ID --enable',
      },
      delete: {
        usage: 'webhook delete --tenant ID --id ENDPOINT [--json]',
        about: 'Deletes an endpoint with its deliveries; nothing more is sent to it.',
        options: [
          ['--tenant ID', 'the tenant (required)'],
          ['--id ENDPOINT', 'the endpoint (required)'],
          JSON_FLAG,
        ],
        example: 'latchkey webhook delete --tenant TENANT_ID --id ENDPOINT_ID',
      },
      'rotate-secret': {
        usage: 'webhook rotate-secret --tenant ID --id ENDPOINT [--grace-hours N] [--json]',
        about:
          'Gives an endpoint a new secret, printed only once; during the grace period each delivery is signed with both, so the receiver can switch without missing one.',
        options: [
          ['--tenant ID', 'the tenant (required)'],
          ['--id ENDPOINT', 'the endpoint (required)'],
          ['--grace-hours N', 'how long the old secret still signs: 0 to 720 hours (default 24)'],
          JSON_FLAG,
        ],
        example:
          'latchkey webhook rotate-secret --tenant TENANT_ID --id ENDPOINT_ID --grace-hours 1',
      },
      deliveries: {
        usage: 'webhook deliveries --tenant ID --id ENDPOINT [--limit N] [--json]',
        about:
          "An endpoint's deliveries, newest first: event, status (pending, succeeded, failed), attempts and webhook-id.",
        options: [
          ['--tenant ID', 'the tenant (required)'],
          ['--id ENDPOINT', 'the endpoint (required)'],
          ['--limit N', 'how many (default 20)'],
          JSON_FLAG,
        ],
        example: 'latchkey webhook deliveries --tenant TENANT_ID --id ENDPOINT_ID',
      },
      resend: {
        usage: 'webhook resend --tenant ID --delivery ID [--json]',
        about:
          'Sends a delivered or failed event again, now, with the same webhook-id (a receiver that dedupes by it sees it once).',
        options: [
          ['--tenant ID', 'the tenant (required)'],
          ['--delivery ID', 'the delivery, from webhook deliveries (required)'],
          JSON_FLAG,
        ],
        example: 'latchkey webhook resend --tenant TENANT_ID --delivery DELIVERY_ID',
      },
    },
  },
  'signing-key': {
    summary: "rotate, list and revoke a tenant's token signing keys",
    subcommands: {
      rotate: {
        usage: 'signing-key rotate --tenant ID [--now] [--json]',
        about: 'Publishes a new signing key; it signs 120 s later (at once with --now).',
        options: [
          ['--tenant ID', 'the tenant (required)'],
          ['--now', 'sign with it at once'],
          JSON_FLAG,
        ],
        example: 'latchkey signing-key rotate --tenant TENANT_ID',
      },
      list: {
        usage: 'signing-key list --tenant ID [--json]',
        about: "Lists a tenant's signing keys.",
        options: [['--tenant ID', 'the tenant (required)'], JSON_FLAG],
        example: 'latchkey signing-key list --tenant TENANT_ID',
      },
      revoke: {
        usage: 'signing-key revoke --tenant ID KID [--json]',
        about: 'Revokes a leaked signing key: its tokens stop at once.',
        options: [['--tenant ID', 'the tenant (required)'], JSON_FLAG],
        example: 'latchkey signing-key revoke --tenant TENANT_ID KID',
      },
    },
  },
  admin: {
    summary: 'admin-area accounts',
    subcommands: {
      create: {
        usage: 'admin create --email E [--password P] (--superuser | --tenant ID...) [--json]',
        about: 'Creates an admin-area login; without --password one is generated and printed once.',
        options: [
          ['--email E', 'the login (required)'],
          ['--password P', 'its password (default: generated)'],
          ['--superuser', 'every tenant, and other admins'],
          ['--tenant ID', 'a tenant it may manage; repeatable'],
          JSON_FLAG,
        ],
        example: 'latchkey admin create --email ops@example.com --superuser',
      },
      list: {
        usage: 'admin list [--json]',
        about: 'Lists the admin logins.',
        options: [JSON_FLAG],
        example: 'latchkey admin list',
      },
      delete: {
        usage: 'admin delete --email E',
        about: 'Deletes an admin login.',
        options: [['--email E', 'the login (required)']],
        example: 'latchkey admin delete --email ops@example.com',
      },
      'reset-password': {
        usage: 'admin reset-password --email E [--password P] [--json]',
        about:
          'Sets a new password (generated and printed once without --password); their sessions end.',
        options: [
          ['--email E', 'the login (required)'],
          ['--password P', 'the new password (default: generated)'],
          JSON_FLAG,
        ],
        example: 'latchkey admin reset-password --email ops@example.com',
      },
    },
  },
  import: {
    summary: "bring users in from an export (Latchkey's own, Auth0, Clerk, Supabase, Firebase)",
    help: {
      usage:
        'import --tenant ID --from latchkey|auth0|clerk|supabase|firebase FILE [FILE...] [--dry-run] [--update] [--json]',
      about:
        'Imports users with their password hashes (docs/design.md §16): each row whole or not at all, progress on stderr, refused rows with their line and reason (exit 1 when any). Running it again changes nothing. Users whose e-mail exists are refused unless --update.',
      options: [
        ['--tenant ID', 'the tenant to import into (required)'],
        [
          '--from SOURCE',
          'the format of FILE: latchkey, auth0, clerk, supabase or firebase (required)',
        ],
        ['--dry-run', 'check and count every row, write nothing'],
        ['--update', 'replace the name, metadata, roles and hash of users that exist'],
        ['--hash-key B64', "Firebase: the project's base64_signer_key"],
        ['--salt-separator B64', 'Firebase: base64_salt_separator'],
        ['--rounds N', 'Firebase: rounds'],
        ['--mem-cost N', 'Firebase: mem_cost'],
        ['--json', 'print the summary as JSON'],
      ],
      example: 'latchkey import --tenant ID --from latchkey users.jsonl --dry-run',
    },
  },
  export: {
    summary: "write a tenant's users as JSON Lines",
    help: {
      usage: 'export --tenant ID [--out FILE]',
      about:
        'Writes every user of the tenant, one JSON object a line (docs/design.md §16): profile, roles, the password hash as stored, identities, and factors without their secrets. `import --from latchkey` reads it.',
      options: [
        ['--tenant ID', 'the tenant (required)'],
        ['--out FILE', 'write to FILE instead of stdout'],
      ],
      example: 'latchkey export --tenant ID --out users.jsonl',
    },
  },
  secret: {
    summary: 'rotate the master secret',
    subcommands: {
      rotate: {
        usage: 'secret rotate [--json]',
        about:
          "Seals every sealed value again under a new master secret (instances stopped). The new secret comes from LATCHKEY_NEW_SECRET, or is generated into the data folder's secret file when that holds the current one; LATCHKEY_PREVIOUS_SECRET also opens older values.",
        options: [JSON_FLAG],
        example: 'LATCHKEY_NEW_SECRET=$(openssl rand -base64 32) latchkey secret rotate',
      },
    },
  },
};

const HELP_FLAG = ['-h, --help', 'show this help'] as const;

function table(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...rows.map(([flag]) => flag.length));
  return rows.map(([flag, meaning]) => `  ${flag.padEnd(width)}  ${meaning}`);
}

/** The help of one command or subcommand. */
export function formatHelp(help: Help): string {
  return [
    `usage: latchkey ${help.usage}`,
    '',
    help.about,
    '',
    'options:',
    ...table([...help.options, HELP_FLAG]),
    '',
    'example:',
    `  ${help.example}`,
  ].join('\n');
}

/** The help of a command with subcommands: each one's usage, and how to see more. */
export function formatCommandHelp(name: string): string {
  const command = COMMANDS[name];
  if (!command) return formatUsage();
  if (command.help) return formatHelp(command.help);
  const subs = Object.values(command.subcommands ?? {});
  return [
    `latchkey ${name}: ${command.summary}`,
    '',
    'usage:',
    ...subs.map((s) => `  latchkey ${s.usage}`),
    '',
    `latchkey ${name} SUBCOMMAND --help shows its options and an example, e.g.`,
    `  ${subs[0]?.example ?? ''}`,
  ].join('\n');
}

/** `latchkey help`: every command line. */
export function formatUsage(): string {
  const lines: string[] = [];
  for (const command of Object.values(COMMANDS)) {
    if (command.help) lines.push(`  latchkey ${command.help.usage}`);
    for (const sub of Object.values(command.subcommands ?? {}))
      lines.push(`  latchkey ${sub.usage}`);
  }
  return [
    'latchkey: self-hostable multi-tenant authentication',
    '',
    'usage:',
    ...lines,
    '',
    'Every command and subcommand answers --help (or -h) with its options and an example,',
    'e.g. latchkey tenant update --help.',
    '',
    'Configuration comes from the environment: PORT, HOST, PUBLIC_URL, DATABASE_URL, REDIS_URL,',
    'LATCHKEY_SECRET, SMTP_URL, TRUST_PROXY, LOG_LEVEL, METRICS_TOKEN, LATCHKEY_PROVIDER_ENDPOINTS.',
  ].join('\n');
}
