import { buildApp } from '../app.js';
import type { Config } from '../config/config.js';
import { createKey, listKeys } from '../modules/keys/index.js';
import { createTenant, listTenants } from '../modules/tenants/index.js';
import { type Database, openDatabase, pendingMigrations } from '../storage/index.js';
import { parse } from './args.js';
import type { Output } from './output.js';

/** Where `npm run example:script` serves the script-tag example (an allowed origin of the demo). */
const EXAMPLE_URL = 'http://localhost:5173';

function printExample(output: Output, publishableKey: string | null | undefined): void {
  if (!publishableKey) return;
  output.out('');
  output.out(`Script-tag example (run: npm run example:script):`);
  output.out(`  ${EXAMPLE_URL}/?pk=${publishableKey}`);
}

/** First run of `npm start`: a development tenant to try things with. */
async function demo(database: Database, config: Config, output: Output): Promise<void> {
  const tenants = await listTenants(database.db);
  const base = config.publicUrl;
  if (tenants.length > 0) {
    const first = tenants[0];
    output.out(`Tenants: ${tenants.length} (first: ${first?.name} ${first?.id}).`);
    output.out(`List keys with: npx latchkey keys list --tenant ${first?.id}`);
    output.out(`A new secret key: npx latchkey keys create --tenant ${first?.id}`);
    const keys = first ? await listKeys(database.db, first.id) : [];
    printExample(output, keys.find((k) => k.publishableKey && !k.revokedAt)?.publishableKey);
    return;
  }
  const tenant = await createTenant(database.db, {
    name: 'Demo',
    environment: 'development',
    allowedOrigins: ['http://localhost:5173', new URL(base).origin],
  });
  const secret = await createKey(database.db, tenant.id, { kind: 'secret', name: 'demo' });
  const publishable = await createKey(database.db, tenant.id, {
    kind: 'publishable',
    name: 'demo',
  });
  output.out('');
  output.out('A demo tenant was created (first run):');
  output.out(`  tenant id        ${tenant.id}`);
  output.out(`  secret key       ${secret.plaintext}   (shown only now)`);
  output.out(`  publishable key  ${publishable.plaintext}`);
  output.out('');
  const hosted = new URLSearchParams({
    pk: publishable.plaintext,
    redirect_url: 'http://localhost:5173/callback',
  });
  output.out(
    'Hosted sign-in page (returns to http://localhost:5173/callback with the tokens in the fragment):',
  );
  output.out(`  ${base}/sign-in?${hosted}`);
  printExample(output, publishable.plaintext);
  output.out('');
  output.out('Try it:');
  output.out(
    `  curl -i ${base}/v1/auth/sign-up -H 'authorization: Bearer ${secret.plaintext}' -H 'content-type: application/json' -d '{"email":"ada@example.com","password":"correct horse battery"}'`,
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
  const { app, close } = await buildApp(config, { database });
  await app.listen({ port: config.port, host: config.host });
  const base = config.publicUrl;
  output.out(`Latchkey is listening on ${base}  (${database.dialect})`);
  output.out(`  API reference  ${base}/v1/openapi.json`);
  output.out(`  health         ${base}/healthz  ${base}/readyz  ${base}/metrics`);
  if (values.demo) await demo(database, config, output);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    await close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}
