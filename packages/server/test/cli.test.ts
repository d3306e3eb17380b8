/**
 * The real, built `latchkey` CLI as a child process (`npm test` builds dist/ first), on every
 * database, and a key it makes used against a real server on the same database.
 */
import { spawn } from 'node:child_process';
import { networkInterfaces, tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/cli/help.js';
import { latchkey, listeningUrl, MAIN, type Result, startServe } from './cli-run.js';
import {
  type Body,
  DIALECTS,
  freshDatabaseUrl,
  json,
  postJson,
  SECRET,
  startApp,
  type TestApp,
} from './support.js';

/** The whole of stdout as one JSON value (JSON.parse refuses anything after it). */
function parsed(result: Result): Body {
  expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as Body;
}

const ALL_SCOPES = ['users:read', 'users:write', 'sessions:write', 'tokens:introspect'];
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('latchkey CLI without a database', () => {
  const env = { LATCHKEY_SECRET: SECRET };

  it.concurrent('prints the usage and exits 2 when given no command', async ({ expect }) => {
    const result = await latchkey([], env);
    expect(result.code).toBe(2);
    expect(result.stdout + result.stderr).toContain('usage:');
    expect(result.stdout + result.stderr).toContain('latchkey tenant create --name NAME');
  });

  it.concurrent('prints the usage and exits 0 for help', async ({ expect }) => {
    const result = await latchkey(['help'], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('usage:');
    expect(result.stdout).toContain('latchkey keys revoke --tenant ID KEY_ID');
  });

  it.concurrent('exits 1 with a configuration error for a mysql:// DATABASE_URL', async ({
    expect,
  }) => {
    const result = await latchkey(['tenant', 'list'], { ...env, DATABASE_URL: 'mysql://x' });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^configuration error: DATABASE_URL must start with sqlite:/);
  });
});

describe.each(DIALECTS)('latchkey CLI on %s', (dialect) => {
  let fresh: { url: string; drop(): Promise<void> };
  let env: Record<string, string>;
  const cli = (...args: string[]) => latchkey(args, env);

  /** The output of `tenant create --name Acme --json`. */
  let acme: Body;
  /** The other tenants created, by test. */
  const created: Record<string, Body> = {};
  /** Every secret key plaintext made for Acme. */
  const secrets: string[] = [];

  beforeAll(async () => {
    fresh = await freshDatabaseUrl(dialect);
    env = { DATABASE_URL: fresh.url, LATCHKEY_SECRET: SECRET };
  });
  afterAll(() => fresh?.drop());

  if (dialect === 'postgres') {
    it('migrate applies 001-foundation, then finds the database up to date', async () => {
      const first = await cli('migrate');
      expect(first).toMatchObject({ code: 0, stderr: '' });
      // `applied: 001-foundation`, and any migrations added after it.
      expect(first.stdout.trim()).toMatch(/^applied: 001-foundation(, [\w-]+)*$/);
      const second = await cli('migrate');
      expect(second).toMatchObject({ code: 0, stderr: '' });
      expect(second.stdout.trim()).toBe('the database is up to date');
    });
  }

  it('migrate ignores the server settings it does not use (PORT, PUBLIC_URL)', async () => {
    const result = await latchkey(['migrate'], { ...env, PORT: 'null', PUBLIC_URL: 'nope' });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.trim()).toMatch(/^(applied: [\w, -]+|the database is up to date)$/);
    const serve = await latchkey(['tenant', 'list'], { ...env, PORT: 'null' });
    expect(serve.code).toBe(1);
    expect(serve.stderr).toMatch(/PORT must be an integer/);
  });

  it('tenant create --json prints one JSON object: the tenant and both keys', async () => {
    acme = parsed(await cli('tenant', 'create', '--name', 'Acme', '--json'));
    expect(Object.keys(acme).sort()).toEqual(['publishableKey', 'secretKey', 'tenant']);
    expect(acme.tenant).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Acme',
      plan: 'free',
      environment: 'development',
      limits: { rps: 10, rpm: 600 },
      allowedOrigins: [],
      requireEmailVerification: false,
      mfaPolicy: 'optional',
      passkeysEnabled: true,
      createdAt: expect.stringMatching(ISO),
    });
    expect(acme.secretKey).toMatch(/^sk_test_[0-9A-Za-z]{43}$/);
    expect(acme.publishableKey).toMatch(/^pk_test_[0-9A-Za-z]{43}$/);
    secrets.push(acme.secretKey);
  });

  it('tenant create makes the signing key at once; tenant update --audience sets aud', async () => {
    created.audience = parsed(await cli('tenant', 'create', '--name', 'Api Co', '--json'));
    const { tenant } = created.audience;
    // A verifier that loads the JWKS at start-up must find a key before any token exists.
    const keys = parsed(await cli('signing-key', 'list', '--tenant', tenant.id, '--json'));
    expect(keys).toHaveLength(1);
    const shown = await cli('tenant', 'show', tenant.id);
    expect(shown.stdout).toContain(
      `audience     http://localhost:8787/t/${tenant.id}/api (default)\n`,
    );
    const api = 'https://api.acme.example';
    expect(
      parsed(await cli('tenant', 'update', tenant.id, '--audience', api, '--json')).audience,
    ).toBe(api);
    expect((await cli('tenant', 'show', tenant.id)).stdout).toContain(`audience     ${api}\n`);
    const bad = await cli('tenant', 'update', tenant.id, '--audience', 'two words');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('audience_invalid');
    expect(
      parsed(await cli('tenant', 'update', tenant.id, '--audience', '', '--json')).audience,
    ).toBeNull();
  });

  if (dialect === 'sqlite') {
    it('migrated SQLite in place on first use, so migrate finds nothing to do', async () => {
      const result = await cli('migrate');
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout.trim()).toBe('the database is up to date');
    });
  }

  describe('tenant create', () => {
    it.concurrent('--env production gives sk_prod_ and pk_live_ keys', async ({ expect }) => {
      const out = parsed(
        await cli('tenant', 'create', '--name', 'Acme Prod', '--env', 'production', '--json'),
      );
      created.production = out;
      expect(out.tenant.environment).toBe('production');
      expect(out.secretKey).toMatch(/^sk_prod_[0-9A-Za-z]{43}$/);
      expect(out.publishableKey).toMatch(/^pk_live_[0-9A-Za-z]{43}$/);
    });

    // The largest: a minute may hold sixty of the largest seconds.
    it.concurrent.for([
      [50, 900, 'enterprise', 'Big Co'],
      [1_000_000, 60_000_000, 'huge', 'Huge Co'],
    ] as const)(
      '--plan enterprise --rps %i --rpm %i sets the limits',
      async ([rps, rpm, key, name], { expect }) => {
        const out = parsed(
          await cli(
            'tenant',
            'create',
            '--name',
            name,
            '--plan',
            'enterprise',
            '--rps',
            String(rps),
            '--rpm',
            String(rpm),
            '--json',
          ),
        );
        created[key] = out;
        expect(out.tenant).toMatchObject({ plan: 'enterprise', limits: { rps, rpm } });
      },
    );

    it.concurrent('--plan pro gives 100/6000, and repeated --origin are stored', async ({
      expect,
    }) => {
      const out = parsed(
        await cli(
          'tenant',
          'create',
          '--name',
          'Pro Co',
          '--plan',
          'pro',
          '--origin',
          'https://app.example.com',
          '--origin',
          'http://localhost:3000',
          '--json',
        ),
      );
      created.pro = out;
      expect(out.tenant).toMatchObject({
        plan: 'pro',
        limits: { rps: 100, rpm: 6000 },
        allowedOrigins: ['https://app.example.com', 'http://localhost:3000'],
      });
    });

    it.concurrent('--mfa required --passkeys off set the second-factor policy', async ({
      expect,
    }) => {
      const out = parsed(
        await cli(
          'tenant',
          'create',
          '--name',
          'Strict Co',
          '--mfa',
          'required',
          '--passkeys',
          'off',
          '--json',
        ),
      );
      created.strict = out;
      expect(out.tenant).toMatchObject({ mfaPolicy: 'required', passkeysEnabled: false });
    });

    it.concurrent.for([
      [
        'an unknown --mfa policy',
        ['--name', 'Bad', '--mfa', 'sometimes'],
        1,
        /mfa must be one of off, optional, required \(mfa_policy_invalid\)/,
      ],
      [
        'a --passkeys other than on or off',
        ['--name', 'Bad', '--passkeys', 'maybe'],
        2,
        /^error: --passkeys must be on or off$/m,
      ],
      [
        'an unknown plan',
        ['--name', 'Bad', '--plan', 'gold'],
        1,
        /plan must be one of .*plan_invalid/s,
      ],
      [
        'http for a host other than localhost',
        ['--name', 'Bad', '--origin', 'http://evil.example'],
        1,
        /http:\/\/evil\.example http is allowed only for localhost and 127\.0\.0\.1 \(origin_invalid\)/,
      ],
      [
        'http on a production tenant',
        ['--name', 'Bad', '--origin', 'http://localhost:3000', '--env', 'production'],
        1,
        /http is allowed only on development tenants \(origin_invalid\)/,
      ],
      [
        'an --rps above one million',
        ['--name', 'Bad', '--plan', 'enterprise', '--rps', '1000001', '--rpm', '60000000'],
        1,
        /rps must be an integer from 1 to 1000000 \(rps_invalid\)/,
      ],
      [
        'an --rpm above sixty million',
        ['--name', 'Bad', '--plan', 'enterprise', '--rps', '1000000', '--rpm', '60000001'],
        1,
        /rpm must be an integer from 1 to 60000000 \(rpm_invalid\)/,
      ],
      [
        'an origin without its scheme, naming the one to use',
        ['--name', 'Bad', '--origin', 'localhost:5173'],
        1,
        /^error: localhost:5173 has no scheme: use http:\/\/localhost:5173$/m,
      ],
      [
        'a javascript: origin, saying which schemes are accepted',
        ['--name', 'Bad', '--origin', 'javascript:alert(1)'],
        1,
        /javascript:alert\(1\) must be an http\(s\) URL: https, or http:\/\/localhost on development tenants/,
      ],
      ['a missing --name', ['--plan', 'pro'], 2, /^error: --name is required$/m],
      ['an unknown flag', ['--name', 'Bad', '--bogus'], 2, /^error: Unknown option '--bogus'/m],
    ] as const)('refuses %s', async ([_name, args, code, message], { expect }) => {
      const result = await cli('tenant', 'create', ...args, '--json');
      expect(result.code).toBe(code);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(message);
    });
  });

  it('tenant list --json and tenant show ID --json show exactly the tenants created', async () => {
    const [list, shown] = await Promise.all([
      cli('tenant', 'list', '--json'),
      cli('tenant', 'show', acme.tenant.id, '--json'),
    ]);
    const tenants = parsed(list) as Body[];
    expect(Array.isArray(tenants)).toBe(true);
    // None of the refused creations left a tenant behind.
    expect(tenants.map((t) => t.id).sort()).toEqual(
      [acme, ...Object.values(created)].map((c) => c.tenant.id).sort(),
    );
    expect(tenants.map((t) => t.name)).not.toContain('Bad');
    expect(tenants.find((t) => t.id === acme.tenant.id)).toEqual(acme.tenant);
    expect(parsed(shown)).toEqual(acme.tenant);
  });

  it('tenant update --plan pro changes the plan and its limits', async () => {
    const updated = parsed(
      await cli('tenant', 'update', acme.tenant.id, '--plan', 'pro', '--json'),
    );
    expect(updated).toMatchObject({
      id: acme.tenant.id,
      name: 'Acme',
      plan: 'pro',
      limits: { rps: 100, rpm: 6000 },
      createdAt: acme.tenant.createdAt,
    });
  });

  it('tenant update --require-verification true --token-ttl 900 changes only those', async () => {
    const updated = parsed(
      await cli(
        'tenant',
        'update',
        acme.tenant.id,
        '--require-verification',
        'true',
        '--token-ttl',
        '900',
        '--json',
      ),
    );
    expect(updated).toMatchObject({
      name: 'Acme',
      plan: 'pro',
      limits: { rps: 100, rpm: 6000 },
      requireEmailVerification: true,
      accessTokenTtl: 900,
    });
  });

  it('tenant update --mfa / --passkeys change the policy, tenant show prints it, bad values change nothing', async () => {
    const id = acme.tenant.id;
    const before = parsed(await cli('tenant', 'show', id, '--json'));
    expect(before).toMatchObject({ mfaPolicy: 'optional', passkeysEnabled: true });
    const shown = await cli('tenant', 'show', id);
    expect(shown.stdout).toContain('mfa          optional\npasskeys     on\n');

    for (const [args, code, message] of [
      [['--mfa', 'always'], 1, /mfa must be one of off, optional, required \(mfa_policy_invalid\)/],
      [['--mfa', ''], 1, /mfa_policy_invalid/],
      [['--passkeys', 'enabled'], 2, /^error: --passkeys must be on or off$/m],
      // One bad value refuses the whole command: the good one is not applied either.
      [['--mfa', 'off', '--passkeys', 'yes please'], 2, /--passkeys must be on or off/],
      [['--mfa', 'nope', '--passkeys', 'off'], 1, /mfa_policy_invalid/],
    ] as const) {
      const bad = await cli('tenant', 'update', id, ...args, '--json');
      expect(bad.code, args.join(' ')).toBe(code);
      expect(bad.stdout).toBe('');
      expect(bad.stderr).toMatch(message);
    }
    // Everything but the time of the last change.
    const settings = ({ updatedAt: _, ...rest }: Body) => rest;
    expect(parsed(await cli('tenant', 'show', id, '--json'))).toEqual(before);

    const updated = parsed(
      await cli('tenant', 'update', id, '--mfa', 'required', '--passkeys', 'off', '--json'),
    );
    expect(settings(updated)).toEqual({
      ...settings(before),
      mfaPolicy: 'required',
      passkeysEnabled: false,
    });
    const text = await cli('tenant', 'update', id, '--mfa', 'off');
    expect(text.stdout).toContain('mfa          off\npasskeys     off\n');
    const back = parsed(
      await cli('tenant', 'update', id, '--mfa', 'optional', '--passkeys', 'on', '--json'),
    );
    expect(settings(back)).toEqual(settings(before));
  });

  it('tenant update --add-origin / --remove-origin change one origin and keep the others', async () => {
    const id = created.pro?.tenant.id as string;
    const origins = async (...args: string[]) =>
      parsed(await cli('tenant', 'update', id, ...args, '--json')).allowedOrigins;
    expect(
      await origins(
        '--add-origin',
        'https://b.example.com',
        '--add-origin',
        'http://localhost:5173',
      ),
    ).toEqual([
      'https://app.example.com',
      'http://localhost:3000',
      'https://b.example.com',
      'http://localhost:5173',
    ]);
    // Adding one that is there already changes nothing.
    expect(await origins('--add-origin', 'https://b.example.com/')).toHaveLength(4);
    expect(
      await origins(
        '--remove-origin',
        'http://localhost:3000',
        '--remove-origin',
        'https://b.example.com',
      ),
    ).toEqual(['https://app.example.com', 'http://localhost:5173']);

    // A refused change says why, and changes nothing.
    const noScheme = await cli('tenant', 'update', id, '--add-origin', 'localhost:8080');
    expect(noScheme).toMatchObject({ code: 1, stdout: '' });
    expect(noScheme.stderr).toMatch(
      /^error: localhost:8080 has no scheme: use http:\/\/localhost:8080$/m,
    );
    const notThere = await cli('tenant', 'update', id, '--remove-origin', 'https://x.example.com');
    expect(notThere).toMatchObject({ code: 1, stdout: '' });
    expect(notThere.stderr).toContain(
      'https://x.example.com is not an allowed origin of this tenant (allowed: https://app.example.com http://localhost:5173)',
    );
    const both = await cli(
      'tenant',
      'update',
      id,
      '--origin',
      'https://c.example.com',
      '--add-origin',
      'https://d.example.com',
    );
    expect(both).toMatchObject({ code: 2, stdout: '' });
    expect(both.stderr).toMatch(/--origin replaces the whole list/);
    expect(parsed(await cli('tenant', 'show', id, '--json')).allowedOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);

    // --origin replaces the list, and says which origins it dropped.
    const replaced = await cli('tenant', 'update', id, '--origin', 'https://c.example.com');
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toMatch(/^origins +https:\/\/c\.example\.com$/m);
    expect(replaced.stderr).toBe(
      'note: --origin replaced the allowed origins; no longer allowed: https://app.example.com http://localhost:5173 (--add-origin adds one and keeps the others)\n',
    );
    const none = await cli('tenant', 'update', id, '--origin', '', '--json');
    expect(JSON.parse(none.stdout).allowedOrigins).toEqual([]);
    expect(none.stderr).toContain('no longer allowed: https://c.example.com');
  });

  describe('keys', () => {
    /** `keys create --tenant Acme --json`: used against the server below. */
    let made: Body;

    it.concurrent('keys create --json returns the key and its plaintext, with every scope', async ({
      expect,
    }) => {
      made = parsed(await cli('keys', 'create', '--tenant', acme.tenant.id, '--json'));
      expect(Object.keys(made).sort()).toEqual(['key', 'plaintext']);
      expect(made.plaintext).toMatch(/^sk_test_[0-9A-Za-z]{43}$/);
      const random = made.plaintext.slice('sk_test_'.length);
      expect(made.key).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        tenantId: acme.tenant.id,
        kind: 'secret',
        display: `sk_test_${random.slice(0, 4)}…${random.slice(-4)}`,
        publishableKey: null,
        scopes: ALL_SCOPES,
        createdAt: expect.stringMatching(ISO),
        revokedAt: null,
      });
      expect(JSON.stringify(made.key)).not.toContain(random);
      secrets.push(made.plaintext);
    });

    it.concurrent('keys create --scope users:read makes a key with only that scope', async ({
      expect,
    }) => {
      const out = parsed(
        await cli('keys', 'create', '--tenant', acme.tenant.id, '--scope', 'users:read', '--json'),
      );
      expect(out.key).toMatchObject({ kind: 'secret', scopes: ['users:read'] });
      secrets.push(out.plaintext);
    });

    it.concurrent('keys create --scope bogus fails and makes no key', async ({ expect }) => {
      const result = await cli(
        'keys',
        'create',
        '--tenant',
        acme.tenant.id,
        '--scope',
        'bogus',
        '--json',
      );
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('scopes_invalid');
    });

    describe('against a server on the same database', () => {
      let app: TestApp;
      const signUp = (key: string, address: string) =>
        postJson(app, '/v1/auth/sign-up', key, {
          email: address,
          password: 'correct horse battery',
        });

      beforeAll(async () => {
        app = await startApp(dialect, { databaseUrl: fresh.url });
      });
      afterAll(() => app?.dispose());

      it('a CLI-made key signs users up, and stops working once revoked by the CLI', async () => {
        const before = await signUp(made.plaintext, 'cli@example.com');
        expect(before.status).toBe(201);
        expect(await json(before)).toMatchObject({ email: 'cli@example.com' });

        const revoked = parsed(
          await cli('keys', 'revoke', '--tenant', acme.tenant.id, made.key.id, '--json'),
        );
        expect(revoked).toMatchObject({ id: made.key.id, revokedAt: expect.stringMatching(ISO) });
        expect(Math.abs(Date.parse(revoked.revokedAt) - Date.now())).toBeLessThan(60_000);

        const after = await signUp(made.plaintext, 'cli@example.com');
        expect(after.status).toBe(401);
        expect(after.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(await json(after)).toMatchObject({ status: 401, code: 'unauthorized' });

        // Rotation: the tenant's other secret key is untouched.
        const other = await signUp(acme.secretKey, 'cli-2@example.com');
        expect(other.status).toBe(201);
      });
    });

    it('keys list --json shows every key, publishable whole and no secret plaintext', async () => {
      const [result, elsewhere] = await Promise.all([
        cli('keys', 'list', '--tenant', acme.tenant.id, '--json'),
        // A key can be revoked only through its own tenant.
        cli('keys', 'revoke', '--tenant', created.pro?.tenant.id, made.key.id, '--json'),
      ]);
      expect(elsewhere.code).toBe(1);
      expect(elsewhere.stderr).toMatch(/^error: No key /);

      const keys = parsed(result) as Body[];
      // The two of tenant create and two of keys create (--scope bogus was refused).
      expect(secrets).toHaveLength(3);
      expect(keys).toHaveLength(4);
      for (const secret of secrets) {
        expect(result.stdout).not.toContain(secret);
        expect(result.stdout).not.toContain(secret.slice('sk_test_'.length));
      }
      expect(result.stdout).toContain(acme.publishableKey);
      expect(keys.find((k) => k.kind === 'publishable')?.publishableKey).toBe(acme.publishableKey);
      expect(keys.filter((k) => k.revokedAt !== null).map((k) => k.id)).toEqual([made.key.id]);
      for (const key of keys) {
        expect(key.tenantId).toBe(acme.tenant.id);
        expect(key.display).toMatch(/^(sk|pk)_test_[0-9A-Za-z]{4}…[0-9A-Za-z]{4}$/);
      }
    });
  });
});

