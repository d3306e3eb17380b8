/**
 * `latchkey import --from clerk users.csv`: the CSV Clerk's dashboard exports, with digests
 * under each `password_hasher` Clerk documents, made here with independent libraries.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  argon2,
  bcrypt,
  djangoPbkdf2,
  FIREBASE_SAMPLE,
  firebaseScrypt,
  runImport,
  signIn,
  storedUser,
  tenantCounts,
} from './import-support.js';
import { DIALECTS, startApp, type TestApp, type TestTenant } from './support.js';

const HEADER =
  'id,first_name,last_name,username,primary_email_address,primary_phone_number,verified_email_addresses,unverified_email_addresses,verified_phone_numbers,unverified_phone_numbers,totp_secret,password_digest,password_hasher';

const PASSWORDS = {
  'ada@example.com': 'analytical engine 1843',
  'bob@example.com': 'argon two id 2015',
  'carol@example.com': 'django unchained 2005',
  'dave@example.com': 'firebase scrypt 2016',
};

/** One CSV line; fields with commas or quotes quoted as RFC 4180 says. */
const row = (fields: string[]) =>
  fields.map((f) => (/[",\n]/.test(f) ? `"${f.replaceAll('"', '""')}"` : f)).join(',');

async function fixture(): Promise<string> {
  const salt = randomBytes(12).toString('base64');
  const dave = [
    firebaseScrypt(PASSWORDS['dave@example.com'], salt),
    salt,
    FIREBASE_SAMPLE.hashKey,
    FIREBASE_SAMPLE.saltSeparator,
    String(FIREBASE_SAMPLE.rounds),
    String(FIREBASE_SAMPLE.memCost),
  ].join('$');
  return `${[
    HEADER,
    row([
      'user_2a',
      'Ada',
      'Lovelace',
      'ada',
      'ada@example.com',
      '+15555550101',
      'ada@example.com|ada@work.example',
      '',
      '+15555550101',
      '',
      'JBSWY3DPEHPK3PXP',
      bcrypt(PASSWORDS['ada@example.com'], '$2a$'),
      'bcrypt',
    ]),
    row([
      'user_2b',
      'Bob',
      'Smith, Jr.',
      '',
      'bob@example.com',
      '',
      '',
      'bob@example.com',
      '',
      '',
      '',
      await argon2(PASSWORDS['bob@example.com']),
      'argon2id',
    ]),
    row([
      'user_2c',
      'Carol',
      '',
      '',
      'carol@example.com',
      '',
      'carol@example.com',
      '',
      '',
      '',
      '',
      djangoPbkdf2(PASSWORDS['carol@example.com']),
      'pbkdf2_sha256_django',
    ]),
    row([
      'user_2d',
      'Dave',
      '',
      '',
      'dave@example.com',
      '',
      'dave@example.com',
      '',
      '',
      '',
      '',
      dave,
      'scrypt_firebase',
    ]),
    row([
      'user_2e',
      'Erin',
      '',
      '',
      'erin@example.com',
      '',
      'erin@example.com',
      '',
      '',
      '',
      '',
      '5f4dcc3b5aa765d61d8327deb882cf99',
      'md5',
    ]),
    row([
      'user_2f',
      'Phone',
      'Only',
      '',
      '',
      '+15555550102',
      '',
      '',
      '+15555550102',
      '',
      '',
      '',
      '',
    ]),
    'user_2g,Short,Row,,short@example.com',
    row([
      'user_2h',
      'Frank',
      '',
      '',
      'frank@example.com',
      '',
      'frank@example.com',
      '',
      '',
      '',
      '',
      '',
      '',
    ]),
    // A blank line, then a row with one field too many (an unquoted comma): line 11.
    '',
    'user_2i,Gina,Smith, Jr.,,gina@example.com,,gina@example.com,,,,,,',
  ].join('\n')}\n`;
}

describe.each(DIALECTS)('import from Clerk on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;
  let file: string;

  beforeAll(async () => {
    file = await fixture();
    app = await startApp(dialect);
    t = await app.tenant();
  }, 60_000);
  afterAll(async () => {
    await app?.dispose();
  });

  it('imports each row whole; refuses bad rows by line; reports unknown hashers', async () => {
    const summary = await runImport(app, t, 'clerk', file);
    expect(summary.refused).toEqual([
      { line: 7, reason: expect.stringMatching(/no primary_email_address/) },
      { line: 8, reason: expect.stringMatching(/5 fields where the header has 13/) },
      { line: 11, reason: expect.stringMatching(/14 fields where the header has 13/) },
    ]);
    expect(summary.passwordless).toEqual([{ line: 6, reason: expect.stringMatching(/md5/) }]);
    expect(summary.imported).toBe(6);
    expect(await storedUser(app, t, 'short@example.com')).toBeUndefined();
    expect(await storedUser(app, t, 'gina@example.com')).toBeUndefined();
    expect(await tenantCounts(app, t)).toEqual({ users: 6, identities: 0 });
  });

  it('bcrypt, argon2id, Django PBKDF2 and Firebase scrypt users sign in; then argon2id', async () => {
    for (const [address, password] of Object.entries(PASSWORDS)) {
      expect((await signIn(app, t, address, 'not the password 1')).status).toBe(401);
      const { status, body } = await signIn(app, t, address, password);
      expect(status, `${address}: ${JSON.stringify(body)}`).toBe(200);
      expect((await storedUser(app, t, address))?.password_hash).toMatch(/^\$argon2id\$/);
    }
    expect((await storedUser(app, t, 'erin@example.com'))?.password_hash).toBeNull();
  });

  it('keeps names, the username and which primary addresses were verified', async () => {
    const ada = await storedUser(app, t, 'ada@example.com');
    expect(ada?.name).toBe('Ada Lovelace');
    expect(ada?.email_verified_at).not.toBeNull();
    expect(JSON.parse(ada?.metadata ?? '{}')).toEqual({
      public: { username: 'ada' },
      importedFrom: { source: 'clerk', id: 'user_2a' },
    });
    const bob = await storedUser(app, t, 'bob@example.com');
    expect(bob).toMatchObject({ name: 'Bob Smith, Jr.', email_verified_at: null });
  });

  it('a second run changes nothing', async () => {
    const again = await runImport(app, t, 'clerk', file);
    expect(again).toMatchObject({ imported: 0, updated: 0, unchanged: 6 });
    expect(again.refused.map((r) => r.line)).toEqual([7, 8, 11]);
    expect(await tenantCounts(app, t)).toEqual({ users: 6, identities: 0 });
  });

  it('another CSV stops the run, saying which columns are missing', async () => {
    const other = await app.tenant();
    await expect(
      runImport(app, other, 'clerk', 'name,email\nSomebody,somebody@example.com\n'),
    ).rejects.toThrow("not Clerk's user export: the header line has no id, primary_email_address");
    expect(await tenantCounts(app, other)).toEqual({ users: 0, identities: 0 });
  });
});
