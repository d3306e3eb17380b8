/**
 * `latchkey tenant create --from FILE.jsonl`, the paged `tenant list` and `operator-key`
 * (docs/design.md §21) with the real, built CLI on every database.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/storage/index.js';
import { latchkey } from './cli-run.js';
import { type Body, DIALECTS, freshDatabaseUrl, SECRET } from './support.js';

describe.each(DIALECTS)('many tenants from the CLI on %s', (dialect) => {
  let fresh: { url: string; drop(): Promise<void> };
  let env: Record<string, string>;
  let dir: string;
  const cli = (...args: string[]) => latchkey(args, env);
  const created: Body[] = [];

  beforeAll(async () => {
    fresh = await freshDatabaseUrl(dialect);
    env = { DATABASE_URL: fresh.url, LATCHKEY_SECRET: SECRET };
    if (dialect === 'postgres') expect((await cli('migrate')).code).toBe(0);
    dir = mkdtempSync(join(tmpdir(), 'latchkey-bulk-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await fresh?.drop();
  });

  it('create --from makes each good line whole, refuses bad ones by line number, exits 1', async () => {
    const file = join(dir, 'tenants.jsonl');
    const lines = [
      JSON.stringify({ name: 'One', origins: ['http://localhost:5173'] }),
      JSON.stringify({ name: 'Two', env: 'production', plan: 'enterprise', rps: 20, rpm: 900 }),
      '{ not json',
      '',
      JSON.stringify({ name: 'Bad origin', origins: ['ftp://nope'] }),
      JSON.stringify({ name: 'Typo', plann: 'pro' }),
      JSON.stringify({ name: 'Three', plan: 'pro', mfa: 'required', tokenTtl: 300 }),
    ];
    writeFileSync(file, `${lines.join('\n')}\n`);
    const result = await cli('tenant', 'create', '--from', file);
    expect(result.code).toBe(1);
    const out = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Body);
    expect(out.map((o) => [o.line, o.tenant.name])).toEqual([
      [1, 'One'],
      [2, 'Two'],
      [7, 'Three'],
    ]);
    for (const o of out) {
      expect(Object.keys(o)).toEqual(['line', 'tenant', 'secretKey', 'publishableKey']);
      expect(o.secretKey).toMatch(/^sk_(test|prod)_[0-9A-Za-z]{43}$/);
      expect(o.publishableKey).toMatch(/^pk_(test|live)_[0-9A-Za-z]{43}$/);
    }
    expect(out[1]?.tenant).toMatchObject({
      environment: 'production',
      limits: { rps: 20, rpm: 900 },
    });
    expect(out[2]?.tenant).toMatchObject({
      plan: 'pro',
      mfaPolicy: 'required',
      accessTokenTtl: 300,
    });
    expect(result.stderr).toMatch(/^refused line 3: not valid JSON$/m);
    expect(result.stderr).toMatch(/^refused line 5: \/allowedOrigins\/0: ftp:\/\/nope /m);
    expect(result.stderr).toMatch(/^refused line 6: unknown field plann /m);
    expect(result.stderr).toMatch(/^created 3, refused 3$/m);
    created.push(...out);

    // Each created tenant is whole: its keys work from the database, its signing key exists.
    const database = openDatabase(fresh.url, { poolSize: 1 });
    try {
      const names = (await database.db.selectFrom('tenants').select('name').execute()).map(
        (r) => r.name,
      );
      expect(names.sort()).toEqual(['One', 'Three', 'Two']);
      for (const o of out) {
        const signing = await database.db
          .selectFrom('signing_keys')
          .select('id')
          .where('tenant_id', '=', o.tenant.id)
          .execute();
        expect(signing).toHaveLength(1);
        const keys = await database.db
          .selectFrom('api_keys')
          .select('kind')
          .where('tenant_id', '=', o.tenant.id)
          .execute();
        expect(keys.map((k) => k.kind).sort()).toEqual(['publishable', 'secret']);
      }
    } finally {
      await database.close();
    }
  });

  it('create --from a missing file is a usage error', async () => {
    const result = await cli('tenant', 'create', '--from', join(dir, 'nope.jsonl'));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('cannot read');
  });

  it('tenant list pages with --limit and --after, says how to get the next page, and searches', async () => {
    const all = await cli('tenant', 'list', '--json');
    expect(all.code).toBe(0);
    const ordered = (JSON.parse(all.stdout) as Body[]).map((t) => t.id);
    expect(ordered).toHaveLength(3);
    expect(all.stderr).toBe('');
    const first = await cli('tenant', 'list', '--limit', '2');
    expect(
      first.stdout
        .trim()
        .split('\n')
        .map((l) => l.slice(0, 36)),
    ).toEqual(ordered.slice(0, 2));
    expect(first.stderr.trim()).toBe(
      `next page: latchkey tenant list --limit 2 --after ${ordered[1]}`,
    );
    const second = await cli(
      'tenant',
      'list',
      '--limit',
      '2',
      '--after',
      ordered[1] as string,
      '--json',
    );
    expect((JSON.parse(second.stdout) as Body[]).map((t) => t.id)).toEqual(ordered.slice(2));
    expect(second.stderr).toBe('');
    const found = await cli('tenant', 'list', '--search', 'THR', '--json');
    expect((JSON.parse(found.stdout) as Body[]).map((t) => t.name)).toEqual(['Three']);
    const bad = await cli('tenant', 'list', '--limit', '0');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--limit must be 1 to 1000');
  });

  it('operator-key create prints the key once; list shows prefix and last four; revoke ends it', async () => {
    const made = await cli('operator-key', 'create', '--name', 'ci', '--json');
    expect(made.code, made.stderr).toBe(0);
    const { key, plaintext } = JSON.parse(made.stdout) as Body;
    expect(plaintext).toMatch(/^lko_[0-9A-Za-z]{43}$/);
    expect(key.display).toBe(`${plaintext.slice(0, 8)}…${plaintext.slice(-4)}`);
    const listed = await cli('operator-key', 'list');
    expect(listed.stdout).toContain(`${key.id}  ${key.display}  live  ci`);
    expect(listed.stdout).not.toContain(plaintext);
    const revoked = await cli('operator-key', 'revoke', key.id, '--json');
    expect(JSON.parse(revoked.stdout).revokedAt).toMatch(/^\d{4}-/);
    const database = openDatabase(fresh.url, { poolSize: 1 });
    try {
      const rows = await database.db.selectFrom('operator_keys').selectAll().execute();
      expect(JSON.stringify(rows)).not.toContain(plaintext);
    } finally {
      await database.close();
    }
  });
});
