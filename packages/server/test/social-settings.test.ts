import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LatchkeyError } from '../src/errors/index.js';
import {
  listProviderSettings,
  providerCredentials,
  setProvider,
} from '../src/modules/social/index.js';
import { DIALECTS, json, SECRET, startApp, type TestApp, type TestTenant } from './support.js';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../dist/latchkey.mjs', import.meta.url));

describe.each(DIALECTS)('social provider settings on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;

  beforeAll(async () => {
    app = await startApp(dialect);
    t = await app.tenant();
  });
  afterAll(() => app.dispose());

  const codes = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LatchkeyError);
    return [
      (error as LatchkeyError).code,
      ...((error as LatchkeyError).errors ?? []).map((e) => e.code),
    ];
  };

  it('stores client secrets sealed, and never shows them', async () => {
    const db = app.ctx.database.db;
    const view = await setProvider(db, app.ctx.box, t.tenant.id, 'google', {
      clientId: 'google-client',
      clientSecret: 'super-secret-google',
      enabled: true,
    });
    expect(view).toMatchObject({
      provider: 'google',
      name: 'Google',
      enabled: true,
      clientId: 'google-client',
      hasSecret: true,
    });
    expect(JSON.stringify(view)).not.toContain('super-secret-google');
    const rows = await db.selectFrom('provider_settings').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain('super-secret-google');
    const creds = await providerCredentials(db, app.ctx.box, t.tenant.id, 'google');
    expect(creds?.secret).toBe('super-secret-google');
  });

  it("points a missing secret at the provider's own secret field (Apple: privateKeyPem)", async () => {
    const box = app.ctx.box;
    const pathOf = async (provider: string) => {
      const error = await setProvider(app.ctx.database.db, box, t.tenant.id, provider, {
        clientId: 'x',
        teamId: 'ABCDEFGHIJ',
        keyId: 'ABCDEFGHIJ',
        enabled: true,
      }).catch((e: LatchkeyError) => e);
      return (error as LatchkeyError).errors?.find((e) => e.code === 'client_secret_required')
        ?.path;
    };
    expect(await pathOf('apple')).toBe('/privateKeyPem');
    expect(await pathOf('github')).toBe('/clientSecret');
  });

  it('refuses unknown providers, enabling without a secret, and bad Apple or Microsoft settings', async () => {
    const db = app.ctx.database.db;
    const box = app.ctx.box;
    expect(await codes(setProvider(db, box, t.tenant.id, 'myspace', { clientId: 'x' }))).toEqual([
      'not_found',
    ]);
    expect(
      await codes(setProvider(db, box, t.tenant.id, 'github', { clientId: 'x', enabled: true })),
    ).toContain('client_secret_required');
    expect(
      await codes(
        setProvider(db, box, t.tenant.id, 'apple', {
          clientId: 'x',
          teamId: 'short',
          keyId: 'ABCDEFGHIJ',
        }),
      ),
    ).toContain('team_id_invalid');
    expect(
      await codes(
        setProvider(db, box, t.tenant.id, 'microsoft', { clientId: 'x', audience: 'everyone' }),
      ),
    ).toContain('audience_invalid');
    expect((await listProviderSettings(db, t.tenant.id)).map((p) => p.provider)).not.toContain(
      'myspace',
    );
  });

  it('/public/config lists only enabled providers', async () => {
    const other = await app.tenant();
    const db = app.ctx.database.db;
    await setProvider(db, app.ctx.box, other.tenant.id, 'github', {
      clientId: 'gh',
      clientSecret: 's',
      enabled: true,
    });
    await setProvider(db, app.ctx.box, other.tenant.id, 'facebook', {
      clientId: 'fb',
      clientSecret: 's',
      enabled: false,
    });
    await setProvider(db, app.ctx.box, other.tenant.id, 'microsoft', {
      clientId: 'ms',
      clientSecret: 's',
      enabled: true,
      audience: 'organizations',
    });
    const config = await json(await app.request(`/public/config?pk=${other.publishableKey}`));
    expect(config.providers).toEqual([
      { id: 'github', name: 'GitHub', mode: 'live' },
      { id: 'microsoft', name: 'Microsoft', mode: 'live' },
    ]);
  });

  it('`latchkey provider set` configures Apple from a key file, and `list` shows no secret', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-apple-'));
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const keyFile = join(dir, 'AuthKey.p8');
    writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const env = {
      ...process.env,
      DATABASE_URL: app.ctx.config.databaseUrl,
      LATCHKEY_SECRET: SECRET,
    };
    const set = await run(
      process.execPath,
      [
        MAIN,
        'provider',
        'set',
        '--tenant',
        t.tenant.id,
        'apple',
        '--client-id',
        'com.example.web',
        '--team-id',
        'ABCDE12345',
        '--key-id',
        'KEY1234567',
        '--private-key-file',
        keyFile,
        '--enable',
        '--json',
      ],
      { env },
    );
    expect(JSON.parse(set.stdout)).toMatchObject({
      provider: 'apple',
      enabled: true,
      teamId: 'ABCDE12345',
      keyId: 'KEY1234567',
      hasSecret: true,
    });
    const list = await run(
      process.execPath,
      [MAIN, 'provider', 'list', '--tenant', t.tenant.id, '--json'],
      { env },
    );
    expect(list.stdout).not.toContain('PRIVATE KEY');
    expect(JSON.parse(list.stdout).map((p: { provider: string }) => p.provider)).toContain('apple');
  });
});
