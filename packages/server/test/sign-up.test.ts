import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPasswordHasher } from '../src/modules/users/index.js';
import { emailDomainKeys } from '../src/storage/migrations/008-email-domain-keys.js';
import {
  DIALECTS,
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const PASSWORD = 'correct horse battery staple';

describe.each(DIALECTS)('sign-up on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;
  const signUp = (body: unknown, key = t.secretKey) => postJson(app, '/v1/auth/sign-up', key, body);

  beforeAll(async () => {
    app = await startApp(dialect);
    t = await app.tenant();
  });
  afterAll(() => app.dispose());

  it('answers 201 with exactly the four fields of the reference', async () => {
    const address = email();
    const res = await signUp({
      email: address,
      password: PASSWORD,
      name: 'Ada',
      metadata: { plan: 'gold' },
    });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(Object.keys(body).sort()).toEqual([
      'createdAt',
      'email',
      'userId',
      'verificationRequired',
    ]);
    expect(body.email).toBe(address);
    expect(body.userId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(new Date(body.createdAt).toISOString()).toBe(body.createdAt);
    expect(Math.abs(Date.parse(body.createdAt) - Date.now())).toBeLessThan(60_000);
    expect(body.verificationRequired).toBe(false);
  });

  it('says verification is required when the tenant requires it', async () => {
    const strict = await app.tenant({ requireEmailVerification: true });
    const res = await signUp({ email: email(), password: PASSWORD }, strict.secretKey);
    expect(res.status).toBe(201);
    expect((await json(res)).verificationRequired).toBe(true);
  });

  it('stores an argon2id hash with the OWASP parameters, never the password', async () => {
    const address = email();
    await signUp({ email: address, password: PASSWORD });
    const row = await app.ctx.database.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', address)
      .executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(JSON.stringify(row)).not.toContain(PASSWORD);
  });

  it('trims the address and matches it case-insensitively within the tenant', async () => {
    const local = `Mixed.Case-${Date.now()}`;
    const first = await signUp({ email: `  ${local}@Example.COM\t`, password: PASSWORD });
    expect(first.status).toBe(201);
    expect((await json(first)).email).toBe(`${local}@Example.COM`);
    const again = await signUp({ email: `${local.toLowerCase()}@example.com`, password: PASSWORD });
    expect(again.status).toBe(409);
    expect(again.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await json(again)).toMatchObject({ status: 409, code: 'email_taken' });
  });

  it('never merges look-alike addresses', async () => {
    const stem = `look${Date.now()}`;
    const variants = [
      `${stem}i@example.com`, // ASCII i
      `${stem}ı@example.com`, // dotless ı (U+0131)
      `${stem}İ@example.com`, // dotted capital İ (U+0130)
      `${stem}ｉ@example.com`, // full-width ｉ
      `${stem}é@example.com`, // NFC é
      `${stem}e\u0301@example.com`, // NFD e + combining acute
      `${stem}k@example.com`, // ASCII k
      `${stem}\u212a@example.com`, // Kelvin sign, lower-cases to ASCII k
    ];
    for (const address of variants) {
      const res = await signUp({ email: address, password: PASSWORD });
      expect(res.status, address).toBe(201);
    }
    const upper = await signUp({ email: `${stem.toUpperCase()}É@EXAMPLE.COM`, password: PASSWORD });
    expect(upper.status).toBe(409);
  });

  it('maps the domain as DNS does (UTS-46): one mailbox, one account', async () => {
    const local = `bob${Date.now()}`;
    expect((await signUp({ email: `${local}@yahoo.co.uk`, password: PASSWORD })).status).toBe(201);
    for (const domain of [
      'yahoo.co.u\u212a', // Kelvin sign
      'yahoo.co.\uff55k', // full-width u
      '\uff39ahoo.CO.uk', // full-width Y, capitals
    ]) {
      const res = await signUp({ email: `${local}@${domain}`, password: PASSWORD });
      expect(res.status, domain).toBe(409);
    }
    const signedIn = await postJson(app, '/v1/auth/sign-in', t.secretKey, {
      email: `${local}@yahoo.co.u\u212a`,
      password: PASSWORD,
    });
    expect(signedIn.status).toBe(200);
    // An internationalised domain and its xn-- form are one domain too.
    expect((await signUp({ email: `${local}@bücher.example`, password: PASSWORD })).status).toBe(
      201,
    );
    expect(
      (await signUp({ email: `${local}@xn--bcher-kva.example`, password: PASSWORD })).status,
    ).toBe(409);
  });

  it('recomputes existing keys once; of two accounts of one mailbox the older keeps the match', async () => {
    const db = app.ctx.database.db;
    const local = `legacy${Date.now()}`;
    const older = await json(await signUp({ email: `${local}@yahoo.co.uk`, password: PASSWORD }));
    const younger = await json(
      await signUp({ email: `${local}2@yahoo.co.uk`, password: PASSWORD }),
    );
    // As the old rule wrote them: the domain only case-folded.
    await db
      .updateTable('users')
      .set({ email: `${local}@yahoo.co.u\u212a`, email_key: `${local}@yahoo.co.u\u212a` })
      .where('id', '=', older.userId)
      .execute();
    await db
      .updateTable('users')
      .set({ email: `${local}@yahoo.co.\uff55k`, email_key: `${local}@yahoo.co.\uff55k` })
      .where('id', '=', younger.userId)
      .execute();
    await emailDomainKeys.up(db as never);
    const keys = Object.fromEntries(
      (
        await db
          .selectFrom('users')
          .select(['id', 'email_key'])
          .where('id', 'in', [older.userId, younger.userId])
          .execute()
      ).map((r) => [r.id, r.email_key]),
    );
    expect(keys[older.userId]).toBe(`${local}@yahoo.co.uk`);
    expect(keys[younger.userId]).toBe(`${local}@yahoo.co.\uff55k`);
  });

  it('treats the same address under another tenant as another user', async () => {
    const other = await app.tenant();
    const address = email();
    const a = await signUp({ email: address, password: PASSWORD });
    const b = await signUp({ email: address, password: PASSWORD }, other.secretKey);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect((await json(a)).userId).not.toBe((await json(b)).userId);
  });

  it('gives one 201 and one 409 to two concurrent sign-ups of one address', async () => {
    const address = email('race');
    const results = await Promise.all([
      signUp({ email: address, password: PASSWORD }),
      signUp({ email: address.toUpperCase(), password: PASSWORD }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    const rows = await app.ctx.database.db
      .selectFrom('users')
      .select('id')
      .where('tenant_id', '=', t.tenant.id)
      .where('email_key', '=', address.toLowerCase())
      .execute();
    expect(rows).toHaveLength(1);
  });

  describe('passwords', () => {
    it('refuses 7 characters with password_too_short', async () => {
      const res = await signUp({ email: email(), password: 'seven77' });
      expect(res.status).toBe(422);
      const body = await json(res);
      expect(body).toMatchObject({ code: 'validation_failed', status: 422 });
      expect(body.errors).toEqual([
        expect.objectContaining({ path: '/password', code: 'password_too_short' }),
      ]);
      expect(JSON.stringify(body)).not.toContain('seven77');
    });

    it('counts code points: 8 emoji pass, 7 emoji (14 UTF-16 units) do not', async () => {
      expect((await signUp({ email: email(), password: '🔑'.repeat(8) })).status).toBe(201);
      const res = await signUp({ email: email(), password: '🔑'.repeat(7) });
      expect(res.status).toBe(422);
      expect((await json(res)).errors[0].code).toBe('password_too_short');
    });

    it('accepts long passwords and never truncates them', async () => {
      const hasher = createPasswordHasher(app.ctx.config.argon2);
      const long = `${'x'.repeat(72)}-and-the-rest-of-a-long-passphrase-${'ü'.repeat(100)}`;
      const address = email();
      expect((await signUp({ email: address, password: long })).status).toBe(201);
      const row = await app.ctx.database.db
        .selectFrom('users')
        .select('password_hash')
        .where('email', '=', address)
        .executeTakeFirstOrThrow();
      expect(await hasher.verify(row.password_hash as string, long)).toBe(true);
      expect(await hasher.verify(row.password_hash as string, long.slice(0, 72))).toBe(false);
      expect(await hasher.verify(row.password_hash as string, long.slice(0, -1))).toBe(false);
    });

    it('refuses a 1 MB password with 413 before hashing it, and creates nothing', async () => {
      const address = email();
      const res = await signUp({ email: address, password: 'p'.repeat(1024 * 1024) });
      expect(res.status).toBe(413);
      expect((await json(res)).code).toBe('payload_too_large');
      const rows = await app.ctx.database.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', address)
        .execute();
      expect(rows).toHaveLength(0);
    });

    it('refuses a password over the maximum with password_too_long', async () => {
      const res = await signUp({ email: email(), password: 'p'.repeat(1025) });
      expect(res.status).toBe(422);
      expect((await json(res)).errors[0].code).toBe('password_too_long');
    });

    it('refuses an unpaired surrogate rather than hashing a replacement character', async () => {
      const res = await signUp(`{"email":"${email()}","password":"abcdefgh\\ud800"}`);
      expect(res.status).toBe(422);
      expect((await json(res)).errors[0].code).toBe('password_invalid');
    });
  });

  describe('bad input gets a problem document and changes nothing', () => {
    async function userCount() {
      const row = await app.ctx.database.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    }

    it.each([
      ['malformed JSON', '{"email": "a@b.co", "password": ', 400, 'invalid_request'],
      ['an empty body', '', 400, 'invalid_request'],
      ['a JSON array', '[1,2]', 400, 'invalid_request'],
      ['a number for email', { email: 42, password: PASSWORD }, 400, 'invalid_request'],
      [
        'an object for password',
        { email: 'a@example.com', password: { x: 1 } },
        400,
        'invalid_request',
      ],
      [
        'a string for metadata',
        { email: 'a@example.com', password: PASSWORD, metadata: 'x' },
        400,
        'invalid_request',
      ],
      [
        '__proto__ in metadata',
        '{"email":"p@example.com","password":"correct horse","metadata":{"__proto__":{"admin":true}}}',
        400,
        'invalid_request',
      ],
      [
        'constructor.prototype',
        '{"email":"p@example.com","password":"correct horse","metadata":{"constructor":{"prototype":{}}}}',
        400,
        'invalid_request',
      ],
    ])('%s -> %i %s', async (_name, body, status, code) => {
      const before = await userCount();
      const res = await signUp(body);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = await json(res);
      expect(problem).toMatchObject({
        status,
        code,
        type: expect.any(String),
        title: expect.any(String),
        detail: expect.any(String),
      });
      expect(JSON.stringify(problem)).not.toContain('correct horse');
      expect(await userCount()).toBe(before);
    });

    it.each([
      ['a missing password', { email: 'x@example.com' }, '/password', 'required'],
      ['a missing email', { password: PASSWORD }, '/email', 'required'],
      ['a bad e-mail', { email: 'not-an-address', password: PASSWORD }, '/email', 'email_invalid'],
      [
        'an e-mail with a zero-width space',
        { email: 'a\u200b@example.com', password: PASSWORD },
        '/email',
        'email_invalid',
      ],
      [
        'an unknown field',
        { email: 'x@example.com', password: PASSWORD, admin: true },
        '/admin',
        'unknown_field',
      ],
      [
        'an empty name',
        { email: 'x@example.com', password: PASSWORD, name: '' },
        '/name',
        'name_too_short',
      ],
      [
        'a 201-character name',
        { email: 'x@example.com', password: PASSWORD, name: 'n'.repeat(201) },
        '/name',
        'name_too_long',
      ],
      [
        'a metadata key named constructor',
        { email: 'x@example.com', password: PASSWORD, metadata: { constructor: 1 } },
        '/metadata',
        'metadata_invalid',
      ],
      [
        '51 metadata keys',
        {
          email: 'x@example.com',
          password: PASSWORD,
          metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])),
        },
        '/metadata',
        'metadata_too_long',
      ],
      [
        '9 KB of metadata',
        { email: 'x@example.com', password: PASSWORD, metadata: { blob: 'b'.repeat(9000) } },
        '/metadata',
        'metadata_too_large',
      ],
    ])('%s -> 422 %s', async (_name, body, path, code) => {
      const before = await userCount();
      const res = await signUp(body);
      expect(res.status).toBe(422);
      const problem = await json(res);
      expect(problem.code).toBe('validation_failed');
      expect(problem.errors).toContainEqual(expect.objectContaining({ path, code }));
      expect(await userCount()).toBe(before);
    });

    it('reports every broken field at once', async () => {
      const res = await signUp({ email: 'nope', password: 'short' });
      const problem = await json(res);
      expect(problem.errors.map((e: { code: string }) => e.code).sort()).toEqual([
        'email_invalid',
        'password_too_short',
      ]);
    });

    it('refuses a body over the limit with 413', async () => {
      const res = await signUp({
        email: email(),
        password: PASSWORD,
        metadata: { blob: 'x'.repeat(100_000) },
      });
      expect(res.status).toBe(413);
      expect((await json(res)).code).toBe('payload_too_large');
    });

    it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])(
      'refuses %s with 415',
      async (type) => {
        const res = await app.request('/v1/auth/sign-up', {
          method: 'POST',
          headers: { 'content-type': type, authorization: `Bearer ${t.secretKey}` },
          body: 'email=a@example.com&password=correcthorse',
        });
        expect(res.status).toBe(415);
        expect((await json(res)).code).toBe('unsupported_media_type');
      },
    );

    it('accepts unicode names and addresses', async () => {
      const res = await signUp({
        email: `zoë-${Date.now()}@bücher.example`,
        password: 'pässwörd-ñ',
        name: '  Zoë 🦊 Ångström ',
      });
      expect(res.status).toBe(201);
      const body = await json(res);
      const row = await app.ctx.database.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', body.userId)
        .executeTakeFirstOrThrow();
      expect(row.name).toBe('Zoë 🦊 Ångström');
    });
  });
});
