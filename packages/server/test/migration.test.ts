/**
 * docs/design.md §16: `latchkey export` and `latchkey import` (the real, built CLI) against a
 * real server on the same database, on every database. Hashes from other systems are made
 * here with independent libraries (bcryptjs, hash-wasm, node:crypto for Firebase's
 * documented construction) and must sign in through REST and the hosted form.
 */
import { spawn } from 'node:child_process';
import { createCipheriv, randomBytes, scryptSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcryptjs from 'bcryptjs';
import { argon2i, argon2id, pbkdf2, scrypt } from 'hash-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firebaseScryptEncoded } from '../src/crypto/imported-hashes/index.js';
import {
  DEVELOPMENT_ISSUER,
  developmentSubject,
  setProvider,
} from '../src/modules/social/index.js';
import { ADMIN_PASSWORD, signedInAdmin } from './admin-support.js';
import { latchkey, MAIN, type Result } from './cli-run.js';
import {
  type Body,
  browserSignIn,
  DIALECTS,
  email,
  eventually,
  freshDatabaseUrl,
  json,
  postJson,
  SECRET,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const ORIGIN = 'http://localhost:3000';

/** Firebase's modified scrypt as its documentation (firebase/scrypt) describes it. */
function firebaseHash(password: string, salt: Buffer, p: { key: Buffer; sep: Buffer }) {
  const derived = scryptSync(password, Buffer.concat([salt, p.sep]), 32, {
    N: 2 ** 14,
    r: 8,
    p: 1,
  });
  const cipher = createCipheriv('aes-256-ctr', derived, Buffer.alloc(16));
  return Buffer.concat([cipher.update(p.key), cipher.final()]).toString('base64');
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64').replace(/=+$/, '');

/** One user of a hand-written Latchkey export, with `hash` as stored. */
const line = (u: { email: string; hash?: string | null; name?: string; identities?: Body[] }) =>
  JSON.stringify({
    id: crypto.randomUUID(),
    email: u.email,
    emailVerified: true,
    name: u.name ?? null,
    metadata: { plan: 'gold' },
    roles: ['member'],
    disabled: false,
    createdAt: '2024-01-02T03:04:05.000Z',
    passwordHash: u.hash ?? null,
    identities: u.identities ?? [],
    factors: [],
  });

describe.each(DIALECTS)('import and export on %s', (dialect) => {
  let fresh: { url: string; drop(): Promise<void> };
  let app: TestApp;
  let env: Record<string, string>;
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-import-'));
  const cli = (...args: string[]) => latchkey(args, env);
  const summaryOf = (r: Result) => JSON.parse(r.stdout) as Body;
  const db = () => app.ctx.database.db;
  const usersOf = (t: TestTenant) =>
    db().selectFrom('users').selectAll().where('tenant_id', '=', t.tenant.id).execute();
  const signIn = (t: TestTenant, credentials: { email: string; password: string }) =>
    postJson(app, '/v1/auth/sign-in', t.secretKey, credentials);

  /** Users of other systems, each with its password. */
  const foreign: { email: string; password: string; hash: string }[] = [];
  let source: TestTenant;
  let target: TestTenant;
  const natives: { email: string; password: string }[] = [];
  let file: string;
  const lines: string[] = [];

  beforeAll(async () => {
    fresh = await freshDatabaseUrl(dialect);
    env = { DATABASE_URL: fresh.url, LATCHKEY_SECRET: SECRET };
    app = await startApp(dialect, { databaseUrl: fresh.url });
    source = await app.tenant();
    target = await app.tenant({ allowedOrigins: [ORIGIN] });
    for (const name of ['Ada', 'Grace']) {
      const user = { email: email(name.toLowerCase()), password: `${name} horse battery staple` };
      const up = await postJson(app, '/v1/auth/sign-up', source.secretKey, { ...user, name });
      expect(up.status).toBe(201);
      natives.push(user);
    }
    const pw = (n: string) => `imported password ${n}`;
    const salt = randomBytes(16);
    const fb = { key: randomBytes(64), sep: Buffer.from('Bw==', 'base64') };
    const fbSalt = randomBytes(12);
    foreign.push(
      {
        email: email('bcrypt'),
        password: pw('b'),
        hash: `bcrypt:${bcryptjs.hashSync(pw('b'), 8)}`,
      },
      {
        email: email('argon2id'),
        password: pw('a'),
        hash: `argon2id:${await argon2id({ password: pw('a'), salt, iterations: 2, memorySize: 4096, parallelism: 1, hashLength: 32, outputType: 'encoded' })}`,
      },
      {
        email: email('argon2i'),
        password: pw('i'),
        hash: `argon2i:${await argon2i({ password: pw('i'), salt, iterations: 2, memorySize: 4096, parallelism: 1, hashLength: 32, outputType: 'encoded' })}`,
      },
      {
        email: email('scrypt'),
        password: pw('s'),
        hash: `scrypt:$scrypt$ln=12,r=8,p=1$${b64(salt)}$${b64(await scrypt({ password: pw('s'), salt, costFactor: 4096, blockSize: 8, parallelism: 1, hashLength: 32, outputType: 'binary' }))}`,
      },
      {
        email: email('django'),
        password: pw('d'),
        hash: `pbkdf2-sha256:pbkdf2_sha256$10000$saltysalt$${Buffer.from(await pbkdf2({ password: pw('d'), salt: 'saltysalt', iterations: 10000, hashLength: 32, hashFunction: (await import('hash-wasm')).createSHA256(), outputType: 'binary' })).toString('base64')}`,
      },
      {
        email: email('firebase'),
        password: pw('f'),
        hash: `firebase-scrypt:${firebaseScryptEncoded({
          rounds: 8,
          memCost: 14,
          saltSeparator: fb.sep.toString('base64'),
          signerKey: fb.key.toString('base64'),
          salt: fbSalt.toString('base64'),
          hash: firebaseHash(pw('f'), fbSalt, fb),
        })}`,
      },
    );
  });
  afterAll(async () => {
    await app?.dispose();
    await fresh?.drop();
  });

  it('export writes one JSON line per user, with the hash as stored and no secrets', async () => {
    file = join(dir, 'users.jsonl');
    const result = await cli('export', '--tenant', source.tenant.id, '--out', file);
    expect(result, result.stderr).toMatchObject({ code: 0 });
    lines.push(...readFileSync(file, 'utf8').trim().split('\n'));
    expect(lines).toHaveLength(2);
    const first = JSON.parse(lines[0] ?? '') as Body;
    expect(Object.keys(first).sort()).toEqual(
      [
        'createdAt',
        'disabled',
        'email',
        'emailVerified',
        'factors',
        'id',
        'identities',
        'metadata',
        'name',
        'passwordHash',
        'roles',
      ].sort(),
    );
    expect(first).toMatchObject({
      email: natives[0]?.email,
      name: 'Ada',
      factors: [],
      identities: [],
    });
    expect(first.passwordHash).toMatch(/^\$argon2id\$/);
    // To stdout, the same lines.
    const out = await cli('export', '--tenant', source.tenant.id);
    expect(out.stdout.trim().split('\n')).toEqual(lines);
  });

  it('import brings every user in; each signs in with its old password, then has argon2id', async () => {
    const rows = [
      ...lines,
      ...foreign.map((f) => line({ email: f.email, hash: f.hash })),
      line({ email: email('odd'), hash: 'md5:5f4dcc3b5aa765d61d8327deb882cf99' }),
      line({ email: email('broken'), hash: 'bcrypt:$2b$10$tooshort' }),
      '{"email": "not an address", "identities": []}',
      'not json',
      line({ email: email('social'), identities: [{ provider: 'google', subject: 'g-123' }] }),
      // The same Google subject again: the user row would go in, its identity cannot; the
      // whole row is refused and nothing of it stays.
      line({ email: email('clash'), identities: [{ provider: 'google', subject: 'g-123' }] }),
    ];
    file = join(dir, 'all.jsonl');
    writeFileSync(file, `${rows.join('\n')}\n`);
    const result = await cli(
      'import',
      '--tenant',
      target.tenant.id,
      '--from',
      'latchkey',
      file,
      '--json',
    );
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/import: \d+ rows, \d+ rows\/s/);
    const summary = summaryOf(result);
    expect(summary).toMatchObject({ imported: 11, updated: 0, unchanged: 0 });
    expect(summary.refused.map((r: Body) => r.line)).toEqual([11, 12, 14]);
    expect(summary.refused[2].reason).toMatch(/exists already/);
    expect(summary.passwordless.map((r: Body) => r.line)).toEqual([9, 10]);
    const users = await usersOf(target);
    expect(users).toHaveLength(11);
    expect(users.some((u) => u.email.startsWith('clash'))).toBe(false);
    const social = users.find((u) => u.email.startsWith('social'));
    const identities = await db()
      .selectFrom('identities')
      .select(['user_id', 'issuer', 'subject'])
      .where('tenant_id', '=', target.tenant.id)
      .execute();
    expect(identities).toEqual([
      { user_id: social?.id, issuer: 'https://accounts.google.com', subject: 'g-123' },
    ]);
    const bcryptUser = users.find((u) => u.email === foreign[0]?.email);
    expect(bcryptUser).toMatchObject({
      name: null,
      metadata: '{"plan":"gold"}',
      roles: '["member"]',
    });
    expect(bcryptUser?.email_verified_at).not.toBeNull();
  });

  it('a wrong password fails on an imported hash and leaves it as it was', async () => {
    const f = foreign[0];
    const res = await signIn(target, { email: f?.email ?? '', password: 'wrong password here' });
    expect(res.status).toBe(401);
    const row = (await usersOf(target)).find((u) => u.email === f?.email);
    expect(row?.password_hash).toBe(f?.hash);
  });

  it('every imported user signs in through REST, and the hash becomes argon2id', async () => {
    for (const { email, password } of [...natives, ...foreign.slice(0, -1)]) {
      const user = { email, password };
      const res = await signIn(target, user);
      expect(res.status, `${user.email} ${await res.clone().text()}`).toBe(200);
      expect((await json(res)).user.email).toBe(user.email);
      const row = (await usersOf(target)).find((u) => u.email === user.email);
      expect(row?.password_hash).toMatch(/^\$argon2id\$v=19\$/);
      // And again, now on the tenant's own hash.
      expect((await signIn(target, user)).status).toBe(200);
    }
  });

  it('an imported user signs in through the hosted form (Firebase scrypt)', async () => {
    const f = foreign.at(-1) as { email: string; password: string };
    const session = await browserSignIn(
      app,
      target,
      { email: f.email, password: f.password },
      ORIGIN,
    );
    expect(session.access_token ?? session.accessToken).toBeTruthy();
    const row = (await usersOf(target)).find((u) => u.email === f.email);
    expect(row?.password_hash).toMatch(/^\$argon2id\$/);
  });

  it('a second run changes nothing and says so', async () => {
    const before = await usersOf(target);
    const result = await cli(
      'import',
      '--tenant',
      target.tenant.id,
      '--from',
      'latchkey',
      file,
      '--json',
    );
    const summary = summaryOf(result);
    expect(summary).toMatchObject({ imported: 0, updated: 0, unchanged: 11, passwordless: [] });
    expect(summary.refused.map((r: Body) => r.line)).toEqual([11, 12, 14]);
    expect(await usersOf(target)).toEqual(before);
  });

  it('an existing user with other data is refused, and replaced with --update', async () => {
    const f = foreign[1] as { email: string };
    const changed = join(dir, 'changed.jsonl');
    writeFileSync(changed, `${line({ email: f.email.toUpperCase(), name: 'Renamed' })}\n`);
    const refused = await cli(
      'import',
      '--tenant',
      target.tenant.id,
      '--from',
      'latchkey',
      changed,
      '--json',
    );
    expect(refused.code).toBe(1);
    expect(summaryOf(refused).refused[0]).toEqual({
      line: 1,
      reason: expect.stringMatching(/exists with other data \(--update replaces it\)/),
    });
    const updated = await cli(
      'import',
      '--tenant',
      target.tenant.id,
      '--from',
      'latchkey',
      changed,
      '--update',
      '--json',
    );
    expect(updated.code, updated.stderr).toBe(0);
    expect(summaryOf(updated)).toMatchObject({ imported: 0, updated: 1, refused: [] });
    const row = (await usersOf(target)).find((u) => u.email_key === f.email.toLowerCase());
    expect(row?.name).toBe('Renamed');
    // Its password, upgraded at its sign-in, stays.
    expect(row?.password_hash).toMatch(/^\$argon2id\$/);
  });

  it('--dry-run reports what it would do and writes nothing', async () => {
    const empty = await app.tenant();
    const result = await cli(
      'import',
      '--tenant',
      empty.tenant.id,
      '--from',
      'latchkey',
      file,
      '--dry-run',
      '--json',
    );
    expect(summaryOf(result)).toMatchObject({ dryRun: true, imported: 11 });
    expect(await usersOf(empty)).toEqual([]);
    const text = await cli(
      'import',
      '--tenant',
      empty.tenant.id,
      '--from',
      'latchkey',
      file,
      '--dry-run',
    );
    expect(text.stdout).toContain(
      'imported 11, updated 0, unchanged 0, refused 3, without password 2, notes 0 (dry run: nothing written)',
    );
    expect(text.stderr).toContain('refused line 11: ');
  });

  it('--dry-run reports an e-mail repeated across transactions as a real run does', async () => {
    // More rows than one transaction holds (10,000), then rows repeating the first two
    // e-mail addresses: one with the same data (unchanged), one with other data (refused).
    const rows = Array.from({ length: 10_050 }, (_, i) => line({ email: `many${i}@example.com` }));
    rows.push(line({ email: 'many0@example.com' }));
    rows.push(line({ email: 'many1@example.com', name: 'Someone Else' }));
    const many = join(dir, 'repeated.jsonl');
    writeFileSync(many, `${rows.join('\n')}\n`);
    const run = async (...extra: string[]) => {
      const t = await app.tenant();
      const r = await cli(
        'import',
        '--tenant',
        t.tenant.id,
        '--from',
        'latchkey',
        many,
        '--json',
        ...extra,
      );
      const { dryRun: _, ...summary } = summaryOf(r);
      return summary;
    };
    const dry = await run('--dry-run');
    const real = await run();
    expect(real).toMatchObject({ imported: 10_050, unchanged: 1 });
    expect(real.refused.map((r: Body) => r.line)).toEqual([10_052]);
    expect(dry).toEqual(real);
  });

  it.runIf(dialect === 'sqlite')(
    '--dry-run on SQLite holds no write lock: the server writes meanwhile without waiting',
    async () => {
      const t = await app.tenant();
      const { userId } = await json(
        await postJson(app, '/v1/auth/sign-up', t.secretKey, {
          email: email('writer'),
          password: 'correct horse battery staple',
        }),
      );
      const rows = Array.from({ length: 120_000 }, (_, i) =>
        line({ email: `dry${i}@example.com` }),
      );
      const big = join(dir, 'dry.jsonl');
      writeFileSync(big, `${rows.join('\n')}\n`);
      const child = spawn(
        process.execPath,
        [MAIN, 'import', '--tenant', t.tenant.id, '--from', 'latchkey', big, '--dry-run', '--json'],
        { env: { ...process.env, ...env }, cwd: tmpdir() },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => {
        stdout += c;
      });
      child.stderr.on('data', (c) => {
        stderr += c;
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      let running = true;
      void exited.then(() => {
        running = false;
      });
      // Once the dry run is writing its rows (its first progress line), the server changes a
      // user again and again until it ends: none of these waits for the dry run.
      await eventually(async () =>
        /import: \d+ rows/.test(stderr) || !running ? true : undefined,
      );
      const waits: number[] = [];
      while (running) {
        const started = Date.now();
        const res = await app.request(`/v1/users/${userId}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${t.secretKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `n${waits.length}` }),
        });
        expect(res.status).toBe(200);
        waits.push(Date.now() - started);
      }
      expect(await exited).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ dryRun: true, imported: 120_000 });
      expect(waits.length).toBeGreaterThan(3);
      expect(Math.max(...waits)).toBeLessThan(1_000);
      expect(await usersOf(t)).toHaveLength(1);
    },
    60_000,
  );

  it('many refused rows: each is reported on stderr, the summary keeps the first 1,000 and counts all', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(
      bad,
      `${Array.from({ length: 3_000 }, () => line({ email: 'not an address' })).join('\n')}\n`,
    );
    const t = await app.tenant();
    const json = await cli('import', '--tenant', t.tenant.id, '--from', 'latchkey', bad, '--json');
    expect(json.code).toBe(1);
    const summary = summaryOf(json);
    expect(summary).toMatchObject({ imported: 0, refusedCount: 3_000 });
    expect(summary.refused).toHaveLength(1_000);
    expect(summary.refused[999].line).toBe(1_000);
    const text = await cli('import', '--tenant', t.tenant.id, '--from', 'latchkey', bad);
    expect(text.stdout).toContain('imported 0, updated 0, unchanged 0, refused 3000');
    const lines = text.stderr.split('\n').filter((l) => l.startsWith('refused line '));
    expect(lines).toHaveLength(3_000);
    expect(lines[2_999]).toMatch(/^refused line 3000: /);
    expect(await usersOf(t)).toEqual([]);
  });

  it('names what is not built, and refuses bad arguments', async () => {
    const vendor = await cli('import', '--tenant', target.tenant.id, '--from', 'nope', file);
    expect(vendor).toMatchObject({ code: 2 });
    expect(vendor.stderr).toContain('--from must be one of latchkey');
    const missing = await cli(
      'import',
      '--tenant',
      target.tenant.id,
      '--from',
      'latchkey',
      join(dir, 'absent'),
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read');
  });

  it('the admin Users page exports the same lines, after the password again, with an audit entry', async () => {
    const admin = await signedInAdmin(app, email('admin'), { tenantIds: [source.tenant.id] });
    const path = `/admin/tenants/${source.tenant.id}/users`;
    expect((await admin.get(path)).html).toContain('Export users');
    await db()
      .updateTable('admin_sessions')
      .set({ authenticated_at: Date.now() - 11 * 60_000 })
      .execute();
    expect((await admin.get(path)).html).toContain('Your password');
    const without = await admin.post(`${path}/export`, {});
    expect(without.status).toBe(403);
    expect(without.html).toContain('Type your password again');
    const wrong = await admin.post(`${path}/export`, { reauth_password: 'wrong password' });
    expect(wrong.status).toBe(403);
    const audit = () =>
      db()
        .selectFrom('audit_events')
        .select(['kind', 'actor'])
        .where('tenant_id', '=', source.tenant.id)
        .where('kind', '=', 'users_exported')
        .execute();
    expect(await audit()).toEqual([]);
    const right = await admin.post(`${path}/export`, { reauth_password: ADMIN_PASSWORD });
    expect(right.status).toBe(200);
    expect(right.res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(right.res.headers.get('content-disposition')).toContain(
      'attachment; filename="latchkey-users-',
    );
    expect(right.html.trim().split('\n')).toEqual(lines);
    expect(await audit()).toHaveLength(1);
    // Another tenant's users are out of this admin's reach.
    const other = await admin.post(`/admin/tenants/${target.tenant.id}/users/export`, {});
    expect(other.status).toBe(404);
  });

  it('an imported identity links at the next social sign-in, by its subject', async () => {
    // Development mode stands in for Google: its subject comes from the typed address,
    // which here is not the user's, so only the subject can find them.
    await setProvider(db(), app.ctx.box, target.tenant.id, 'google', { mode: 'development' });
    const user = email('linked');
    const typed = email('at-google');
    const file = join(dir, 'social.jsonl');
    const identity = {
      provider: 'google',
      issuer: DEVELOPMENT_ISSUER,
      subject: developmentSubject('google', typed),
    };
    writeFileSync(file, `${line({ email: user, identities: [identity] })}\n`);
    const imported = await cli(
      'import',
      '--tenant',
      target.tenant.id,
      '--from',
      'latchkey',
      file,
      '--json',
    );
    expect(summaryOf(imported)).toMatchObject({ imported: 1, refused: [] });
    const jar = new Map<string, string>();
    const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const go = async (path: string, fields?: Record<string, string>) => {
      const res = await app.request(path, {
        method: fields ? 'POST' : 'GET',
        redirect: 'manual',
        headers: {
          cookie: cookie(),
          ...(fields
            ? {
                'content-type': 'application/x-www-form-urlencoded',
                origin: 'null',
                'sec-fetch-site': 'same-origin',
              }
            : {}),
        },
        body: fields ? new URLSearchParams(fields).toString() : undefined,
      });
      for (const c of res.headers.getSetCookie()) {
        const [pair = ''] = c.split(';');
        const at = pair.indexOf('=');
        jar.set(pair.slice(0, at), pair.slice(at + 1));
      }
      return res;
    };
    const q = new URLSearchParams({
      pk: target.publishableKey,
      redirect_url: `${ORIGIN}/callback`,
    });
    const start = await go(`/oauth/google/start?q=${encodeURIComponent(q.toString())}`);
    const location = new URL(start.headers.get('location') as string);
    const page = await (await go(location.pathname + location.search)).text();
    const res = await go('/oauth/google/development', {
      _csrf: /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '',
      state: /name="state" value="([^"]+)"/.exec(page)?.[1] ?? '',
      email: typed,
      name: '',
      emailVerified: 'on',
    });
    expect(res.status).toBe(303);
    const fragment = new URLSearchParams(
      new URL(res.headers.get('location') as string).hash.slice(1),
    );
    const claims = await json(
      await postJson(app, '/api/auth/introspect', target.secretKey, {
        token: fragment.get('access_token'),
      }),
    );
    const row = (await usersOf(target)).find((u) => u.email === user);
    expect(claims).toMatchObject({ active: true, sub: row?.id });
    expect((await usersOf(target)).some((u) => u.email === typed)).toBe(false);
  });
});
