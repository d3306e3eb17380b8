import { announce } from '../cache/invalidation.js';
import { type Config, ConfigError, loadConfig } from '../config/config.js';
import { LatchkeyError } from '../errors/index.js';
import { openMasterSecret } from '../modules/master-secret/index.js';
import { migrateToLatest, openDatabase, type Publisher } from '../storage/index.js';
import { adminCommand } from './admin.js';
import { UsageError } from './args.js';
import { keysCommand } from './keys.js';
import type { OpenedDatabase } from './opened.js';
import type { Output } from './output.js';
import { providerCommand } from './provider.js';
import { secretCommand } from './secret.js';
import { signingKeyCommand } from './signing-key.js';
import { tenantCommand } from './tenant.js';

const USAGE = `latchkey: self-hostable multi-tenant authentication

usage:
  latchkey serve [--demo]
  latchkey migrate
  latchkey tenant create --name NAME [--plan free|pro|enterprise] [--rps N --rpm N]
                         [--env development|production] [--origin URL]... [--json]
  latchkey tenant list|show ID|update ID [--plan P] [--rps N] [--rpm N] [--origin URL]...
                         [--require-verification true|false] [--token-ttl SECONDS]
                         [--logo-url https://…] [--primary-color #rrggbb]
                         [--audience URI (token aud; '' for {auth_url}/t/ID/api)] [--json]
  latchkey keys create --tenant ID [--kind secret|publishable] [--scope S]... [--name N] [--json]
  latchkey keys list --tenant ID [--json]
  latchkey keys revoke --tenant ID KEY_ID [--json]
  latchkey provider set --tenant ID PROVIDER --client-id ID [--client-secret S | --client-secret-file F]
                        [--enable|--disable]   (apple: --team-id --key-id --private-key-file;
                        microsoft: --audience common|organizations|consumers|DIRECTORY_ID)
  latchkey provider set --tenant ID PROVIDER --mode development|live|off
                        (development: no credentials, development tenants only)
  latchkey provider list --tenant ID [--json]
  latchkey signing-key rotate --tenant ID [--now] [--json]   (publish a new key; it signs in 120 s)
  latchkey signing-key list --tenant ID [--json]
  latchkey signing-key revoke --tenant ID KID [--json]   (a leaked key: its tokens stop at once)
  latchkey admin create --email E [--password P] [--superuser | --tenant ID]... [--json]
                        (no --password: one is generated and printed once)
  latchkey admin list [--json] | delete --email E | reset-password --email E [--password P]
  latchkey secret rotate [--json]   (instances stopped; the new secret from LATCHKEY_NEW_SECRET,
                           or generated into the data folder's secret file when that holds the
                           current one; LATCHKEY_PREVIOUS_SECRET also opens older values)

Configuration comes from the environment: PORT, PUBLIC_URL, DATABASE_URL, REDIS_URL,
LATCHKEY_SECRET, SMTP_URL, TRUST_PROXY, LATCHKEY_PROVIDER_ENDPOINTS.`;

/**
 * Runs a command on the database, with the master secret's box once the database has agreed
 * to the secret (modules/master-secret): no command runs with a secret that is not the one.
 */
async function withDatabase(
  config: Config,
  output: Output,
  run: (database: OpenedDatabase) => Promise<void>,
) {
  const database = openDatabase(config.databaseUrl, { poolSize: 2 });
  try {
    // Every command works on an up-to-date schema; SQLite is migrated in place like `serve` does.
    if (database.dialect === 'sqlite') await migrateToLatest(database.db as never);
    const box = await openMasterSecret(database.db, config, (m) => output.err(`warning: ${m}`));
    await run({ ...database, box });
  } finally {
    await database.close();
  }
}

/** Running instances drop cached keys and tenants (only needed, and possible, with Redis). */
async function tellInstances(config: Config, output: Output, topic = '*'): Promise<void> {
  if (!config.redisUrl) return;
  try {
    await announce(config.redisUrl, topic);
  } catch (error) {
    output.err(
      `warning: could not reach Redis to tell running instances (${(error as Error).message}); they see the change within 60 s`,
    );
  }
}

/** The CLI's invalidation bus: what a workflow invalidates is announced to running instances. */
const cliBus = (config: Config, output: Output): Publisher => ({
  publish: (topic) => tellInstances(config, output, topic),
});

/** Runs one CLI invocation; returns the process exit code. */
export async function runCli(
  argv: string[],
  env: NodeJS.ProcessEnv,
  output: Output,
): Promise<number> {
  const [command, ...args] = argv;
  try {
    if (!command || command === 'help' || command === '--help' || command === '-h') {
      output.out(USAGE);
      return command ? 0 : 2;
    }
    // migrate works on the database alone: a server setting it does not use (a scripted
    // deploy may leave PORT or PUBLIC_URL unset or odd at that step) does not stop it.
    const settings =
      command === 'migrate' ? { ...env, PORT: undefined, PUBLIC_URL: undefined } : env;
    const config = loadConfig(settings, { warn: (m) => output.err(`warning: ${m}`) });
    switch (command) {
      case 'serve': {
        // Loaded only here: the other commands start without Fastify and its plugins.
        const { serveCommand } = await import('./serve.js');
        await serveCommand(config, args, output);
        return 0;
      }
      case 'migrate': {
        // The database alone: no secret is needed (nor checked) to bring its schema up.
        const database = openDatabase(config.databaseUrl, { poolSize: 2 });
        try {
          const result = await migrateToLatest(database.db as never);
          const applied = result.results?.map((r) => r.migrationName) ?? [];
          output.out(
            applied.length ? `applied: ${applied.join(', ')}` : 'the database is up to date',
          );
        } finally {
          await database.close();
        }
        return 0;
      }
      case 'tenant':
        await withDatabase(config, output, (database) =>
          tenantCommand(config, { ...database, bus: cliBus(config, output) }, args, output),
        );
        return 0;
      case 'keys':
        await withDatabase(config, output, (database) =>
          keysCommand({ db: database.db, bus: cliBus(config, output) }, args, output),
        );
        return 0;
      case 'provider':
        await withDatabase(config, output, (database) => providerCommand(database, args, output));
        return 0;
      case 'admin':
        await withDatabase(config, output, (database) =>
          adminCommand(config, database, args, output),
        );
        return 0;
      case 'signing-key':
        await withDatabase(config, output, (database) => signingKeyCommand(database, args, output));
        if (args[0] === 'revoke') await tellInstances(config, output);
        return 0;
      case 'secret': {
        // Its own check: the current secret, and a previous one, must open what is sealed.
        const database = openDatabase(config.databaseUrl, { poolSize: 2 });
        try {
          if (database.dialect === 'sqlite') await migrateToLatest(database.db as never);
          await secretCommand(config, database, args, output, {
            next: env.LATCHKEY_NEW_SECRET || undefined,
            previous: env.LATCHKEY_PREVIOUS_SECRET || undefined,
          });
        } finally {
          await database.close();
        }
        return 0;
      }
      default:
        throw new UsageError(`unknown command "${command}"\n\n${USAGE}`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      output.err(`error: ${error.message}`);
      return 2;
    }
    if (error instanceof LatchkeyError) {
      output.err(`error: ${error.message}`);
      for (const e of error.errors ?? []) output.err(`  ${e.path}: ${e.message} (${e.code})`);
      return 1;
    }
    if (error instanceof ConfigError) {
      output.err(`configuration error: ${error.message}`);
      return 1;
    }
    output.err(`error: ${(error as Error).message}`);
    return 1;
  }
}
