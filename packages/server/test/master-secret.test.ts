/**
 * A lost or wrong master secret must not fail open: the real `latchkey` CLI and server, on a
 * database whose signing keys, provider secrets and authenticator-app secrets are sealed with another secret (or with
 * one whose file is gone), refuse to start, say what to do, and change nothing. Rotation
 * seals everything again under a new secret, in one transaction.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { SecretBox } from '../src/crypto/secret-box.js';
import { openMasterSecret } from '../src/modules/master-secret/index.js';
import { matchTotp, startTotp } from '../src/modules/mfa/index.js';
import { SigningKeys } from '../src/modules/sessions/index.js';
import { providerCredentials } from '../src/modules/social/index.js';
import { getTenant } from '../src/modules/tenants/index.js';
import { getUser } from '../src/modules/users/index.js';
import { signingSecrets } from '../src/modules/webhooks/endpoints.service.js';
import { openDatabase } from '../src/storage/index.js';
import { latchkey, MAIN, type Result } from './cli-run.js';
import { DIALECTS, freshDatabaseUrl, SECRET } from './support.js';

/** The CLI with exactly these variables (and PATH): none of the test run's stands in. */
const cli = (args: string[], env: Record<string, string>) => latchkey(args, env, { only: true });

const OTHER = 'another-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const THIRD = 'a-third-secret-0123456789abcdefghijklmnopqrstuvwxyz';

/** `latchkey serve`: 'started' once it listens (then stopped), or how it exited. */
async function serve(env: Record<string, string>): Promise<Result | 'started'> {
  const child = spawn(process.execPath, [MAIN, 'serve'], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', ...env },
    cwd: tmpdir(),
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  let started = false;
  return new Promise((resolve) => {
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (!started && stdout.includes('Latchkey is listening')) {
        started = true;
        child.kill('SIGTERM');
      }
    });
    child.once('exit', (code) =>
      resolve(started ? 'started' : { code: code ?? -1, stdout, stderr }),
    );
  });
}

/** The sealed columns as they are stored: nothing may change them but a rotation. */
async function sealed(url: string): Promise<string[]> {
  const database = openDatabase(url);
  try {
    const keys = await database.db
      .selectFrom('signing_keys')
      .select('private_jwe')
      .orderBy('id')
      .execute();
    const providers = await database.db
      .selectFrom('provider_settings')
      .select('secret_jwe')
      .orderBy('tenant_id')
      .execute();
    const apps = await database.db.selectFrom('totp_factors').select('secret_jwe').execute();
    const hooks = await database.db
      .selectFrom('webhook_endpoints')
      .select(['secret_jwe', 'previous_secret_jwe'])
      .execute();
    return [
      ...hooks.flatMap((h) => [h.secret_jwe, h.previous_secret_jwe ?? '']),
      ...keys.map((k) => k.private_jwe),
      ...providers.map((p) => String(p.secret_jwe)),
      ...apps.map((a) => a.secret_jwe),
    ];
  } finally {
    await database.close();
  }
}

function expectRefused(result: Result | 'started', ...names: string[]): void {
  expect(result).not.toBe('started');
  const { code, stderr } = result as Result;
  expect(code).toBe(1);
  expect(stderr).toMatch(/^configuration error: /m);
  for (const name of names) expect(stderr).toContain(name);
}

