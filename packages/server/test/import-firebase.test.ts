/**
 * `latchkey import --from firebase`: a `firebase auth:export --format=json` file, hashed
 * with Firebase's modified scrypt under its documented sample parameters, on each database.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setProvider } from '../src/modules/social/index.js';
import { latchkey } from './cli-run.js';
import {
  FIREBASE_SAMPLE,
  firebaseScrypt,
  identitiesOf,
  lineOf,
  runImport,
  signIn,
  socialSignIn,
  storedUser,
  tenantCounts,
} from './import-support.js';
import { type ProviderServers, startProviders } from './providers.js';
import {
  DIALECTS,
  freshDatabaseUrl,
  json,
  postJson,
  reservePort,
  SECRET,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const ORIGIN = 'http://localhost:5173';
const PARAMS = {
  hashKey: FIREBASE_SAMPLE.hashKey,
  saltSeparator: FIREBASE_SAMPLE.saltSeparator,
  rounds: FIREBASE_SAMPLE.rounds,
  memCost: FIREBASE_SAMPLE.memCost,
};

/** Written as firebase-tools writes it: each user pretty-printed, `,\n` between them. */
function exportFile(users: Record<string, unknown>[]): string {
  return `{"users": [\n${users.map((u) => JSON.stringify(u, null, 2)).join(',\n')}]}\n`;
}

function fixture() {
  const salt = randomBytes(12).toString('base64');
  const users = [
    {
      localId: 'fb-ada',
      email: 'ada@example.com',
      emailVerified: true,
      passwordHash: firebaseScrypt('analytical engine 1843', salt),
      salt,
      displayName: 'Ada Lovelace',
      createdAt: '1486324420000',
      customAttributes: '{"admin":true}',
      providerUserInfo: [
        { providerId: 'github.com', rawId: '583231', email: 'ada@github.example' },
        { providerId: 'twitter.com', rawId: '1234567', displayName: 'ada' },
      ],
    },
    {
      localId: 'fb-sample',
      email: 'sample@example.com',
      emailVerified: false,
      passwordHash: FIREBASE_SAMPLE.user.hash,
      salt: FIREBASE_SAMPLE.user.salt,
    },
    {
      localId: 'fb-grace',
      email: 'grace@example.com',
      emailVerified: true,
      displayName: 'Grace Hopper',
      providerUserInfo: [{ providerId: 'google.com', rawId: '104812345678901234567' }],
    },
    { localId: 'fb-phone', phoneNumber: '+15555550100' },
    { localId: 'fb-bad', email: 'not an address', emailVerified: true },
    {
      // The same GitHub account as Ada's: a second user cannot hold it; nothing of the row stays.
      localId: 'fb-thief',
      email: 'thief@example.com',
      providerUserInfo: [{ providerId: 'github.com', rawId: '583231' }],
    },
    {
      localId: 'fb-off',
      email: 'off@example.com',
      disabled: true,
      passwordHash: firebaseScrypt('switched off 1', salt),
      salt,
    },
  ];
  return exportFile(users);
}

