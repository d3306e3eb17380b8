/**
 * `latchkey app …` (docs/design.md §14): the OAuth clients of a tenant's OpenID Provider,
 * made with the real, built CLI on every database, and what it stored read back from it.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/storage/index.js';
import { latchkey, type Result } from './cli-run.js';
import { type Body, DIALECTS, freshDatabaseUrl, SECRET } from './support.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const APP_ID = /^app_[0-9A-Za-z]{24}$/;
const CLIENT_SECRET = /^[0-9A-Za-z]{43}$/;
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** The whole of stdout as one JSON value. */
function parsed(result: Result): Body {
  expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as Body;
}

describe.each(DIALECTS)('latchkey app on %s', (dialect) => {
  let fresh: { url: string; drop(): Promise<void> };
  let database: ReturnType<typeof openDatabase>;
  let env: Record<string, string>;
  const cli = (...args: string[]) => latchkey(args, env);
  let tenant: string;
  let production: string;
  const appRow = (id: string) =>
    database.db.selectFrom('apps').selectAll().where('id', '=', id).executeTakeFirst();

  beforeAll(async () => {
    fresh = await freshDatabaseUrl(dialect);
    env = { DATABASE_URL: fresh.url, LATCHKEY_SECRET: SECRET };
    if (dialect === 'postgres') expect((await cli('migrate')).code).toBe(0);
    tenant = parsed(await cli('tenant', 'create', '--name', 'Acme', '--json')).tenant.id;
    production = parsed(
      await cli('tenant', 'create', '--name', 'Live', '--env', 'production', '--json'),
    ).tenant.id;
    database = openDatabase(fresh.url, { poolSize: 2 });
  });
  afterAll(async () => {
    await database?.close();
    await fresh?.drop();
  });

  it('app create --type web prints the app and a secret once, and stores only its hash', async () => {
    const made = parsed(
      await cli(
        'app',
        'create',
        '--tenant',
        tenant,
        '--name',
        ' Dashboard ',
        '--type',
        'web',
        '--redirect-uri',
        'https://app.example.com/callback',
        '--redirect-uri',
        'http://localhost:3000/callback',
        '--post-logout-redirect-uri',
        'https://app.example.com/',
        '--json',
      ),
    );
    expect(Object.keys(made).sort()).toEqual(['app', 'clientSecret']);
    expect(made.clientSecret).toMatch(CLIENT_SECRET);
    expect(made.app).toEqual({
      id: expect.stringMatching(APP_ID),
      tenantId: tenant,
      name: 'Dashboard',
      type: 'web',
      redirectUris: ['https://app.example.com/callback', 'http://localhost:3000/callback'],
      postLogoutRedirectUris: ['https://app.example.com/'],
      confidential: true,
      firstParty: true,
      pkceOptional: false,
      previousSecretExpiresAt: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    const row = await appRow(made.app.id);
    expect(row?.secret_hash).toBe(sha256(made.clientSecret));
    expect(JSON.stringify(row)).not.toContain(made.clientSecret);

    // Shown once: show and list never print it.
    const shown = await cli('app', 'show', '--tenant', tenant, made.app.id, '--json');
    expect(parsed(shown)).toEqual(made.app);
    const text = await cli('app', 'show', '--tenant', tenant, made.app.id);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^type +web \(confidential\)$/m);
    expect(text.stdout).toMatch(/^redirect +https:\/\/app\.example\.com\/callback http:/m);
    const listed = await cli('app', 'list', '--tenant', tenant, '--json');
    for (const out of [shown, text, listed]) expect(out.stdout).not.toContain(made.clientSecret);
  });

  it('app create --type spa and native make public clients: no secret', async () => {
    const spa = parsed(
      await cli(
        'app',
        'create',
        '--tenant',
        tenant,
        '--name',
        'Web app',
        '--type',
        'spa',
        '--redirect-uri',
        'https://app.example.com/',
        '--json',
      ),
    );
    expect(spa).toMatchObject({ app: { type: 'spa', confidential: false }, clientSecret: null });
    // RFC 8252: loopback http and reverse-domain schemes, on a production tenant too.
    const native = parsed(
      await cli(
        'app',
        'create',
        '--tenant',
        production,
        '--name',
        'Desktop',
        '--type',
        'native',
        '--redirect-uri',
        'http://127.0.0.1/callback',
        '--redirect-uri',
        'com.example.desktop:/callback',
        '--json',
      ),
    );
    expect(native).toMatchObject({
      app: {
        type: 'native',
        confidential: false,
        redirectUris: ['http://127.0.0.1/callback', 'com.example.desktop:/callback'],
      },
      clientSecret: null,
    });
    expect((await appRow(spa.app.id))?.secret_hash).toBeNull();
    const text = await cli(
      'app',
      'create',
      '--tenant',
      tenant,
      '--name',
      'Other',
      '--type',
      'spa',
      '--redirect-uri',
      'https://other.example.com/',
    );
    expect(text.code).toBe(0);
    expect(text.stdout).not.toMatch(/secret/);
  });

  it('app create --type m2m has a secret and no redirect URI', async () => {
    const made = parsed(
      await cli('app', 'create', '--tenant', tenant, '--name', 'Worker', '--type', 'm2m', '--json'),
    );
    expect(made).toMatchObject({
      app: { type: 'm2m', confidential: true, redirectUris: [] },
      clientSecret: expect.stringMatching(CLIENT_SECRET),
    });
    const text = await cli('app', 'create', '--tenant', tenant, '--name', 'W2', '--type', 'm2m');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^secret +[0-9A-Za-z]{43} {3}\(shown only now; store it safely\)$/m,
    );
  });

  it.concurrent.for([
    {
      what: 'a web app without a redirect URI',
      args: ['--type', 'web'],
      error: /a web app needs at least one redirect URI \(redirect_uris_invalid\)/,
    },
    {
      what: 'an m2m app with a redirect URI',
      args: ['--type', 'm2m', '--redirect-uri', 'https://a.example.com/'],
      error: /an m2m app signs no one in: it has no redirect URIs/,
    },
    {
      what: 'a fragment, a relative URI and user info',
      args: [
        '--type',
        'web',
        '--redirect-uri',
        'https://a.example.com/cb#x',
        '--redirect-uri',
        '/callback',
        '--redirect-uri',
        'https://user:pw@a.example.com/cb',
      ],
      error:
        /\/redirectUris\/0: .*must not contain a fragment[\s\S]*\/redirectUris\/1: \/callback is not an absolute URI[\s\S]*\/redirectUris\/2: .*must not contain user info/,
    },
    {
      what: 'http to another host, and a plain custom scheme, for a native app',
      args: [
        '--type',
        'native',
        '--redirect-uri',
        'http://example.com/cb',
        '--redirect-uri',
        'myapp:/cb',
      ],
      error:
        /http is allowed only on a loopback address[\s\S]*a private-use scheme must be in reverse-domain form/,
    },
    {
      what: 'an http post-logout URI off localhost',
      args: [
        '--type',
        'spa',
        '--redirect-uri',
        'https://a.example.com/',
        '--post-logout-redirect-uri',
        'http://a.example.com/',
      ],
      error:
        /\/postLogoutRedirectUris\/0: http:\/\/a\.example\.com\/ http is allowed only for localhost/,
    },
  ])('app create refuses $what, and makes no app', async ({ args, error }, { expect }) => {
    const result = await cli('app', 'create', '--tenant', tenant, '--name', 'Bad', ...args);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(error);
    const names = await database.db
      .selectFrom('apps')
      .select('name')
      .where('name', '=', 'Bad')
      .execute();
    expect(names).toEqual([]);
  });

  it('app create refuses http://localhost on a production tenant for a web app', async () => {
    const result = await cli(
      ...['app', 'create', '--tenant', production, '--name', 'Bad', '--type', 'web'],
      ...['--redirect-uri', 'http://localhost:3000/cb'],
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('http is allowed only on development tenants');
  });

  it('app create without --type, or with another type, is a usage error (exit 2)', async () => {
    for (const args of [
      ['--name', 'X'],
      ['--name', 'X', '--type', 'desktop'],
      ['--type', 'spa', '--redirect-uri', 'https://a.example.com/'],
    ]) {
      const result = await cli('app', 'create', '--tenant', tenant, ...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/^error: (--type|--name) /);
    }
  });

  it('app create --pkce-optional: a web app may leave PKCE out; any other type is a usage error', async () => {
    const made = parsed(
      await cli(
        'app',
        'create',
        '--tenant',
        tenant,
        '--name',
        'Legacy',
        '--type',
        'web',
        '--redirect-uri',
        'https://legacy.example.com/cb',
        '--pkce-optional',
        '--json',
      ),
    );
    expect(made.app.pkceOptional).toBe(true);
    expect((await appRow(made.app.id))?.pkce_optional).toBe(1);
    const shown = await cli('app', 'show', '--tenant', tenant, made.app.id);
    expect(shown.stdout).toMatch(/^pkce\s+optional$/m);
    const spa = await cli(
      'app',
      'create',
      '--tenant',
      tenant,
      '--name',
      'S',
      '--type',
      'spa',
      '--redirect-uri',
      'https://s.example.com/cb',
      '--pkce-optional',
    );
    expect(spa.code).toBe(2);
    expect(spa.stderr).toMatch(/--pkce-optional is for web apps/);
  });

  it('tenant update --dynamic-registration on|off turns RFC 7591 registration on and off', async () => {
    expect((await cli('tenant', 'show', tenant)).stdout).toMatch(/^registration off$/m);
    const on = await cli('tenant', 'update', tenant, '--dynamic-registration', 'on', '--json');
    expect(on.code).toBe(0);
    expect(parsed(on).dynamicRegistration ?? parsed(on).tenant?.dynamicRegistration).toBe(true);
    expect((await cli('tenant', 'show', tenant)).stdout).toMatch(/^registration on \(RFC 7591\)$/m);
    const odd = await cli('tenant', 'update', tenant, '--dynamic-registration', 'maybe');
    expect(odd.code).toBe(2);
    await cli('tenant', 'update', tenant, '--dynamic-registration', 'off');
    expect((await cli('tenant', 'show', tenant)).stdout).toMatch(/^registration off$/m);
  });

  it('app list and show see only the apps of their tenant', async () => {
    const other = parsed(await cli('tenant', 'create', '--name', 'Other', '--json')).tenant.id;
    const made = parsed(
      await cli('app', 'create', '--tenant', other, '--name', 'Theirs', '--type', 'm2m', '--json'),
    );
    const theirs = parsed(await cli('app', 'list', '--tenant', other, '--json')) as Body[];
    expect(theirs.map((a) => a.id)).toEqual([made.app.id]);
    const ours = parsed(await cli('app', 'list', '--tenant', tenant, '--json')) as Body[];
    expect(ours.length).toBeGreaterThan(1);
    expect(ours.every((a) => a.tenantId === tenant)).toBe(true);

    const elsewhere = await cli('app', 'show', '--tenant', tenant, made.app.id);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toBe(`error: No app ${made.app.id} on tenant ${tenant}\n`);
    const bogus = await cli('app', 'show', '--tenant', tenant, 'nope');
    expect(bogus.code).toBe(1);
    expect(bogus.stderr).toMatch(/^error: No app nope /);
    const text = await cli('app', 'list', '--tenant', other);
    expect(text.stdout).toBe(`${made.app.id}  m2m     Theirs\n`);
  });

  it('app rotate-secret gives a new secret; the old one is kept (hashed) for the grace period', async () => {
    const made = parsed(
      await cli('app', 'create', '--tenant', tenant, '--name', 'Rotor', '--type', 'm2m', '--json'),
    );
    const id = made.app.id;
    const before = Date.now();
    const rotated = parsed(
      await cli('app', 'rotate-secret', '--tenant', tenant, id, '--grace', '1h', '--json'),
    );
    expect(rotated.clientSecret).toMatch(CLIENT_SECRET);
    expect(rotated.clientSecret).not.toBe(made.clientSecret);
    const until = Date.parse(rotated.app.previousSecretExpiresAt);
    expect(until).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 3_600_000);
    let row = await appRow(id);
    expect(row).toMatchObject({
      secret_hash: sha256(rotated.clientSecret),
      previous_secret_hash: sha256(made.clientSecret),
      previous_secret_expires_at: until,
    });
    expect(parsed(await cli('app', 'show', '--tenant', tenant, id, '--json'))).toEqual(rotated.app);

    // The default grace is a day; --grace 0 lets the old secret go at once.
    const daily = parsed(await cli('app', 'rotate-secret', '--tenant', tenant, id, '--json'));
    expect(Date.parse(daily.app.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(
      86_400_000 - 60_000,
    );
    const text = await cli('app', 'rotate-secret', '--tenant', tenant, id, '--grace', '0');
    expect(text.code).toBe(0);
    expect(text.stdout).not.toContain('old secret');
    const secret = /^secret +([0-9A-Za-z]{43}) /m.exec(text.stdout)?.[1] ?? '';
    row = await appRow(id);
    expect(row).toMatchObject({
      secret_hash: sha256(secret),
      previous_secret_hash: null,
      previous_secret_expires_at: null,
    });
  });

  it('app rotate-secret refuses a public client, a grace over 30 days and a bad duration', async () => {
    const spa = parsed(
      await cli(
        ...['app', 'create', '--tenant', tenant, '--name', 'Pub', '--type', 'spa'],
        ...['--redirect-uri', 'https://a.example.com/', '--json'],
      ),
    );
    const pub = await cli('app', 'rotate-secret', '--tenant', tenant, spa.app.id);
    expect(pub.code).toBe(1);
    expect(pub.stderr).toContain('a public client has no secret to rotate');
    expect((await appRow(spa.app.id))?.secret_hash).toBeNull();

    const m2m = parsed(
      await cli('app', 'create', '--tenant', tenant, '--name', 'G', '--type', 'm2m', '--json'),
    );
    const long = await cli(
      'app',
      'rotate-secret',
      '--tenant',
      tenant,
      m2m.app.id,
      '--grace',
      '31d',
    );
    expect(long.code).toBe(1);
    expect(long.stderr).toContain('the grace period must be between 0 and 30 days');
    const odd = await cli('app', 'rotate-secret', '--tenant', tenant, m2m.app.id, '--grace', '1w');
    expect(odd.code).toBe(2);
    expect(odd.stderr).toMatch(/^error: --grace must be a duration such as 30m, 24h or 7d/);
    expect((await appRow(m2m.app.id))?.secret_hash).toBe(sha256(m2m.clientSecret));
  });

  it('app update renames an app and replaces its redirect URIs; its id, type and secret stay', async () => {
    const made = parsed(
      await cli(
        ...['app', 'create', '--tenant', tenant, '--name', 'Old name', '--type', 'web'],
        ...['--redirect-uri', 'https://old.example.com/cb'],
        ...['--post-logout-redirect-uri', 'https://old.example.com/', '--json'],
      ),
    );
    const id = made.app.id;
    const renamed = parsed(
      await cli('app', 'update', id, '--tenant', tenant, '--name', ' New name ', '--json'),
    );
    expect(renamed).toMatchObject({
      id,
      name: 'New name',
      type: 'web',
      redirectUris: ['https://old.example.com/cb'],
      postLogoutRedirectUris: ['https://old.example.com/'],
    });
    const replaced = parsed(
      await cli(
        ...['app', 'update', id, '--tenant', tenant],
        ...['--redirect-uri', 'https://new.example.com/cb'],
        ...['--redirect-uri', 'http://localhost:3000/cb'],
        ...['--post-logout-redirect-uri', '', '--json'],
      ),
    );
    expect(replaced).toMatchObject({
      id,
      name: 'New name',
      redirectUris: ['https://new.example.com/cb', 'http://localhost:3000/cb'],
      postLogoutRedirectUris: [],
    });
    expect(Date.parse(replaced.updatedAt)).toBeGreaterThanOrEqual(Date.parse(made.app.updatedAt));
    expect(parsed(await cli('app', 'show', '--tenant', tenant, id, '--json'))).toEqual(replaced);
    expect((await appRow(id))?.secret_hash).toBe(sha256(made.clientSecret));
    const text = await cli('app', 'update', id, '--tenant', tenant, '--name', 'Text');
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toMatch(/^name +Text$/m);
    expect(text.stdout).not.toMatch(/secret/);
  });

  it('app update refuses every failing field at once and stores nothing; flags it cannot use are usage errors', async () => {
    const made = parsed(
      await cli(
        ...['app', 'create', '--tenant', production, '--name', 'Live', '--type', 'spa'],
        ...['--redirect-uri', 'https://live.example.com/', '--json'],
      ),
    );
    const id = made.app.id;
    const before = await appRow(id);
    const refused = await cli(
      ...['app', 'update', id, '--tenant', production, '--name', ''],
      ...[
        '--redirect-uri',
        'http://localhost:3000/cb',
        '--redirect-uri',
        'https://x.example.com/#f',
      ],
      ...['--post-logout-redirect-uri', 'not a uri'],
    );
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/\/name: an app needs a name/);
    expect(refused.stderr).toMatch(
      /\/redirectUris\/0: http:\/\/localhost:3000\/cb http is allowed only on development tenants/,
    );
    expect(refused.stderr).toMatch(/\/redirectUris\/1: .*must not contain a fragment/);
    expect(refused.stderr).toMatch(/\/postLogoutRedirectUris\/0: not a uri is not an absolute URI/);
    const long = await cli('app', 'update', id, '--tenant', production, '--name', 'n'.repeat(101));
    expect(long.code).toBe(1);
    expect(long.stderr).toContain('name must be 1 to 100 characters');
    const many = await cli(
      ...['app', 'update', id, '--tenant', production],
      ...Array.from({ length: 21 }, (_, i) => [
        '--redirect-uri',
        `https://a.example.com/${i}`,
      ]).flat(),
    );
    expect(many.code).toBe(1);
    expect(many.stderr).toContain('an app may have at most 20 redirect URIs');
    expect(await appRow(id)).toEqual(before);

    for (const args of [[], ['--type', 'web', '--name', 'X']]) {
      const usage = await cli('app', 'update', id, '--tenant', production, ...args);
      expect(usage.code, args.join(' ')).toBe(2);
      expect(usage.stderr).toMatch(/^error: (nothing to update|an app's type cannot change)/);
    }
    const missing = await cli('app', 'update', '--tenant', production, '--name', 'X');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('error: APP_ID is required\n');
    const elsewhere = await cli('app', 'update', id, '--tenant', tenant, '--name', 'X');
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toBe(`error: No app ${id} on tenant ${tenant}\n`);
    expect(await appRow(id)).toEqual(before);
  });

  it("app delete removes the app and what the provider stored for it, not another app's", async () => {
    const [gone, kept] = await Promise.all(
      ['Gone', 'Kept'].map(async (name) =>
        parsed(
          await cli('app', 'create', '--tenant', tenant, '--name', name, '--type', 'm2m', '--json'),
        ),
      ),
    );
    const artifact = (clientId: string, id: string) => ({
      tenant_id: tenant,
      model: 'Grant',
      id,
      payload: '{}',
      grant_id: id,
      uid: null,
      client_id: clientId,
      session_id: null,
      expires_at: null,
      consumed_at: null,
      created_at: Date.now(),
    });
    await database.db
      .insertInto('oauth_artifacts')
      .values([artifact(gone?.app.id, 'grant-1'), artifact(kept?.app.id, 'grant-2')])
      .execute();

    const deleted = await cli('app', 'delete', '--tenant', tenant, gone?.app.id);
    expect(deleted).toMatchObject({ code: 0, stderr: '' });
    expect(deleted.stdout).toBe(`deleted ${gone?.app.id} (Gone)\n`);
    expect(await appRow(gone?.app.id)).toBeUndefined();
    const left = await database.db
      .selectFrom('oauth_artifacts')
      .select('id')
      .where('tenant_id', '=', tenant)
      .execute();
    expect(left).toEqual([{ id: 'grant-2' }]);

    const again = await cli('app', 'delete', '--tenant', tenant, gone?.app.id);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: No app /);
    expect(await appRow(kept?.app.id)).toBeDefined();
  });
});