// Each test runs the real CLI and server several times over, on one database the tests
// share in order: on a busy machine a test may take longer than the default 30 s, and one
// cut short would leave its processes writing under the next test.
describe.each(DIALECTS)('the master secret on %s', { timeout: 120_000 }, (dialect) => {
  let url = '';
  let drop: () => Promise<void>;
  let tenantId = '';
  const userId = randomUUID();
  let appSecret = '';
  let endpointId = '';
  let hookSecrets: string[] = [];

  beforeAll(async () => {
    ({ url, drop } = await freshDatabaseUrl(dialect));
    const env = { DATABASE_URL: url, LATCHKEY_SECRET: SECRET };
    if (dialect === 'postgres') expect((await cli(['migrate'], env)).code).toBe(0);
    const created = await cli(['tenant', 'create', '--name', 'Sealed', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    tenantId = JSON.parse(created.stdout).tenant.id;
    const provider = await cli(
      ['provider', 'set', '--tenant', tenantId, 'github', '--client-id', 'gh-id'].concat([
        '--client-secret',
        'gh-secret-value',
      ]),
      env,
    );
    expect(provider.code, provider.stderr).toBe(0);
    // A webhook endpoint, rotated once: its secret and the one before it are sealed.
    const hook = await cli(
      ['webhook', 'create', '--tenant', tenantId, '--url', 'http://127.0.0.1:9/hooks', '--json'],
      env,
    );
    expect(hook.code, hook.stderr).toBe(0);
    endpointId = JSON.parse(hook.stdout).endpoint.id;
    const rotatedHook = await cli(
      ['webhook', 'rotate-secret', '--tenant', tenantId, '--id', endpointId, '--json'],
      env,
    );
    expect(rotatedHook.code, rotatedHook.stderr).toBe(0);
    hookSecrets = [JSON.parse(rotatedHook.stdout).secret, JSON.parse(hook.stdout).secret];
    // A user's authenticator app, whose secret is sealed too.
    const database = openDatabase(url);
    try {
      const config = loadConfig(env, { warn: () => {} });
      const box = await openMasterSecret(database.db, config, () => {});
      const tenant = await getTenant(database.db, tenantId);
      const now = Date.now();
      await database.db
        .insertInto('users')
        .values({
          id: userId,
          tenant_id: tenantId,
          email: 'app@example.com',
          email_key: 'app@example.com',
          password_hash: null,
          name: null,
          metadata: '{}',
          roles: '[]',
          email_verified_at: null,
          disabled_at: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      appSecret = (
        await startTotp(
          { db: database.db, box },
          tenant,
          await getUser(database.db, tenantId, userId),
        )
      ).secret;
    } finally {
      await database.close();
    }
  });
  afterAll(() => drop?.());

  it('another LATCHKEY_SECRET is refused by the server and every command; nothing changes', async () => {
    const before = await sealed(url);
    expect(before).toHaveLength(5);
    const env = { DATABASE_URL: url, LATCHKEY_SECRET: OTHER };
    expectRefused(await serve(env), 'LATCHKEY_SECRET', 'latchkey secret rotate');
    expectRefused(
      await cli(['signing-key', 'rotate', '--tenant', tenantId], env),
      'LATCHKEY_SECRET',
    );
    expectRefused(await cli(['tenant', 'create', '--name', 'B'], env), 'LATCHKEY_SECRET');
    expect(await sealed(url)).toEqual(before);
    expect(await serve({ DATABASE_URL: url, LATCHKEY_SECRET: SECRET })).toBe('started');
  });

  it('rotating a secret that lives only in the environment needs the new one given first', async () => {
    const before = await sealed(url);
    const env = { DATABASE_URL: url, LATCHKEY_SECRET: SECRET };
    const refused = await cli(['secret', 'rotate'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Set LATCHKEY_NEW_SECRET');
    const short = await cli(['secret', 'rotate'], { ...env, LATCHKEY_NEW_SECRET: 'short' });
    expect(short.stderr).toContain('LATCHKEY_NEW_SECRET must be at least 32 characters');
    const wrong = await cli(['secret', 'rotate'], {
      DATABASE_URL: url,
      LATCHKEY_SECRET: OTHER,
      LATCHKEY_NEW_SECRET: THIRD,
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('nothing was changed');
    expect(await sealed(url)).toEqual(before);
  });

  it('a database an older version sealed with two secrets: refused, then mended by a rotation', async () => {
    // What a start with another secret could leave before Latchkey refused it: a key
    // sealed with that secret beside the others, and no check value.
    const database = openDatabase(url);
    await database.db.deleteFrom('master_secret').execute();
    await new SigningKeys(database.db, new SecretBox(OTHER)).rotate(tenantId, 600, 0);
    await database.close();
    expectRefused(
      await serve({ DATABASE_URL: url, LATCHKEY_SECRET: SECRET }),
      'LATCHKEY_PREVIOUS_SECRET',
    );
    expectRefused(await serve({ DATABASE_URL: url, LATCHKEY_SECRET: OTHER }), 'signing keys');
    const alone = await cli(['secret', 'rotate'], {
      DATABASE_URL: url,
      LATCHKEY_SECRET: SECRET,
      LATCHKEY_NEW_SECRET: THIRD,
    });
    expect(alone.code).toBe(1);
    expect(alone.stderr).toContain('nothing was changed');
    const mended = await cli(['secret', 'rotate', '--json'], {
      DATABASE_URL: url,
      LATCHKEY_SECRET: SECRET,
      LATCHKEY_PREVIOUS_SECRET: OTHER,
      LATCHKEY_NEW_SECRET: THIRD,
    });
    expect(mended.code, mended.stderr).toBe(0);
    expect(JSON.parse(mended.stdout).resealed['signing keys']).toBe(2);
    expect(await serve({ DATABASE_URL: url, LATCHKEY_SECRET: THIRD })).toBe('started');
    // Back to the suite's secret.
    const back = await cli(['secret', 'rotate'], {
      DATABASE_URL: url,
      LATCHKEY_SECRET: THIRD,
      LATCHKEY_NEW_SECRET: SECRET,
    });
    expect(back.code, back.stderr).toBe(0);
  });

  it('a database from before the check: each sealed value must open, then the check is written', async () => {
    const database = openDatabase(url);
    await database.db.deleteFrom('master_secret').execute();
    await database.close();
    expectRefused(await serve({ DATABASE_URL: url, LATCHKEY_SECRET: OTHER }), 'signing keys');
    expect(await serve({ DATABASE_URL: url, LATCHKEY_SECRET: SECRET })).toBe('started');
    const again = openDatabase(url);
    expect(await again.db.selectFrom('master_secret').selectAll().execute()).toHaveLength(1);
    await again.close();
  });

  it('latchkey secret rotate seals everything again; then only the new secret opens it', async () => {
    const before = await sealed(url);
    const env = { DATABASE_URL: url, LATCHKEY_SECRET: SECRET };
    const rotated = await cli(['secret', 'rotate', '--json'], {
      ...env,
      LATCHKEY_NEW_SECRET: OTHER,
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    // Every value: the tenant's signing keys, its one provider secret and the user's app.
    expect(JSON.parse(rotated.stdout)).toEqual({
      resealed: {
        'signing keys': before.length - 4,
        'provider secrets': 1,
        'authenticator-app secrets': 1,
        'webhook secrets': 2,
      },
      file: null,
    });
    // Given by the operator, never printed.
    expect(rotated.stdout).not.toContain(OTHER);
    const after = await sealed(url);
    expect(after).toHaveLength(before.length);
    for (const [i, value] of after.entries()) expect(value).not.toBe(before[i]);
    expectRefused(await serve(env), 'LATCHKEY_SECRET');
    expect(await serve({ DATABASE_URL: url, LATCHKEY_SECRET: OTHER })).toBe('started');
    // The same key and the same provider secret, under the new secret.
    const config = loadConfig({ DATABASE_URL: url, LATCHKEY_SECRET: OTHER }, { warn: () => {} });
    const database = openDatabase(url);
    try {
      const box = await openMasterSecret(database.db, config, () => {});
      const github = await providerCredentials(database.db, box, tenantId, 'github', {
        disabledToo: true,
      });
      expect(github?.secret).toBe('gh-secret-value');
      // The webhook endpoint signs with the same two secrets.
      const hook = await database.db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('id', '=', endpointId)
        .executeTakeFirstOrThrow();
      expect(await signingSecrets(box, hook, Date.now())).toEqual(hookSecrets);
      // The app's codes still match: its secret opened under the new master secret.
      const code = generateSync({ secret: appSecret });
      expect(await matchTotp({ db: database.db, box }, tenantId, userId, code, undefined)).toBe(
        undefined,
      );
      const [app] = await database.db.selectFrom('totp_factors').select('id').execute();
      expect(
        await matchTotp({ db: database.db, box }, tenantId, userId, code, app?.id),
      ).toMatchObject({ factorId: app?.id });
    } finally {
      await database.close();
    }
    // And back, so that the suite's other tests keep their secret.
    const back = await cli(['secret', 'rotate'], {
      DATABASE_URL: url,
      LATCHKEY_SECRET: OTHER,
      LATCHKEY_NEW_SECRET: SECRET,
    });
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toContain(
      `Sealed again under the new master secret: ${before.length - 4} signing keys, 1 provider secrets, 1 authenticator-app secrets, 2 webhook secrets.`,
    );
    expect(back.stdout).toContain('Set LATCHKEY_SECRET to the new secret on every instance');
  });
});

describe('the generated secret file (no LATCHKEY_SECRET)', () => {
  let dir = '';
  let env: Record<string, string> = {};
  let file = '';

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'latchkey-secret-'));
    env = { DATABASE_URL: `sqlite:${join(dir, 'latchkey.db')}` };
    file = join(dir, 'latchkey-secret');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is made on first run, owner-only, and used after', async () => {
    const created = await cli(['tenant', 'create', '--name', 'Filed'], env);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain(`generated one into ${file}`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const listed = await cli(['tenant', 'list'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toContain(`using the secret stored in ${file}`);
  });

  it('once lost, stops the start, names LATCHKEY_SECRET and the file, and makes no new one', async () => {
    const kept = readFileSync(file, 'utf8');
    const before = await sealed(env.DATABASE_URL as string);
    rmSync(file);
    expectRefused(await serve(env), 'LATCHKEY_SECRET', file);
    expectRefused(await cli(['tenant', 'create', '--name', 'Again'], env), file);
    expect(existsSync(file)).toBe(false);
    expect(await sealed(env.DATABASE_URL as string)).toEqual(before);
    // Put back, it works again.
    writeFileSync(file, kept, { mode: 0o600 });
    expect(await serve(env)).toBe('started');
  });

  it('rotates in place: the file then holds the new secret, and the old one is refused', async () => {
    const old = readFileSync(file, 'utf8').trim();
    const rotated = await cli(['secret', 'rotate'], env);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toContain(`The new secret is in ${file}.`);
    expect(existsSync(`${file}.next`)).toBe(false);
    const now = readFileSync(file, 'utf8').trim();
    expect(now).not.toBe(old);
    expect(now.length).toBeGreaterThanOrEqual(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await serve(env)).toBe('started');
    expectRefused(await serve({ ...env, LATCHKEY_SECRET: old }), 'LATCHKEY_SECRET');
  });
});
