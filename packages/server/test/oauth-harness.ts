/**
 * Tenants' OpenID Providers (modules/oauth) served on their own, over real HTTP, as the
 * server will mount them (`/t/{id}/…`), with a stand-in for the hosted sign-in pages: the
 * interaction route signs in whoever `signingIn` names. For the suites that drive the
 * protocol before the provider is mounted in the server.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InvalidationBus } from '../src/cache/invalidation.js';
import { SecretBox } from '../src/crypto/secret-box.js';
import { OAuthProviders } from '../src/modules/oauth/registry.js';
import { SigningKeys } from '../src/modules/sessions/index.js';
import { createTenant, type Tenant, type TenantInput } from '../src/modules/tenants/index.js';
import type { DialectName } from '../src/storage/index.js';
import { type Database, migrateToLatest, openDatabase } from '../src/storage/index.js';
import { freshDatabaseUrl, SECRET } from './support.js';

/** Who the stand-in sign-in page signs in, how (`amr`) and when (`at`, seconds). */
export interface SigningIn {
  userId: string;
  amr: string[];
  at: number;
}

export interface ProviderHarness {
  /** `http://127.0.0.1:{port}`, the `authUrl`: issuers are `{base}/t/{id}`. */
  base: string;
  database: Database;
  signingKeys: SigningKeys;
  providers: OAuthProviders;
  tenants: Tenant[];
  close(): Promise<void>;
}

export async function startProviderHarness(
  dialect: DialectName,
  options: { tenants: TenantInput[]; signingIn: SigningIn; bus: InvalidationBus },
): Promise<ProviderHarness> {
  const fresh = await freshDatabaseUrl(dialect);
  const database = openDatabase(fresh.url, { poolSize: 4 });
  await migrateToLatest(database.db as never);
  const tenants: Tenant[] = [];
  for (const input of options.tenants) tenants.push(await createTenant(database.db, input));
  const signingKeys = new SigningKeys(database.db, new SecretBox(SECRET));
  let providers: OAuthProviders | undefined;
  const { signingIn } = options;

  async function route(req: IncomingMessage & { originalUrl?: string }, res: ServerResponse) {
    const id = /^\/t\/([^/]+)\//.exec(req.url ?? '')?.[1] ?? '';
    const tenant = tenants.find((t) => t.id === id);
    if (!tenant || !providers) {
      res.writeHead(404).end();
      return;
    }
    const provider = await providers.get(tenant);
    if (req.url?.startsWith(`/t/${id}/interaction/`)) {
      await provider.interactionDetails(req, res);
      const to = await provider.interactionResult(
        req,
        res,
        { login: { accountId: signingIn.userId, amr: signingIn.amr, ts: signingIn.at } },
        { mergeWithLastSubmission: false },
      );
      res.writeHead(303, { location: to }).end();
      return;
    }
    req.originalUrl = req.url;
    req.url = req.url?.slice(`/t/${id}`.length);
    await provider.callback()(req, res);
  }

  const server: Server = createServer((req, res) => void route(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  providers = new OAuthProviders(
    { db: database.db, bus: options.bus, authUrl: base, signingKeys, secret: SECRET },
    options.bus,
  );
  return {
    base,
    database,
    signingKeys,
    providers,
    tenants,
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await database.close();
      await fresh.drop();
    },
  };
}
