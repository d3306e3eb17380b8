/**
 * `latchkey import --from auth0 users.ndjson password-hashes.ndjson`: Auth0's user export
 * joined with the password-hash export its support hands out (bcrypt `$2b$10$`), on each
 * database.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { latchkey } from './cli-run.js';
import {
  bcrypt,
  identitiesOf,
  runImport,
  signIn,
  storedUser,
  tenantCounts,
} from './import-support.js';
import {
  DIALECTS,
  freshDatabaseUrl,
  SECRET,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const PASSWORDS = {
  'ada@example.com': 'analytical engine 1843',
  'alan@example.com': 'enigma bombe 1940',
  'linus@example.com': 'penguin kernel 1991',
  'only@example.com': 'hash export only 7',
  'blocked@example.com': 'blocked user 11',
};

const line = (o: unknown) => JSON.stringify(o);

/** The user export (NDJSON) and the password-hash export, as Auth0 writes them. */
function fixture(dir: string) {
  const users = [
    line({
      user_id: 'auth0|5dea9f9c82dd7c0e76e4ec93',
      email: 'ada@example.com',
      email_verified: true,
      name: 'ada@example.com',
      given_name: 'Ada',
      family_name: 'Lovelace',
      user_metadata: { theme: 'dark' },
      app_metadata: { plan: 'pro' },
      created_at: '2019-12-06T18:36:12.412Z',
      identities: [
        {
          provider: 'auth0',
          user_id: '5dea9f9c82dd7c0e76e4ec93',
          connection: 'Username-Password-Authentication',
          isSocial: false,
        },
      ],
    }),
    // A user created with its own id: `alt_id` in the hash export.
    line({
      user_id: 'auth0|euclid',
      email: 'alan@example.com',
      email_verified: false,
      name: 'Alan Turing',
      identities: [
        {
          provider: 'auth0',
          user_id: 'euclid',
          connection: 'Username-Password-Authentication',
          isSocial: false,
        },
      ],
    }),
    line({
      user_id: 'google-oauth2|104812345678901234567',
      email: 'grace@example.com',
      email_verified: true,
      name: 'Grace Hopper',
      identities: [
        {
          provider: 'google-oauth2',
          user_id: '104812345678901234567',
          connection: 'google-oauth2',
          isSocial: true,
        },
      ],
    }),
    // A database user with a linked GitHub account (numeric id) and a LinkedIn one.
    line({
      user_id: 'auth0|64b7f0c2e1d3a4b5c6d7e8f9',
      email: 'linus@example.com',
      email_verified: true,
      name: 'Linus',
      identities: [
        {
          provider: 'auth0',
          user_id: '64b7f0c2e1d3a4b5c6d7e8f9',
          connection: 'Username-Password-Authentication',
          isSocial: false,
        },
        { provider: 'github', user_id: 583231, connection: 'github', isSocial: true },
        { provider: 'linkedin', user_id: 'li-77', connection: 'linkedin', isSocial: true },
      ],
    }),
    '{"user_id": "auth0|broken", "email": ',
    line({
      user_id: 'sms|5f0c',
      phone_number: '+15555550100',
      identities: [{ provider: 'sms', user_id: '5f0c' }],
    }),
    line({
      user_id: 'auth0|5f1a2b3c4d5e6f7a8b9c0d1e',
      email: 'blocked@example.com',
      email_verified: true,
      blocked: true,
      identities: [{ provider: 'auth0', user_id: '5f1a2b3c4d5e6f7a8b9c0d1e' }],
    }),
  ].join('\n');
  const hashes = [
    line({
      _id: { $oid: '5dea9f9c82dd7c0e76e4ec93' },
      email_verified: true,
      email: 'ada@example.com',
      passwordHash: bcrypt(PASSWORDS['ada@example.com']),
      password_set_date: { $date: '2019-12-06T18:36:12.412Z' },
      tenant: 'example-tenant',
      connection: 'Username-Password-Authentication',
      _tmp_is_unique: true,
    }),
    // Only in `identifiers`: some records keep the address there.
    line({
      _id: { $oid: '5dea9f9c82dd7c0e76e4ec94' },
      alt_id: 'euclid',
      passwordHash: bcrypt(PASSWORDS['alan@example.com']),
      connection: 'Username-Password-Authentication',
      identifiers: [{ type: 'email', value: 'alan@example.com', verified: false }],
    }),
    line({
      _id: { $oid: '64b7f0c2e1d3a4b5c6d7e8f9' },
      email: 'linus@example.com',
      email_verified: true,
      passwordHash: bcrypt(PASSWORDS['linus@example.com']),
    }),
    line({
      _id: { $oid: '5f1a2b3c4d5e6f7a8b9c0d1e' },
      email: 'blocked@example.com',
      passwordHash: bcrypt(PASSWORDS['blocked@example.com']),
    }),
    line({
      _id: { $oid: '65aa00000000000000000001' },
      email: 'only@example.com',
      email_verified: true,
      passwordHash: bcrypt(PASSWORDS['only@example.com']),
    }),
  ].join('\n');
  const hashFile = join(dir, 'password-hashes.ndjson');
  writeFileSync(hashFile, `${hashes}\n`);
  return { users: `${users}\n`, hashFile };
}

