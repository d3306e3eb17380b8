import { announce } from '../cache/invalidation.js';
import { type Config, ConfigError, loadConfig } from '../config/config.js';
import { LatchkeyError } from '../errors/index.js';
import { openMasterSecret } from '../modules/master-secret/index.js';
import { migrateToLatest, openDatabase, type Publisher } from '../storage/index.js';
import { UsageError } from './args.js';
import { COMMANDS, formatCommandHelp, formatHelp, formatUsage } from './help.js';
import type { OpenedDatabase } from './opened.js';
import type { Output } from './output.js';

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

/** `--help` or `-h` among the arguments (before a `--` that ends the options). */
function asksForHelp(args: string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}

/** The help of `[command, subcommand]` from the command table; exit 0, or 2 for an unknown name. */
function help(words: string[], output: Output): number {
  const [name = '', sub] = words;
  const command = COMMANDS[name];
  if (!command || !Object.hasOwn(COMMANDS, name)) {
    output.err(`error: unknown command "${name}"\n\n${formatUsage()}`);
    return 2;
  }
  const subHelp =
    sub && !sub.startsWith('-') && command.subcommands && Object.hasOwn(command.subcommands, sub)
      ? command.subcommands[sub]
      : undefined;
  if (sub && !sub.startsWith('-') && command.subcommands && !subHelp) {
    output.err(`error: unknown subcommand "${name} ${sub}"\n\n${formatCommandHelp(name)}`);
    return 2;
  }
  output.out(subHelp ? formatHelp(subHelp) : formatCommandHelp(name));
  return 0;
}

/** Runs one CLI invocation; returns the process exit code. */
export async function runCli(
  argv: string[],
  env: NodeJS.ProcessEnv,
  output: Output,
): Promise<number> {
  const [command, ...args] = argv;
  try {
    if (!command || command === 'help' || command === '--help' || command === '-h') {
      // `latchkey help tenant update` is `latchkey tenant update --help`.
      if (command === 'help' && args[0]) return help(args, output);
      output.out(formatUsage());
      return command ? 0 : 2;
    }
    if (!Object.hasOwn(COMMANDS, command))
      throw new UsageError(`unknown command "${command}"\n\n${formatUsage()}`);
    if (asksForHelp(args)) return help([command, ...args], output);
    const subcommands = COMMANDS[command]?.subcommands;
    if (subcommands && !Object.hasOwn(subcommands, args[0] ?? '')) {
      const what = args[0]
        ? `unknown subcommand "${command} ${args[0]}"`
        : 'a subcommand is missing';
      throw new UsageError(`${what}\n\n${formatCommandHelp(command)}`);
    }
    // migrate works on the database alone: a server setting it does not use (a scripted
    // deploy may leave PORT or PUBLIC_URL unset or odd at that step) does not stop it.
    const settings =
      command === 'migrate' ? { ...env, PORT: undefined, PUBLIC_URL: undefined } : env;
    const config = loadConfig(settings, { warn: (m) => output.err(`warning: ${m}`) });
    // Each command's module is loaded when it runs: a command starts without the others'
    // modules (the server's Fastify and its plugins, the OpenID Provider, WebAuthn).
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
      case 'tenant': {
        const { tenantCommand } = await import('./tenant.js');
        let code = 0;
        await withDatabase(config, output, async (database) => {
          code = await tenantCommand(
            config,
            { ...database, bus: cliBus(config, output) },
            args,
            output,
          );
        });
        return code;
      }
      case 'operator-key': {
        const { operatorKeyCommand } = await import('./operator-key.js');
        await withDatabase(config, output, (database) =>
          operatorKeyCommand(database.db, args, output),
        );
        return 0;
      }
      case 'keys': {
        const { keysCommand } = await import('./keys.js');
        await withDatabase(config, output, (database) =>
          keysCommand({ db: database.db, bus: cliBus(config, output) }, args, output),
        );
        return 0;
      }
      case 'app': {
        const { appCommand } = await import('./app.js');
        await withDatabase(config, output, (database) =>
          appCommand({ db: database.db, bus: cliBus(config, output) }, args, output),
        );
        return 0;
      }
      case 'provider': {
        const { providerCommand } = await import('./provider.js');
        await withDatabase(config, output, (database) => providerCommand(database, args, output));
        return 0;
      }
      case 'webhook': {
        const { webhookCommand } = await import('./webhook.js');
        await withDatabase(config, output, (database) => webhookCommand(database, args, output));
        return 0;
      }
      case 'admin': {
        const { adminCommand } = await import('./admin.js');
        await withDatabase(config, output, (database) =>
          adminCommand(config, database, args, output),
        );
        return 0;
      }
      case 'signing-key': {
        const { signingKeyCommand } = await import('./signing-key.js');
        await withDatabase(config, output, (database) => signingKeyCommand(database, args, output));
        if (args[0] === 'revoke') await tellInstances(config, output);
        return 0;
      }
      case 'import':
      case 'export': {
        const { exportCommand, importCommand } = await import('./import.js');
        let code = 0;
        await withDatabase(config, output, async (database) => {
          code = await (command === 'import' ? importCommand : exportCommand)(
            database,
            args,
            output,
          );
        });
        return code;
      }
      case 'secret': {
        // Its own check: the current secret, and a previous one, must open what is sealed.
        const database = openDatabase(config.databaseUrl, { poolSize: 2 });
        try {
          if (database.dialect === 'sqlite') await migrateToLatest(database.db as never);
          const { secretCommand } = await import('./secret.js');
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
        throw new UsageError(`unknown command "${command}"\n\n${formatUsage()}`);
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
