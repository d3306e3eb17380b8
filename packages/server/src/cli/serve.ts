import { buildApp } from '../app.js';
import type { Config } from '../config/config.js';
import { defaults } from '../config/defaults.js';
import type { AppContext } from '../http/context.js';
import { provisionTenant } from '../modules/provisioning/index.js';
import { listTenants } from '../modules/tenants/index.js';
import { openDatabase, pendingMigrations } from '../storage/index.js';
import { parse } from './args.js';
import type { Output } from './output.js';

/** First run of `npm start`: a development tenant to try things with. */
async function demo(ctx: AppContext, output: Output): Promise<void> {
  const tenants = await listTenants(ctx.database.db);
  const base = ctx.config.publicUrl;
  if (tenants.length > 0) {
    const first = tenants[0];
    output.out(`Tenants: ${tenants.length} (first: ${first?.name} ${first?.id}).`);
    output.out(`List keys with: npx latchkey keys list --tenant ${first?.id}`);
    output.out(`A new secret key: npx latchkey keys create --tenant ${first?.id}`);
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
  output.out('');
  output.out('Try it:');
  output.out(
    `  curl -i ${base}/v1/auth/sign-up -H 'authorization: Bearer ${secretKey}' -H 'content-type: application/json' -d '{"email":"ada@example.com","password":"correct horse battery"}'`,
  );
}

export async function serveCommand(config: Config, args: string[], output: Output): Promise<void> {
  const { values } = parse(args, { demo: { type: 'boolean' } });
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
  const { app, ctx, close } = await buildApp(config, { database });
  await app.listen({ port: config.port, host: config.host });
  const base = config.publicUrl;
  output.out(`Latchkey is listening on ${base}  (${database.dialect})`);
  output.out(`  API reference  ${base}/v1/openapi.json`);
  output.out(`  health         ${base}/healthz  ${base}/readyz  ${base}/metrics`);
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
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}
