/**
 * What the vendor import tests share: fixtures are made here with independent libraries
 * (bcryptjs, hash-wasm, node:crypto), never with the code under test; the import runs the
 * real parser and engine into a real tenant, and sign-ins go through REST.
 */
import { createCipheriv, pbkdf2Sync, randomBytes, scryptSync } from 'node:crypto';
import { Readable } from 'node:stream';
import bcryptjs from 'bcryptjs';
import { argon2id } from 'hash-wasm';
import {
  type ImportSource,
  type ImportSummary,
  importUsers,
  PARSERS,
  type ParserOptions,
} from '../src/modules/migration/index.js';
import { json, postJson, type TestApp, type TestTenant } from './support.js';

/** bcrypt at cost 10 as Auth0, Clerk and Supabase keep it; `$2a$` is Go's (Supabase). */
export function bcrypt(password: string, prefix: '$2a$' | '$2b$' = '$2b$'): string {
  return bcryptjs.hashSync(password, 10).replace(/^\$2[aby]\$/, prefix);
}

/** argon2id as a PHC string (hash-wasm, the reference C code in WebAssembly). */
export function argon2(password: string): Promise<string> {
  return argon2id({
    password,
    salt: randomBytes(16),
    parallelism: 1,
    iterations: 2,
    memorySize: 19_456,
    hashLength: 32,
    outputType: 'encoded',
  });
}

/** Django's `pbkdf2_sha256$<iterations>$<salt>$<base64 key>`, the salt used as its text. */
export function djangoPbkdf2(password: string, iterations = 100_000): string {
  const salt = randomBytes(9).toString('hex');
  const key = pbkdf2Sync(password, salt, iterations, 32, 'sha256').toString('base64');
  return `pbkdf2_sha256$${iterations}$${salt}$${key}`;
}

/**
 * Firebase's project parameters: the sample its scrypt repository documents
 * (github.com/firebase/scrypt, README), with a user hashed under them.
 */
export const FIREBASE_SAMPLE = {
  hashKey:
    'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==',
  saltSeparator: 'Bw==',
  rounds: 8,
  memCost: 14,
  user: {
    password: 'user1password',
    salt: '42xEC+ixf3L2lw==',
    hash: 'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
  },
};

/**
 * Firebase's modified scrypt, from its description (github.com/firebase/scrypt): a key
 * from scrypt(password, salt || separator, N = 2^memCost, r = rounds, p = 1, 32 bytes)
 * encrypts the project's signer key with AES-256-CTR under a zero IV. Base64 in and out.
 */
export function firebaseScrypt(
  password: string,
  salt: string,
  p: { hashKey: string; saltSeparator: string; rounds: number; memCost: number } = FIREBASE_SAMPLE,
): string {
  const key = scryptSync(
    password,
    Buffer.concat([Buffer.from(salt, 'base64'), Buffer.from(p.saltSeparator, 'base64')]),
    32,
    { N: 2 ** p.memCost, r: p.rounds, p: 1, maxmem: 64 * 1024 * 1024 },
  );
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  return Buffer.concat([cipher.update(Buffer.from(p.hashKey, 'base64')), cipher.final()]).toString(
    'base64',
  );
}

/** The file as the source wrote it, in small pieces (a parser must not rely on whole lines). */
export function fileStream(contents: string): Readable {
  const bytes = Buffer.from(contents);
  const pieces: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 97) pieces.push(bytes.subarray(i, i + 97));
  return Readable.from(pieces);
}

/** `latchkey import --from SOURCE` into the tenant, through the real parser and engine. */
export async function runImport(
  app: TestApp,
  tenant: TestTenant,
  source: ImportSource,
  contents: string,
  options: ParserOptions = {},
): Promise<ImportSummary> {
  const parser = PARSERS[source];
  if (!parser) throw new Error(`no parser for ${source}`);
  return importUsers(
    // As the CLI passes them: PostgreSQL's column arrays, SQLite's prepared insert.
    { db: app.ctx.database.db, dialect: app.ctx.database.dialect, sqlite: app.ctx.database.sqlite },
    tenant.tenant,
    parser(fileStream(contents), options),
  );
}

/** REST sign-in with the tenant's secret key: the status and the answer. */
export async function signIn(app: TestApp, tenant: TestTenant, email: string, password: string) {
  const res = await postJson(app, '/v1/auth/sign-in', tenant.secretKey, { email, password });
  return { status: res.status, body: await json(res) };
}

/** The stored user row of an address in the tenant. */
export function storedUser(app: TestApp, tenant: TestTenant, email: string) {
  return app.ctx.database.db
    .selectFrom('users')
    .selectAll()
    .where('tenant_id', '=', tenant.tenant.id)
    .where('email', '=', email)
    .executeTakeFirst();
}

/** Every user and identity of the tenant (to show a refused row left nothing behind). */
export async function tenantCounts(app: TestApp, tenant: TestTenant) {
  const db = app.ctx.database.db;
  const users = await db
    .selectFrom('users')
    .select(db.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenant.tenant.id)
    .executeTakeFirstOrThrow();
  const identities = await db
    .selectFrom('identities')
    .select(db.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenant.tenant.id)
    .executeTakeFirstOrThrow();
  return { users: Number(users.n), identities: Number(identities.n) };
}

/** The identities stored for a user, as provider:subject. */
export async function identitiesOf(app: TestApp, tenant: TestTenant, email: string) {
  const user = await storedUser(app, tenant, email);
  if (!user) return [];
  const rows = await app.ctx.database.db
    .selectFrom('identities')
    .select(['provider', 'subject'])
    .where('tenant_id', '=', tenant.tenant.id)
    .where('user_id', '=', user.id)
    .execute();
  return rows.map((r) => `${r.provider}:${r.subject}`).sort();
}

/**
 * A browser's social sign-in through a plain OAuth provider on loopback (GitHub, Facebook):
 * start, the provider's redirect back, the callback; the access token Latchkey hands over.
 */
export async function socialSignIn(
  app: TestApp,
  tenant: TestTenant,
  provider: 'github' | 'facebook',
  origin: string,
): Promise<string> {
  const jar = new Map<string, string>();
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(';')[0] as string;
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
  };
  const query = new URLSearchParams({
    pk: tenant.publishableKey,
    redirect_url: `${origin}/callback`,
    state: 'st',
  }).toString();
  const start = await app.request(`/oauth/${provider}/start?q=${encodeURIComponent(query)}`, {
    redirect: 'manual',
  });
  keep(start);
  if (start.status !== 303) throw new Error(`start answered ${start.status}`);
  const atProvider = await fetch(start.headers.get('location') as string, { redirect: 'manual' });
  const callback = await fetch(atProvider.headers.get('location') as string, {
    redirect: 'manual',
    headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
  });
  if (callback.status !== 303)
    throw new Error(`callback answered ${callback.status}: ${await callback.text()}`);
  const fragment = new URLSearchParams(
    new URL(callback.headers.get('location') as string).hash.slice(1),
  );
  return fragment.get('access_token') as string;
}

/** The line of the input where `needle` first appears (1-based). */
export const lineOf = (contents: string, needle: string): number =>
  contents.slice(0, contents.indexOf(needle)).split('\n').length;