describe.each(DIALECTS)('import from Firebase on %s', (dialect) => {
  let app: TestApp;
  let providers: ProviderServers;
  let t: TestTenant;
  let fresh: { url: string; drop(): Promise<void> };
  let databaseUrl: string;
  const file = fixture();
  const dir = mkdtempSync(join(tmpdir(), 'lk-firebase-'));

  beforeAll(async () => {
    const socket = reservePort();
    const base = `http://127.0.0.1:${socket.address().port}`;
    providers = await startProviders({ redirectUriFor: (id) => `${base}/oauth/${id}/callback` });
    fresh = await freshDatabaseUrl(dialect);
    databaseUrl = fresh.url;
    app = await startApp(dialect, {
      socket,
      databaseUrl,
      env: { LATCHKEY_PROVIDER_ENDPOINTS: providers.endpointsJson() },
    });
    t = await app.tenant({ allowedOrigins: [ORIGIN] });
    await setProvider(app.ctx.database.db, app.ctx.box, t.tenant.id, 'github', {
      clientId: providers.github.clientId,
      clientSecret: providers.github.clientSecret,
      enabled: true,
    });
  }, 60_000);
  afterAll(async () => {
    await app?.dispose();
    await fresh?.drop();
    await providers?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('imports whole users, refuses bad rows by line with nothing left of them', async () => {
    const summary = await runImport(app, t, 'firebase', file, { firebase: PARAMS });
    expect(summary.imported).toBe(4);
    expect(summary.refused).toEqual([
      { line: lineOf(file, '"fb-phone"') - 1, reason: expect.stringMatching(/no email/) },
      { line: lineOf(file, '"fb-bad"') - 1, reason: expect.stringMatching(/not a valid e-mail/) },
      { line: lineOf(file, '"fb-thief"') - 1, reason: expect.stringMatching(/exists already/) },
    ]);
    expect(await storedUser(app, t, 'thief@example.com')).toBeUndefined();
    expect(await tenantCounts(app, t)).toEqual({ users: 4, identities: 2 });
  });

  it('each user signs in with the Firebase password, and the hash becomes argon2id', async () => {
    for (const [address, password] of [
      ['ada@example.com', 'analytical engine 1843'],
      ['sample@example.com', FIREBASE_SAMPLE.user.password],
    ] as const) {
      expect((await storedUser(app, t, address))?.password_hash).toMatch(/^firebase-scrypt:/);
      expect((await signIn(app, t, address, `${password}!`)).status).toBe(401);
      const { status, body } = await signIn(app, t, address, password);
      expect(status, JSON.stringify(body)).toBe(200);
      expect((await storedUser(app, t, address))?.password_hash).toMatch(/^\$argon2id\$/);
      expect((await signIn(app, t, address, password)).status).toBe(200);
    }
  });

  it('keeps verification, name, custom claims, creation time, disabled state', async () => {
    const ada = await storedUser(app, t, 'ada@example.com');
    expect(ada).toMatchObject({ name: 'Ada Lovelace', created_at: 1486324420000 });
    expect(ada?.email_verified_at).not.toBeNull();
    expect(JSON.parse(ada?.metadata ?? '{}')).toEqual({
      private: { admin: true },
      importedFrom: { source: 'firebase', id: 'fb-ada' },
    });
    expect((await storedUser(app, t, 'sample@example.com'))?.email_verified_at).toBeNull();
    expect((await storedUser(app, t, 'off@example.com'))?.disabled_at).not.toBeNull();
    expect((await signIn(app, t, 'off@example.com', 'switched off 1')).status).not.toBe(200);
    expect(await identitiesOf(app, t, 'ada@example.com')).toEqual(['github:583231']);
    expect(await identitiesOf(app, t, 'grace@example.com')).toEqual([
      'google:104812345678901234567',
    ]);
  });

  it("the user's GitHub account signs in to the imported user", async () => {
    providers.github.next({ sub: '583231', email: 'ada@github.example', emailVerified: true });
    const token = await socialSignIn(app, t, 'github', ORIGIN);
    const claims = await json(await postJson(app, '/api/auth/introspect', t.secretKey, { token }));
    const ada = await storedUser(app, t, 'ada@example.com');
    expect(claims).toMatchObject({ active: true, sub: ada?.id, email: 'ada@example.com' });
    expect(await tenantCounts(app, t)).toEqual({ users: 4, identities: 2 });
  });

  it('a second run changes nothing', async () => {
    const before = await app.ctx.database.db
      .selectFrom('users')
      .select(['email', 'updated_at'])
      .where('tenant_id', '=', t.tenant.id)
      .orderBy('email')
      .execute();
    const again = await runImport(app, t, 'firebase', file, { firebase: PARAMS });
    expect(again).toMatchObject({ imported: 0, updated: 0, unchanged: 4 });
    expect(again.refused.map((r) => r.line)).toHaveLength(3);
    const after = await app.ctx.database.db
      .selectFrom('users')
      .select(['email', 'updated_at'])
      .where('tenant_id', '=', t.tenant.id)
      .orderBy('email')
      .execute();
    expect(after).toEqual(before);
  });

  it('hashes without the project parameters stop the run, naming them', async () => {
    const other = await app.tenant();
    await expect(runImport(app, other, 'firebase', file)).rejects.toThrow(/--hash-key/);
  });

  it('the README command: latchkey import --from firebase with the hash parameters', async () => {
    const other = await app.tenant();
    const path = join(dir, 'users.json');
    writeFileSync(path, file);
    const run = await latchkey(
      [
        'import',
        '--tenant',
        other.tenant.id,
        '--from',
        'firebase',
        path,
        '--hash-key',
        PARAMS.hashKey,
        '--salt-separator',
        PARAMS.saltSeparator,
        '--rounds',
        String(PARAMS.rounds),
        '--mem-cost',
        String(PARAMS.memCost),
        '--json',
      ],
      { DATABASE_URL: databaseUrl, LATCHKEY_SECRET: SECRET },
    );
    expect(JSON.parse(run.stdout)).toMatchObject({ imported: 4 });
    const sample = FIREBASE_SAMPLE.user.password;
    expect((await signIn(app, other, 'sample@example.com', sample)).status).toBe(200);
  });

  it('a file cut short stops the run and says after which line', async () => {
    const other = await app.tenant();
    const cut = file.slice(0, file.indexOf('"fb-bad"') + 20);
    await expect(runImport(app, other, 'firebase', cut, { firebase: PARAMS })).rejects.toThrow(
      new RegExp(`not valid JSON after line ${lineOf(file, '"fb-bad"') - 1}`),
    );
  });
});