describe.each(DIALECTS)('import from Auth0 on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;
  let fresh: { url: string; drop(): Promise<void> };
  let databaseUrl: string;
  const dir = mkdtempSync(join(tmpdir(), 'lk-auth0-'));
  const { users, hashFile } = fixture(dir);
  const options = { companions: [hashFile] };

  beforeAll(async () => {
    fresh = await freshDatabaseUrl(dialect);
    databaseUrl = fresh.url;
    app = await startApp(dialect, { databaseUrl });
    t = await app.tenant();
  }, 60_000);
  afterAll(async () => {
    await app?.dispose();
    await fresh?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('joins the two files, refuses bad lines by number, leaves nothing of them', async () => {
    const summary = await runImport(app, t, 'auth0', users, options);
    expect(summary.refused).toEqual([
      { line: 5, reason: expect.stringMatching(/not a JSON object/) },
      { line: 6, reason: expect.stringMatching(/no email/) },
    ]);
    expect(summary.imported).toBe(6);
    expect(await tenantCounts(app, t)).toEqual({ users: 6, identities: 2 });
    // What was read but not carried is reported by line, and the user imported.
    expect(summary.notes).toEqual(
      expect.arrayContaining([
        {
          line: expect.any(Number),
          reason: expect.stringMatching(/identity linkedin\|li-77 skipped/),
        },
      ]),
    );
  });

  it('each database user signs in with the Auth0 password; the hash becomes argon2id', async () => {
    for (const address of [
      'ada@example.com',
      'alan@example.com',
      'linus@example.com',
      'only@example.com',
    ] as const) {
      const password = PASSWORDS[address];
      expect((await storedUser(app, t, address))?.password_hash).toMatch(/^bcrypt:\$2b\$10\$/);
      expect((await signIn(app, t, address, 'not the password 1')).status).toBe(401);
      const { status, body } = await signIn(app, t, address, password);
      expect(status, JSON.stringify(body)).toBe(200);
      expect((await storedUser(app, t, address))?.password_hash).toMatch(/^\$argon2id\$/);
    }
    expect((await storedUser(app, t, 'grace@example.com'))?.password_hash).toBeNull();
    expect(
      (await signIn(app, t, 'blocked@example.com', PASSWORDS['blocked@example.com'])).status,
    ).not.toBe(200);
  });

  it('keeps names, verification, metadata, identities and blocked state', async () => {
    const ada = await storedUser(app, t, 'ada@example.com');
    expect(ada).toMatchObject({
      name: 'Ada Lovelace',
      created_at: Date.parse('2019-12-06T18:36:12.412Z'),
    });
    expect(ada?.email_verified_at).not.toBeNull();
    expect(JSON.parse(ada?.metadata ?? '{}')).toEqual({
      public: { theme: 'dark' },
      private: { plan: 'pro' },
      importedFrom: { source: 'auth0', id: 'auth0|5dea9f9c82dd7c0e76e4ec93' },
    });
    expect(await storedUser(app, t, 'alan@example.com')).toMatchObject({
      name: 'Alan Turing',
      email_verified_at: null,
    });
    expect(await identitiesOf(app, t, 'grace@example.com')).toEqual([
      'google:104812345678901234567',
    ]);
    expect(await identitiesOf(app, t, 'linus@example.com')).toEqual(['github:583231']);
    expect((await storedUser(app, t, 'only@example.com'))?.email_verified_at).not.toBeNull();
    expect((await storedUser(app, t, 'blocked@example.com'))?.disabled_at).not.toBeNull();
  });

  it('a second run changes nothing', async () => {
    const again = await runImport(app, t, 'auth0', users, options);
    expect(again).toMatchObject({ imported: 0, updated: 0, unchanged: 6 });
    expect(await tenantCounts(app, t)).toEqual({ users: 6, identities: 2 });
  });

  it('the README command: latchkey import --from auth0 USERS HASHES', async () => {
    const other = await app.tenant();
    const usersFile = join(dir, 'users.ndjson');
    writeFileSync(usersFile, users);
    const env = { DATABASE_URL: databaseUrl, LATCHKEY_SECRET: SECRET };
    const args = ['import', '--tenant', other.tenant.id, '--from', 'auth0', usersFile, hashFile];
    const run = await latchkey([...args, '--json'], env);
    expect(run.code, run.stderr).toBe(1); // rows were refused
    expect(JSON.parse(run.stdout)).toMatchObject({
      imported: 6,
      refused: [{ line: 5 }, { line: 6 }],
    });
    const { status } = await signIn(app, other, 'ada@example.com', PASSWORDS['ada@example.com']);
    expect(status).toBe(200);
    const again = await latchkey(args, env);
    expect(again.stdout).toMatch(/imported 0, updated 0, unchanged 6, refused 2/);
    expect(again.stderr).toMatch(/refused line 5: /);
  });
});
