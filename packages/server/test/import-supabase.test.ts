/**
 * `latchkey import --from supabase`: `auth.users` rows (with the user's `auth.identities`
 * as a JSON column) as psql writes them: CSV from `\copy … with csv header`, JSON lines
 * from `row_to_json`, or one array from `json_agg`; bcrypt `$2a$10$` as Supabase's Go
 * code writes it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  argon2,
  bcrypt,
  identitiesOf,
  runImport,
  signIn,
  storedUser,
  tenantCounts,
} from './import-support.js';
import { DIALECTS, startApp, type TestApp, type TestTenant } from './support.js';

const PASSWORDS = {
  'ada@example.com': 'analytical engine 1843',
  'bob@example.com': 'postgres row level 9',
  'carol@example.com': 'migrated argon two 5',
};
/** Supabase keeps the argon2 hashes its own user import brought, as they came. */
const CAROL_HASH = await argon2(PASSWORDS['carol@example.com']);

type Row = Record<string, string | boolean | null | object>;

function rows(): Row[] {
  const adaId = randomUUID();
  const base = (over: Row): Row => ({
    instance_id: '00000000-0000-0000-0000-000000000000',
    id: randomUUID(),
    aud: 'authenticated',
    role: 'authenticated',
    email: null,
    encrypted_password: '',
    email_confirmed_at: null,
    raw_app_meta_data: { provider: 'email', providers: ['email'] },
    raw_user_meta_data: {},
    created_at: '2024-01-15 10:20:30.123456+00',
    banned_until: null,
    deleted_at: null,
    is_anonymous: false,
    identities: null,
    ...over,
  });
  return [
    base({
      id: adaId,
      email: 'ada@example.com',
      encrypted_password: bcrypt(PASSWORDS['ada@example.com'], '$2a$'),
      email_confirmed_at: '2024-01-15 10:21:00.5+00',
      raw_user_meta_data: { full_name: 'Ada Lovelace', theme: 'dark' },
      raw_app_meta_data: { provider: 'email', providers: ['email', 'github'], plan: 'pro' },
      identities: [
        {
          provider: 'email',
          provider_id: adaId,
          identity_data: { sub: adaId, email: 'ada@example.com' },
        },
        {
          provider: 'github',
          provider_id: '583231',
          identity_data: { sub: '583231', email: 'ada@github.example' },
        },
        { provider: 'twitter', provider_id: '99887766', identity_data: { sub: '99887766' } },
      ],
    }),
    base({
      email: 'grace@example.com',
      email_confirmed_at: '2024-02-01 08:00:00+00',
      raw_app_meta_data: { provider: 'google', providers: ['google'] },
      raw_user_meta_data: { name: 'Grace Hopper' },
      identities: [
        {
          provider: 'google',
          provider_id: '104812345678901234567',
          identity_data: { sub: '104812345678901234567' },
        },
      ],
    }),
    base({
      email: 'bob@example.com',
      encrypted_password: bcrypt(PASSWORDS['bob@example.com'], '$2a$'),
    }),
    base({ email: 'gone@example.com', deleted_at: '2024-03-01 00:00:00+00' }),
    base({ email: 'carol@example.com', encrypted_password: CAROL_HASH }),
    base({ is_anonymous: true }),
    base({ email: 'banned@example.com', banned_until: '2124-01-01 00:00:00+00' }),
  ];
}

/** psql's CSV: jsonb as JSON text, booleans t/f, NULL empty, quoted as RFC 4180 says. */
function csv(list: Row[]): string {
  const columns = Object.keys(list[0] as Row);
  const cell = (v: Row[string]) => {
    const s =
      v === null
        ? ''
        : typeof v === 'boolean'
          ? v
            ? 't'
            : 'f'
          : typeof v === 'object'
            ? JSON.stringify(v)
            : v;
    return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  return `${[columns.join(','), ...list.map((r) => columns.map((c) => cell(r[c] ?? null)).join(','))].join('\n')}\n`;
}

const FORMATS = {
  csv,
  'JSON lines': (list: Row[]) => `${list.map((r) => JSON.stringify(r)).join('\n')}\n`,
  'a JSON array': (list: Row[]) => `[${list.map((r) => JSON.stringify(r)).join(',\n ')}]\n`,
};
// CSV and JSON lines: the header is line 1 only in CSV; a JSON array starts on line 1.
const FIRST_LINE = { csv: 2, 'JSON lines': 1, 'a JSON array': 1 };

describe.each(DIALECTS)('import from Supabase on %s', (dialect) => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startApp(dialect);
  }, 60_000);
  afterAll(async () => {
    await app?.dispose();
  });

  describe.each(Object.keys(FORMATS) as (keyof typeof FORMATS)[])('as %s', (format) => {
    let t: TestTenant;
    const file = FORMATS[format](rows());
    const first = FIRST_LINE[format];

    beforeAll(async () => {
      t = await app.tenant();
    });

    it('imports each row whole and refuses deleted and anonymous users by line', async () => {
      const summary = await runImport(app, t, 'supabase', file);
      expect(summary.refused).toEqual([
        { line: first + 3, reason: expect.stringMatching(/deleted/) },
        { line: first + 5, reason: expect.stringMatching(/no email/) },
      ]);
      expect(summary.imported).toBe(5);
      expect(await tenantCounts(app, t)).toEqual({ users: 5, identities: 2 });
    });

    it('users sign in with their Supabase passwords, and the hash becomes argon2id', async () => {
      for (const [address, password] of Object.entries(PASSWORDS)) {
        expect((await storedUser(app, t, address))?.password_hash).toMatch(
          /^(bcrypt:\$2a\$10\$|argon2id:\$argon2id\$)/,
        );
        expect((await signIn(app, t, address, 'not the password 1')).status).toBe(401);
        const { status, body } = await signIn(app, t, address, password);
        expect(status, JSON.stringify(body)).toBe(200);
        expect((await storedUser(app, t, address))?.password_hash).toMatch(/^\$argon2id\$/);
      }
    });

    it('keeps confirmation, names, metadata, identities and bans', async () => {
      const ada = await storedUser(app, t, 'ada@example.com');
      expect(ada?.name).toBe('Ada Lovelace');
      expect(ada?.email_verified_at).not.toBeNull();
      expect(ada?.created_at).toBe(Date.parse('2024-01-15T10:20:30.123Z'));
      expect(JSON.parse(ada?.metadata ?? '{}')).toMatchObject({
        public: { full_name: 'Ada Lovelace', theme: 'dark' },
        private: { plan: 'pro' },
        importedFrom: { source: 'supabase' },
      });
      expect(await identitiesOf(app, t, 'ada@example.com')).toEqual(['github:583231']);
      expect(await identitiesOf(app, t, 'grace@example.com')).toEqual([
        'google:104812345678901234567',
      ]);
      expect(await storedUser(app, t, 'grace@example.com')).toMatchObject({
        name: 'Grace Hopper',
        password_hash: null,
      });
      expect((await storedUser(app, t, 'bob@example.com'))?.email_verified_at).toBeNull();
      expect((await storedUser(app, t, 'banned@example.com'))?.disabled_at).not.toBeNull();
    });

    it('a second run changes nothing', async () => {
      const again = await runImport(app, t, 'supabase', file);
      expect(again).toMatchObject({ imported: 0, updated: 0, unchanged: 5 });
      expect(await tenantCounts(app, t)).toEqual({ users: 5, identities: 2 });
    });
  });
});
