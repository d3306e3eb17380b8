/**
 * `latchkey webhook …` (docs/design.md §17): a tenant's endpoints made, changed and removed
 * with the real, built CLI on every database, and what it stored read back from it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitEvent } from '../src/modules/webhooks/index.js';
import { openDatabase } from '../src/storage/index.js';
import { latchkey, type Result } from './cli-run.js';
import { type Body, DIALECTS, freshDatabaseUrl, SECRET } from './support.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const SECRET_FORM = /^whsec_[A-Za-z0-9+/]{43}=$/;

/** The whole of stdout as one JSON value. */
function parsed(result: Result): Body {
  expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as Body;
}

describe.each(DIALECTS)('latchkey webhook on %s', (dialect) => {
  let fresh: { url: string; drop(): Promise<void> };
  let database: ReturnType<typeof openDatabase>;
  let env: Record<string, string>;
  const cli = (...args: string[]) => latchkey(args, env);
  let tenant: string;
  let production: string;
  const endpointRows = (tenantId: string) =>
    database.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at')
      .execute();

  /** A refused command: exit non-zero, nothing on stdout, and the tenant's rows as before. */
  async function refused(tenantId: string, args: string[], message: RegExp | string) {
    const before = await endpointRows(tenantId);
    const result = await cli(...args);
    expect(result.code, result.stdout).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(await endpointRows(tenantId)).toEqual(before);
  }

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

  it('create --json prints the endpoint and its secret once; the secret is stored sealed', async () => {
    const made = parsed(
      await cli(
        'webhook',
        'create',
        '--tenant',
        tenant,
        '--url',
        'http://localhost:4000/hooks',
        '--event',
        'user.created',
        '--event',
        'session.ended',
        '--json',
      ),
    );
    expect(Object.keys(made).sort()).toEqual(['endpoint', 'secret']);
    expect(made.secret).toMatch(SECRET_FORM);
    expect(made.endpoint).toEqual({
      id: expect.any(String),
      url: 'http://localhost:4000/hooks',
      events: ['user.created', 'session.ended'],
      disabled: false,
      disabledReason: null,
      previousSecretExpiresAt: null,
      lastSuccessAt: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    const [row] = await endpointRows(tenant);
    expect(row?.id).toBe(made.endpoint.id);
    expect(JSON.stringify(row)).not.toContain(made.secret.slice(6));

    // Shown once: list never prints it.
    const listed = await cli('webhook', 'list', '--tenant', tenant, '--json');
    expect(parsed(listed)).toEqual([made.endpoint]);
    const text = await cli('webhook', 'list', '--tenant', tenant);
    expect(text.stdout).toContain(`${made.endpoint.id}  enabled   http://localhost:4000/hooks`);
    for (const out of [listed, text]) expect(out.stdout).not.toContain(made.secret);
  });

  it('create without --json says to keep the secret now; no --event takes every event', async () => {
    const result = await cli(
      'webhook',
      'create',
      '--tenant',
      tenant,
      '--url',
      'https://hooks.example.com/latchkey',
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^events +\(every event\)$/m);
    expect(result.stdout).toMatch(/^secret +whsec_\S+$/m);
    expect(result.stdout).toContain('Keep the secret now: it is shown only this once');
    const id = /^endpoint +(\S+)$/m.exec(result.stdout)?.[1] as string;
    const deleted = await cli('webhook', 'delete', '--tenant', tenant, '--id', id);
    expect(deleted).toMatchObject({
      code: 0,
      stdout: `deleted ${id} (https://hooks.example.com/latchkey)\n`,
    });
    expect((await endpointRows(tenant)).map((r) => r.id)).not.toContain(id);
  });

  it('update changes the address, the events and the state; rotate-secret keeps the old one for the grace', async () => {
    const made = parsed(
      await cli('webhook', 'create', '--tenant', tenant, '--url', 'http://127.0.0.1:1/a', '--json'),
    );
    const id = made.endpoint.id as string;
    const update = (...args: string[]) =>
      cli('webhook', 'update', '--tenant', tenant, '--id', id, ...args, '--json');
    expect(
      parsed(await update('--url', 'http://127.0.0.1:2/b', '--event', 'user.deleted')),
    ).toMatchObject({ url: 'http://127.0.0.1:2/b', events: ['user.deleted'], disabled: false });
    expect(parsed(await update('--disable'))).toMatchObject({
      disabled: true,
      disabledReason: 'operator',
    });
    expect(parsed(await update('--enable', '--all-events'))).toMatchObject({
      disabled: false,
      disabledReason: null,
      events: [],
    });

    const rotated = parsed(
      await cli(
        'webhook',
        'rotate-secret',
        '--tenant',
        tenant,
        '--id',
        id,
        '--grace-hours',
        '2',
        '--json',
      ),
    );
    expect(rotated.secret).toMatch(SECRET_FORM);
    expect(rotated.secret).not.toBe(made.secret);
    const grace = Date.parse(rotated.endpoint.previousSecretExpiresAt) - Date.now();
    expect(grace).toBeGreaterThan(2 * 3_600_000 - 60_000);
    expect(grace).toBeLessThanOrEqual(2 * 3_600_000);
    const none = parsed(
      await cli(
        'webhook',
        'rotate-secret',
        '--tenant',
        tenant,
        '--id',
        id,
        '--grace-hours',
        '0',
        '--json',
      ),
    );
    expect(none.endpoint.previousSecretExpiresAt).toBeNull();
    const row = (await endpointRows(tenant)).find((r) => r.id === id);
    expect(row?.previous_secret_jwe).toBeNull();
  });

  it('deliveries lists what the endpoint was sent; resend queues one again with the same webhook-id', async () => {
    const made = parsed(
      await cli('webhook', 'create', '--tenant', tenant, '--url', 'http://127.0.0.1:9/x', '--json'),
    );
    // An event in the outbox, as a change's transaction writes it (user.created of a sign-up).
    const messageId = await database.db
      .transaction()
      .execute((trx) =>
        emitEvent(trx, tenant, 'user.created', { id: 'u1', email: 'ada@example.com' }),
      );
    expect(messageId).toMatch(/^msg_/);

    const deliveries = parsed(
      await cli('webhook', 'deliveries', '--tenant', tenant, '--id', made.endpoint.id, '--json'),
    );
    expect(deliveries).toEqual([
      expect.objectContaining({
        endpointId: made.endpoint.id,
        type: 'user.created',
        status: 'pending',
        messageId,
      }),
    ]);
    const again = parsed(
      await cli('webhook', 'resend', '--tenant', tenant, '--delivery', deliveries[0].id, '--json'),
    );
    expect(again).toMatchObject({
      messageId: deliveries[0].messageId,
      endpointId: made.endpoint.id,
      status: 'pending',
    });
    expect(again.id).not.toBe(deliveries[0].id);
    const text = await cli('webhook', 'deliveries', '--tenant', tenant, '--id', made.endpoint.id);
    expect(text.stdout.trim().split('\n')).toHaveLength(2);
    expect(text.stdout).toContain(deliveries[0].messageId);
  });

  it('refuses bad input with a clear message, a non-zero exit and no change', async () => {
    const some = parsed(await cli('webhook', 'list', '--tenant', tenant, '--json'))[0];
    const create = (tenantId: string, ...args: string[]) => [
      'webhook',
      'create',
      '--tenant',
      tenantId,
      ...args,
    ];
    await refused(
      tenant,
      create(tenant, '--url', 'https://a.example.com/', '--event', 'user.exploded'),
      /\/events\/0: user\.exploded is not an event; the events are user\.created, /,
    );
    await refused(tenant, create(tenant, '--url', 'not a url'), /\/url: url must be an absolute/);
    await refused(tenant, create(tenant, '--url', 'ftp://a.example.com/'), /\/url: url must be/);
    await refused(tenant, create(tenant), /error: --url is required/);
    await refused(
      production,
      create(production, '--url', 'http://hooks.example.com/'),
      /a production endpoint must use https/,
    );
    for (const url of [
      'https://127.0.0.1/',
      'https://10.0.0.8/',
      'https://169.254.169.254/latest',
      'https://[::1]/',
      'https://localhost/',
    ])
      await refused(
        production,
        create(production, '--url', url),
        /must not target a loopback, private or link-local address/,
      );
    await refused(
      tenant,
      create('00000000-0000-4000-8000-000000000000', '--url', 'https://a.example.com/'),
      /No tenant with id/,
    );
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const sub of ['delete', 'rotate-secret', 'deliveries'])
      await refused(
        tenant,
        ['webhook', sub, '--tenant', tenant, '--id', unknown],
        /No webhook endpoint/,
      );
    await refused(
      tenant,
      ['webhook', 'delete', '--tenant', tenant, '--id', 'nope'],
      /No webhook endpoint nope/,
    );
    await refused(
      tenant,
      [
        'webhook',
        'update',
        '--tenant',
        tenant,
        '--id',
        some.id,
        '--url',
        'https://x.example.com/',
        '--event',
        'nope',
      ],
      /nope is not an event/,
    );
    await refused(
      tenant,
      ['webhook', 'update', '--tenant', tenant, '--id', some.id],
      /nothing to update/,
    );
    await refused(
      tenant,
      ['webhook', 'update', '--tenant', tenant, '--id', some.id, '--enable', '--disable'],
      /give --enable or --disable/,
    );
    await refused(
      tenant,
      ['webhook', 'rotate-secret', '--tenant', tenant, '--id', some.id, '--grace-hours', 'soon'],
      /--grace-hours must be a positive integer/,
    );
    await refused(
      tenant,
      ['webhook', 'rotate-secret', '--tenant', tenant, '--id', some.id, '--grace-hours', '721'],
      /--grace-hours must be at most 720/,
    );
    await refused(
      tenant,
      ['webhook', 'resend', '--tenant', tenant, '--delivery', unknown],
      /No webhook delivery/,
    );
    // Another tenant's endpoint is not found from this one.
    await refused(
      production,
      ['webhook', 'delete', '--tenant', production, '--id', some.id],
      /No webhook endpoint/,
    );
  }, 90_000); // about twenty CLI processes: 16 s on a quiet machine
});