describe('latchkey --help', () => {
  // Every command and subcommand of the table the CLI dispatches from: a new one is covered.
  const cases = Object.entries(COMMANDS).flatMap(([name, command]) =>
    command.help
      ? [{ words: [name], help: command.help }]
      : Object.entries(command.subcommands ?? {}).map(([sub, help]) => ({
          words: [name, sub],
          help,
        })),
  );

  it('covers every command', () => {
    expect(cases.map((c) => c.words.join(' '))).toEqual(
      expect.arrayContaining(['serve', 'migrate', 'tenant update', 'keys create', 'secret rotate']),
    );
  });

  it.concurrent.for(cases.flatMap((c) => ['--help', '-h'].map((flag) => ({ ...c, flag }))))(
    'latchkey $words.0 $words.1 $flag prints its options and an example, exit 0, with no configuration',
    async ({ words, help, flag }, { expect }) => {
      // Nothing but PATH: help needs no database, secret or setting.
      const result = await latchkey([...words, flag], {}, { only: true });
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toContain(`usage: latchkey ${help.usage}\n`);
      expect(result.stdout).toContain(`example:\n  ${help.example}`);
      expect(result.stdout).toMatch(/^ {2}-h, --help +show this help$/m);
      for (const [option] of help.options) expect(result.stdout).toContain(`  ${option}`);
      expect(help.example.startsWith('latchkey ') || help.example.includes(' latchkey ')).toBe(
        true,
      );
      // The flag may come anywhere, `latchkey help …` says the same.
      const late = await latchkey([...words, '--json', flag], {}, { only: true });
      expect(late).toEqual(result);
      expect(await latchkey(['help', ...words], {}, { only: true })).toEqual(result);
    },
  );

  it.concurrent.for(Object.entries(COMMANDS).filter(([, command]) => command.subcommands))(
    'latchkey %s --help lists each subcommand; without one it is a usage error',
    async ([name, command], { expect }) => {
      const result = await latchkey([name, '--help'], {}, { only: true });
      expect(result).toMatchObject({ code: 0, stderr: '' });
      for (const sub of Object.values(command.subcommands ?? {}))
        expect(result.stdout).toContain(`latchkey ${sub.usage}`);
      const missing = await latchkey([name], {}, { only: true });
      expect(missing).toMatchObject({ code: 2, stdout: '' });
      expect(missing.stderr).toContain(`latchkey ${name} SUBCOMMAND --help`);
      const unknown = await latchkey([name, 'bogus', '--help'], {}, { only: true });
      expect(unknown).toMatchObject({ code: 2, stdout: '' });
      expect(unknown.stderr).toMatch(new RegExp(`^error: unknown subcommand "${name} bogus"`));
    },
  );
});

