import { buildApp } from '../app.js';
import type { Config } from '../config/config.js';
import { defaults } from '../config/defaults.js';
import type { AppContext } from '../http/context.js';
import { countAdmins, createAdmin } from '../modules/admin/index.js';
import { listKeys } from '../modules/keys/index.js';
import { provisionTenant } from '../modules/provisioning/index.js';
import { countTenants, searchTenants } from '../modules/tenants/index.js';
import { createPasswordHasher } from '../modules/users/index.js';
import { type Database, openDatabase, pendingMigrations } from '../storage/index.js';
import { startTracing, stopTracing } from '../tracing/tracing.js';
import { parse } from './args.js';
import type { Output } from './output.js';

/** First run of `npm start`: a superuser for the admin area, printed once. */
async function demoAdmin(database: Database, config: Config, output: Output): Promise<void> {
  if ((await countAdmins(database.db)) > 0) {
    output.out(`Admin area: ${config.publicUrl}/admin  (new admins: npx latchkey admin create)`);
    return;
  }
  const email = 'admin@example.com';
  const { generatedPassword } = await createAdmin(
    { db: database.db, hasher: createPasswordHasher(config.argon2) },
    { email, superuser: true, tenantIds: [] },
  );
  output.out('');
  output.out('An admin login was created (first run):');
  output.out(`  admin area  ${config.publicUrl}/admin`);
  output.out(`  e-mail      ${email}`);
  output.out(`  password    ${generatedPassword}   (shown only now)`);
}

/** Where `npm run example:script` serves the script-tag example (an allowed origin of the demo). */
const EXAMPLE_URL = 'http://localhost:5173';

function printExample(output: Output, publishableKey: string | null | undefined): void {
  if (!publishableKey) return;
  output.out('');
  output.out(`Script-tag example (run: npm run example:script):`);
  output.out(`  ${EXAMPLE_URL}/?pk=${publishableKey}`);
  output.out(
    'Next.js example: npm run example:next on http://localhost:3000 (examples/nextjs/README.md)',
  );
}

/** First run of `npm start`: a development tenant to try things with. */
async function demo(ctx: AppContext, output: Output): Promise<void> {
  await demoAdmin(ctx.database, ctx.config, output);
  // docs/design.md §21: the count and the first, never every tenant into memory.
  const count = await countTenants(ctx.database.db);
  const base = ctx.config.publicUrl;
  if (count > 0) {
    const first = (await searchTenants(ctx.database.db, { limit: 1 })).data[0];
    output.out(`Tenants: ${count} (first: ${first?.name} ${first?.id}).`);
    output.out(`List keys with: npx latchkey keys list --tenant ${first?.id}`);
    output.out(`A new secret key: npx latchkey keys create --tenant ${first?.id}`);
    const keys = first ? await listKeys(ctx.database.db, first.id) : [];
    printExample(output, keys.find((k) => k.publishableKey && !k.revokedAt)?.publishableKey);
    return;
  }
  const { tenant, secretKey, publishableKey } = await provisionTenant(
    { db: ctx.database.db, signingKeys: ctx.signingKeys },
    {
      name: 'Demo',
      environment: 'development',
      allowedOrigins: ['http://localhost:5173', new URL(base).origin],
    },
    { name: 'demo' },
  );
  output.out('');
  output.out('A demo tenant was created (first run):');
  output.out(`  tenant id        ${tenant.id}`);
  output.out(`  secret key       ${secretKey}   (shown only now)`);
  output.out(`  publishable key  ${publishableKey}`);
  output.out('');
  const hosted = new URLSearchParams({
    pk: publishableKey,
    redirect_url: 'http://localhost:5173/callback',
  });
  output.out(
    'Hosted sign-in page (returns to http://localhost:5173/callback with the tokens in the fragment):',
  );
  output.out(`  ${base}/sign-in?${hosted}`);
  printExample(output, publishableKey);
  output.out('');
  output.out('Try it:');
  output.out(
    `  curl -i ${base}/v1/auth/sign-up -H 'authorization: Bearer ${secretKey}' -H 'content-type: application/json' -d '{"email":"ada@example.com","password":"correct horse battery"}'`,
  );
}

/** Why the server could not listen, and what to do about it, without a stack trace. */
function listenError(error: unknown, port: number, host: string): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const other = port === 8788 ? 8789 : 8788;
  if (code === 'EADDRINUSE')
    return new Error(
      `port ${port} is in use: another server (another Latchkey, perhaps) is listening on it. Stop that one, or pick another port: PORT=${other} npm start (or PORT=${other} latchkey serve)`,
    );
  if (code === 'EACCES')
    return new Error(
      `this user may not listen on port ${port}; pick a port above 1023: PORT=${other} latchkey serve`,
    );
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
    return new Error(
      `HOST=${host} is not an address of this machine; use HOST=localhost (this machine only) or HOST=0.0.0.0 (every interface)`,
    );
  return error as Error;
}

export async function serveCommand(config: Config, args: string[], output: Output): Promise<void> {
  const { values } = parse(args, { demo: { type: 'boolean' } });
  // First: the database's client is traced from its first query (docs/design.md §7.1).
  startTracing(config.tracing);
  const database = openDatabase(config.databaseUrl);
  if (database.dialect === 'postgres') {
    const pending = await pendingMigrations(database.db as never);
    if (pending.length) {
      await database.close();
      throw new Error(
        `The database needs migrations (${pending.join(', ')}); run: latchkey migrate`,
      );
    }
  }
  const { app, ctx, close } = await buildApp(config, {
    database,
    warn: (message) => output.err(`warning: ${message}`),
  });
  const host = config.host ?? (values.demo ? defaults.demoHost : defaults.host);
  let address: string;
  try {
    address = await app.listen({ port: config.port, host });
  } catch (error) {
    await close();
    throw listenError(error, config.port, host);
  }
  const base = config.publicUrl;
  // PORT=0: the system chose the port, which PUBLIC_URL cannot know; say where it is.
  output.out(
    `Latchkey is listening on ${config.port === 0 ? address : base}  (${database.dialect})`,
  );
  if (host === defaults.demoHost && !config.host)
    output.out('  reachable from this machine only; HOST=0.0.0.0 opens it to the network');
  output.out(`  API reference  ${base}/v1/openapi.json`);
  output.out(`  health         ${base}/healthz  ${base}/readyz`);
  output.out(
    config.metricsToken
      ? `  metrics        ${base}/metrics  (Authorization: Bearer $METRICS_TOKEN)`
      : '  metrics        off (set METRICS_TOKEN to serve /metrics)',
  );
  if (values.demo) await demo(ctx, output);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    // A hung dependency must not keep the process alive: past the deadline it exits anyway.
    const deadline = setTimeout(() => {
      app.log.error({ ms: defaults.timeouts.shutdownMs }, 'shutdown deadline passed; exiting');
      process.exit(1);
    }, defaults.timeouts.shutdownMs);
    deadline.unref();
    try {
      await close();
      // Sends the spans still held (buildApp's close flushed them, this ends the SDK).
      await stopTracing();
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}