describe('latchkey serve: where it listens', () => {
  it('a port in use: says so and how to pick another, exit 1, no stack trace', async () => {
    const fresh = await freshDatabaseUrl('sqlite');
    const first = await startServe(
      { DATABASE_URL: fresh.url, LATCHKEY_SECRET: SECRET },
      '/healthz',
    );
    try {
      const port = new URL(first.url).port;
      const second = await latchkey(['serve'], {
        DATABASE_URL: fresh.url,
        LATCHKEY_SECRET: SECRET,
        PORT: port,
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
      });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(
        `error: port ${port} is in use: another server (another Latchkey, perhaps) is listening on it. Stop that one, or pick another port: PORT=8788 npm start (or PORT=8788 latchkey serve)`,
      );
      expect(second.stderr).not.toMatch(/^\s+at /m);
      // The first one is untouched.
      expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
      await fresh.drop();
    }
  });

  it('npm start (serve --demo) listens on loopback only unless HOST is set', async () => {
    const fresh = await freshDatabaseUrl('sqlite');
    // No HOST: what `npm start` does with nothing set.
    const { HOST: _host, ...inherited } = process.env;
    const env = {
      ...inherited,
      DATABASE_URL: fresh.url,
      LATCHKEY_SECRET: SECRET,
      PORT: '0',
      LOG_LEVEL: 'warn',
    };
    const child = spawn(process.execPath, [MAIN, 'serve', '--demo'], {
      env,
      cwd: tmpdir(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const url = new URL(await listeningUrl(child));
      expect(['127.0.0.1', '[::1]']).toContain(url.hostname);
      expect((await fetch(`${url.origin}/healthz`)).status).toBe(200);
      // Not on the machine's other addresses.
      const external = Object.values(networkInterfaces())
        .flat()
        .find((a) => a && !a.internal && a.family === 'IPv4');
      if (external) {
        const other = await fetch(`http://${external.address}:${url.port}/healthz`).then(
          (r) => r.status,
          (error: Error & { cause?: { code?: string } }) => error.cause?.code,
        );
        expect(other).toBe('ECONNREFUSED');
      }
    } finally {
      child.kill('SIGTERM');
      await exited;
      await fresh.drop();
    }
  });
});

describe('latchkey serve with PORT=0', () => {
  it('listens on a port the system chose, and its first line says where', async () => {
    const fresh = await freshDatabaseUrl('sqlite');
    const child = spawn(process.execPath, [MAIN, 'serve'], {
      env: {
        ...process.env,
        DATABASE_URL: fresh.url,
        LATCHKEY_SECRET: SECRET,
        PORT: '0',
        HOST: '127.0.0.1',
        PUBLIC_URL: 'https://auth.example.com',
        LOG_LEVEL: 'warn',
      },
      cwd: tmpdir(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    try {
      const url = await listeningUrl(child);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(new URL(url).port).not.toBe('0');
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      // What it serves is still named by its public URL.
      expect(stdout).toContain('API reference  https://auth.example.com/v1/openapi.json');
    } finally {
      child.kill('SIGTERM');
      await exited;
      await fresh.drop();
    }
  });
});
