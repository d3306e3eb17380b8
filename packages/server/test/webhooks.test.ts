/**
 * Webhooks (docs/design.md §17) against a real receiver on loopback that verifies every
 * request with the Standard Webhooks reference library (`standardwebhooks`), on SQLite and
 * PostgreSQL: each event from the path that makes its change, retries with one webhook-id,
 * a hanging receiver that holds up nothing else, secret rotation, refused addresses, and
 * two instances on one PostgreSQL database.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryAudit } from '../src/modules/audit/index.js';
import { importUsers, PARSERS } from '../src/modules/migration/index.js';
import { emailKey } from '../src/modules/users/email.js';
import { insertUser } from '../src/modules/users/users.service.js';
import {
  createEndpoint,
  deleteEndpoint,
  getDelivery,
  listDeliveries,
  listEndpoints,
  resendDelivery,
  rotateEndpointSecret,
  updateEndpoint,
} from '../src/modules/webhooks/index.js';
import {
  browserSignIn,
  DIALECTS,
  email,
  eventually,
  HAVE_POSTGRES,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';
import { type Answer, type Received, type Receiver, startReceiver } from './webhook-receiver.js';

const PASSWORD = 'correct horse battery staple';
const codeOf = (secret: string) => generateSync({ secret, epoch: Math.floor(Date.now() / 1000) });

/** Short waits, so that retries and failure show within a test. */
const FAST = {
  retryDelaysMs: [150, 150, 150],
  jitter: 0,
  attemptTimeoutMs: 1_500,
  pollMs: 40,
  // `rebind.example` resolved to loopback at delivery time, as a DNS change would do.
  resolve: async (host: string) =>
    host === 'rebind.example'
      ? [{ address: '127.0.0.1', family: 4 }]
      : [{ address: '93.184.215.14', family: 4 }],
};

describe.each(DIALECTS)('webhooks on %s', (dialect) => {
  let app: TestApp;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    app = await startApp(dialect, { webhooks: FAST });
  });
  afterAll(async () => {
    for (const r of receivers) await r.close();
    await app.dispose();
  });

  const deps = (on = app) => ({ db: on.ctx.database.db, box: on.ctx.box });

  /** A receiver and an endpoint of `tenant` pointing at it. */
  async function hooked(
    options: {
      tenant?: TestTenant;
      events?: string[];
      answer?: (r: Received, n: number) => Answer;
      on?: TestApp;
    } = {},
  ) {
    const on = options.on ?? app;
    const secrets: string[] = [];
    const receiver = await startReceiver({ secrets: () => secrets, answer: options.answer });
    receivers.push(receiver);
    const tenant = options.tenant ?? (await on.tenant());
    const created = await createEndpoint(deps(on), tenant.tenant, {
      url: receiver.url,
      events: options.events,
    });
    secrets.push(created.secret);
    return { receiver, tenant, endpoint: created.endpoint, secrets };
  }

  const call = (tenant: TestTenant, method: string, path: string, body?: unknown) =>
    app.request(path, {
      method,
      headers: {
        authorization: `Bearer ${tenant.secretKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  async function signUp(tenant: TestTenant, address = email('hook'), on = app): Promise<string> {
    const res = await postJson(on, '/v1/auth/sign-up', tenant.secretKey, {
      email: address,
      password: PASSWORD,
    });
    expect(res.status).toBe(201);
    return (await json(res)).userId as string;
  }

  it("sends each event of a user's life, signed so that standardwebhooks verifies it", async () => {
    const { receiver, tenant } = await hooked();
    const address = email('life');
    const userId = await signUp(tenant, address);
    const signIn = await json(
      await postJson(app, '/v1/auth/sign-in', tenant.secretKey, {
        email: address,
        password: PASSWORD,
      }),
    );
    expect((await call(tenant, 'PATCH', `/v1/users/${userId}`, { name: 'Ada' })).status).toBe(200);
    const factor = await json(
      await call(tenant, 'POST', `/v1/users/${userId}/factors`, { type: 'totp' }),
    );
    const confirmed = await call(
      tenant,
      'POST',
      `/v1/users/${userId}/factors/${factor.id}/confirm`,
      {
        code: codeOf(factor.secret),
      },
    );
    expect(confirmed.status).toBe(200);
    expect((await call(tenant, 'DELETE', `/v1/users/${userId}/factors/${factor.id}`)).status).toBe(
      204,
    );
    const out = await postJson(app, '/v1/auth/sign-out', tenant.secretKey, {
      refreshToken: signIn.refreshToken,
    });
    expect(out.status).toBe(204);
    expect((await call(tenant, 'DELETE', `/v1/users/${userId}`)).status).toBe(204);

    const types = [
      'user.created',
      'session.created',
      'user.updated',
      'user.factor_added',
      'user.factor_removed',
      'session.ended',
      'user.deleted',
    ];
    await eventually(async () =>
      types.every((type) => receiver.ofType(type).length > 0) ? true : undefined,
    );
    for (const r of receiver.received) {
      expect(r.verified).toBe(true);
      expect(r.id).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
      expect(Math.abs(Number(r.timestamp) - Date.now() / 1000)).toBeLessThan(60);
      expect(Object.keys(r.body).sort()).toEqual(['data', 'timestamp', 'type']);
      expect(new Date(r.body.timestamp).toISOString()).toBe(r.body.timestamp);
    }
    expect(receiver.ofType('user.created')[0]?.body.data).toMatchObject({
      id: userId,
      email: address,
      emailVerified: false,
      disabled: false,
    });
    expect(receiver.ofType('user.created')[0]?.body.data).not.toHaveProperty('passwordHash');
    expect(receiver.ofType('session.created')[0]?.body.data).toMatchObject({
      id: signIn.sessionId,
      userId,
      channel: 'server',
    });
    expect(receiver.ofType('user.updated').map((r) => r.body.data.name)).toContain('Ada');
    expect(receiver.ofType('user.factor_added')[0]?.body.data).toMatchObject({
      userId,
      factor: { id: factor.id, type: 'totp', confirmed: true },
    });
    expect(receiver.ofType('user.factor_removed')[0]?.body.data).toMatchObject({
      userId,
      factor: { id: factor.id, type: 'totp' },
    });
    expect(receiver.ofType('session.ended')[0]?.body.data).toMatchObject({
      id: signIn.sessionId,
      userId,
    });
    expect(receiver.ofType('user.deleted')[0]?.body.data).toEqual({ id: userId, email: address });
    // Each event once: a healthy receiver gets no repeats.
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(receiver.received.length);
  });

  it('sends the events of the hosted pages too: sign-up, sign-in and sign-out in a browser', async () => {
    const ORIGIN = 'http://localhost:5173';
    const tenant = await app.tenant({ allowedOrigins: [ORIGIN] });
    const { receiver } = await hooked({ tenant });
    const query = new URLSearchParams({
      pk: tenant.publishableKey,
      redirect_url: `${ORIGIN}/cb`,
    }).toString();
    const form = await app.request(`/sign-up?${query}`);
    const cookie = form.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] as string;
    const address = email('hosted');
    const up = await app.request(`/sign-up?${query}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ _csrf: csrf, email: address, password: PASSWORD }).toString(),
    });
    expect(up.status).toBe(303);
    const tokens = await browserSignIn(app, tenant, { email: address, password: PASSWORD }, ORIGIN);
    const out = await app.request('/v1/client/sign-out', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-latchkey-publishable-key': tenant.publishableKey,
        origin: ORIGIN,
      },
      body: JSON.stringify({ refresh_token: tokens.refreshToken }),
    });
    expect(out.status).toBeLessThan(300);
    await eventually(async () => (receiver.ofType('session.ended').length ? true : undefined));
    const created = receiver.ofType('user.created');
    expect(created.map((r) => r.body.data.email)).toEqual([address]);
    const sessions = receiver.ofType('session.created').map((r) => r.body.data);
    expect(sessions.every((s) => s.userId === created[0]?.body.data.id)).toBe(true);
    expect(sessions.map((s) => s.channel)).toContain('browser');
    expect(receiver.received.every((r) => r.verified)).toBe(true);
  });

  it('an import sends user.created for each user it writes, user.updated with --update, nothing on a dry run', async () => {
    const { receiver, tenant } = await hooked({ events: ['user.created', 'user.updated'] });
    const addresses = [email('imp-a'), email('imp-b'), email('imp-c')];
    const file = (name: string) =>
      addresses
        .map((address) => JSON.stringify({ email: address, name, emailVerified: true }))
        .join('\n');
    const run = (contents: string, options: { dryRun?: boolean; update?: boolean } = {}) =>
      importUsers(
        {
          db: app.ctx.database.db,
          dialect: app.ctx.database.dialect,
          sqlite: app.ctx.database.sqlite,
        },
        tenant.tenant,
        (PARSERS.latchkey as NonNullable<(typeof PARSERS)['latchkey']>)(
          Readable.from([Buffer.from(contents)]),
          {},
        ),
        options,
      );
    expect((await run(file('Old'), { dryRun: true })).imported).toBe(3);
    expect((await run(file('Old'))).imported).toBe(3);
    await eventually(async () => (receiver.received.length === 3 ? true : undefined));
    expect(receiver.received.map((r) => r.body.data.email).sort()).toEqual([...addresses].sort());
    expect(receiver.received.every((r) => r.body.type === 'user.created' && r.verified)).toBe(true);
    // Again: nothing changes, nothing is sent.
    expect((await run(file('Old'))).unchanged).toBe(3);
    expect((await run(file('New'), { update: true })).updated).toBe(3);
    await eventually(async () => (receiver.ofType('user.updated').length === 3 ? true : undefined));
    expect(receiver.ofType('user.updated').map((r) => r.body.data.name)).toEqual([
      'New',
      'New',
      'New',
    ]);
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.received).toHaveLength(6);
  });

  it('sends an endpoint only the events it chose, and nothing to a disabled one', async () => {
    const { receiver, tenant, endpoint } = await hooked({ events: ['user.deleted'] });
    const other = await hooked({ tenant });
    const userId = await signUp(tenant);
    expect((await call(tenant, 'DELETE', `/v1/users/${userId}`)).status).toBe(204);
    await eventually(async () => (receiver.received.length === 1 ? true : undefined));
    await eventually(async () => (other.receiver.ofType('user.deleted').length ? true : undefined));
    expect(receiver.received.map((r) => r.body.type)).toEqual(['user.deleted']);
    await updateEndpoint(app.ctx.database.db, tenant.tenant, endpoint.id, { disabled: true });
    const second = await signUp(tenant);
    expect((await call(tenant, 'DELETE', `/v1/users/${second}`)).status).toBe(204);
    await eventually(async () =>
      other.receiver.ofType('user.deleted').some((r) => r.body.data.id === second)
        ? true
        : undefined,
    );
    expect(receiver.received).toHaveLength(1);
  });

  it('writes the event in the transaction of the change: a rollback sends nothing', async () => {
    const { receiver, tenant } = await hooked();
    const now = Date.now();
    const row = (address: string) => ({
      id: randomUUID(),
      tenant_id: tenant.tenant.id,
      email: address,
      email_key: emailKey(address),
      password_hash: null,
      name: null,
      metadata: '{}',
      roles: '[]',
      email_verified_at: null,
      disabled_at: null,
      created_at: now,
      updated_at: now,
    });
    const lost = row(email('rolled-back'));
    await expect(
      app.ctx.database.db.transaction().execute(async (trx) => {
        await insertUser(trx, lost);
        throw new Error('the change fails after its event was written');
      }),
    ).rejects.toThrow('the change fails');
    const kept = row(email('committed'));
    await app.ctx.database.db.transaction().execute((trx) => insertUser(trx, kept));
    await eventually(async () => (receiver.received.length ? true : undefined));
    // Well past a poll: still only the committed user.
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received.map((r) => r.body.data.id)).toEqual([kept.id]);
    const messages = await app.ctx.database.db
      .selectFrom('webhook_messages')
      .select('body')
      .where('tenant_id', '=', tenant.tenant.id)
      .execute();
    expect(messages.some((m) => m.body.includes(lost.id))).toBe(false);
  });

  it('retries a 500 with the same webhook-id and body, and records each attempt', async () => {
    const seen = new Set<string>();
    const { receiver, endpoint, tenant } = await hooked({
      answer: (r) => {
        if (seen.has(r.id)) return { status: 200, body: 'ok' };
        seen.add(r.id);
        return { status: 500, body: 'try later' };
      },
    });
    const userId = await signUp(tenant);
    await eventually(async () => (receiver.received.length >= 2 ? true : undefined));
    const [first, second] = receiver.received;
    expect(second?.id).toBe(first?.id);
    expect(second?.raw).toBe(first?.raw);
    expect(second?.verified && first?.verified).toBe(true);
    expect(first?.body.data.id).toBe(userId);
    const delivery = await eventually(async () => {
      const [d] = await listDeliveries(app.ctx.database.db, tenant.tenant.id, endpoint.id, {
        limit: 5,
      });
      return d?.status === 'succeeded' ? d : undefined;
    });
    expect(delivery).toMatchObject({ messageId: first?.id, attempts: 2, type: 'user.created' });
    const detail = await getDelivery(app.ctx.database.db, tenant.tenant.id, delivery.id);
    expect(detail.attemptList.map((a) => [a.statusCode, a.responseBody])).toEqual([
      [500, 'try later'],
      [200, 'ok'],
    ]);
    for (const a of detail.attemptList) expect(a.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('a hanging receiver holds up neither sign-ups nor another tenant’s deliveries', async () => {
    // Attempts that would hang for 20 s: the instance ends them when it stops.
    const slow = await startApp(dialect, {
      webhooks: { ...FAST, attemptTimeoutMs: 20_000, maxInFlightPerEndpoint: 4 },
    });
    try {
      const stuck = await hooked({ answer: () => 'hang', on: slow });
      const healthy = await hooked({ on: slow });
      const started = Date.now();
      const stuckUsers = await Promise.all(
        [1, 2, 3, 4, 5, 6].map(() => signUp(stuck.tenant, email('stuck'), slow)),
      );
      await eventually(async () => (stuck.receiver.inFlight() === 4 ? true : undefined));
      const healthyUsers = await Promise.all(
        [1, 2, 3].map(() => signUp(healthy.tenant, email('healthy'), slow)),
      );
      // Sign-ups never wait for a delivery.
      expect(Date.now() - started).toBeLessThan(10_000);
      await eventually(async () =>
        healthy.receiver.ofType('user.created').length === healthyUsers.length ? true : undefined,
      );
      // Served while the stuck endpoint held four attempts open, and never more.
      expect(stuck.receiver.inFlight()).toBe(4);
      expect(stuck.receiver.received).toHaveLength(4);
      expect(stuckUsers).toHaveLength(6);
    } finally {
      const stopping = Date.now();
      await slow.dispose();
      // Stopping ends the hanging attempts instead of waiting them out.
      expect(Date.now() - stopping).toBeLessThan(5_000);
    }
  });

  it('an attempt without an answer within the timeout fails without a status code', async () => {
    const stuck = await hooked({ answer: () => 'hang' });
    await signUp(stuck.tenant);
    const [d] = await eventually(async () => {
      const list = await listDeliveries(
        app.ctx.database.db,
        stuck.tenant.tenant.id,
        stuck.endpoint.id,
        { limit: 10 },
      );
      return list[0]?.attempts ? list : undefined;
    });
    const detail = await getDelivery(app.ctx.database.db, stuck.tenant.tenant.id, d?.id ?? '');
    expect(detail.attemptList[0]).toMatchObject({ statusCode: null, responseBody: null });
    expect(detail.attemptList[0]?.error).toMatch(/no answer within 1\.5 s/);
    expect(detail.attemptList[0]?.durationMs).toBeGreaterThanOrEqual(1_400);
  });

  it('after a rotation both secrets sign during the grace period, then only the new one', async () => {
    const { receiver, tenant, endpoint, secrets } = await hooked();
    const old = secrets[0] as string;
    const rotated = await rotateEndpointSecret(deps(), tenant.tenant.id, endpoint.id, 60_000);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(old);
    expect(rotated.endpoint.previousSecretExpiresAt).not.toBeNull();
    secrets.splice(0, 1, rotated.secret);
    await signUp(tenant);
    const [during] = await eventually(async () =>
      receiver.received.length ? receiver.received : undefined,
    );
    expect(during?.signature.split(' ')).toHaveLength(2);
    expect(during?.verified).toBe(true); // with the new secret alone
    const { Webhook } = await import('standardwebhooks');
    const headers = (r: Received) => ({
      'webhook-id': r.id,
      'webhook-timestamp': r.timestamp,
      'webhook-signature': r.signature,
    });
    expect(() =>
      new Webhook(old).verify(during?.raw ?? '', headers(during as Received)),
    ).not.toThrow();

    // A rotation without grace: the old secret stops signing at once.
    const again = await rotateEndpointSecret(deps(), tenant.tenant.id, endpoint.id, 0);
    secrets.splice(0, 1, again.secret);
    await signUp(tenant);
    const after = await eventually(async () => receiver.received[1]);
    expect(after.signature.split(' ')).toHaveLength(1);
    expect(after.verified).toBe(true);
    expect(() => new Webhook(rotated.secret).verify(after.raw, headers(after))).toThrow();
  });

  it('a production tenant cannot target loopback, private, link-local or metadata addresses', async () => {
    const prod = await app.tenant({ environment: 'production' });
    for (const url of [
      'http://hooks.example.com/x',
      'https://127.0.0.1/x',
      'https://[::1]/x',
      'https://10.1.2.3/x',
      'https://192.168.0.10/x',
      'https://169.254.169.254/latest/meta-data',
      'https://[fd00:ec2::254]/',
      'https://[::ffff:127.0.0.1]/',
      'https://localhost/x',
      'https://metadata.google.internal/',
      'not a url',
      'ftp://example.com/',
    ]) {
      await expect(createEndpoint(deps(), prod.tenant, { url }), url).rejects.toMatchObject({
        code: 'validation_failed',
        errors: [expect.objectContaining({ path: '/url' })],
      });
    }
    await expect(
      createEndpoint(deps(), prod.tenant, {
        url: 'https://hooks.example.com/x',
        events: ['user.nope', 7],
      }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [
        expect.objectContaining({ path: '/events/0' }),
        expect.objectContaining({ path: '/events/1' }),
      ],
    });
    expect(await listEndpoints(app.ctx.database.db, prod.tenant.id)).toEqual([]);

    // Saved while its name looked public; refused when the attempt resolves it to loopback.
    const receiver = await startReceiver({});
    receivers.push(receiver);
    const port = new URL(receiver.url).port;
    const { endpoint } = await createEndpoint(deps(), prod.tenant, {
      url: `https://rebind.example:${port}/hooks`,
    });
    await signUp(prod);
    const [d] = await eventually(async () => {
      const list = await listDeliveries(app.ctx.database.db, prod.tenant.id, endpoint.id, {
        limit: 5,
      });
      return list[0]?.attempts ? list : undefined;
    });
    const detail = await getDelivery(app.ctx.database.db, prod.tenant.id, d?.id ?? '');
    expect(detail.attemptList[0]).toMatchObject({ statusCode: null });
    expect(detail.attemptList[0]?.error).toMatch(
      /refused: rebind\.example resolves to 127\.0\.0\.1/,
    );
    expect(receiver.received).toEqual([]);
  });

  it('follows no redirect, and keeps only the first 2 KiB of an answer', async () => {
    const target = await startReceiver({});
    receivers.push(target);
    const redirecting = await hooked({ answer: () => ({ status: 307, location: target.url }) });
    const chatty = await hooked({ answer: () => ({ status: 200, body: 'x'.repeat(10_000) }) });
    await signUp(redirecting.tenant);
    await signUp(chatty.tenant);
    const attemptsOf = async (h: typeof chatty) => {
      const list = await listDeliveries(app.ctx.database.db, h.tenant.tenant.id, h.endpoint.id, {
        limit: 5,
      });
      const first = list.find((d) => d.attempts > 0);
      return (
        first && (await getDelivery(app.ctx.database.db, h.tenant.tenant.id, first.id)).attemptList
      );
    };
    const redirected = await eventually(() => attemptsOf(redirecting));
    expect(redirected[0]?.statusCode).toBe(307);
    const long = await eventually(() => attemptsOf(chatty));
    expect(long[0]?.statusCode).toBe(200);
    expect(long[0]?.responseBody).toHaveLength(2048);
    expect(target.received).toEqual([]);
  });

  /** The delivery of `endpoint`'s first event, once `ready` says it is; undefined after `ms`. */
  async function deliveryWithin(
    tenant: TestTenant,
    endpointId: string,
    ms: number,
    ready: (status: string) => boolean,
  ) {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      const [d] = await listDeliveries(app.ctx.database.db, tenant.tenant.id, endpointId, {
        limit: 5,
      });
      if (d && ready(d.status)) return d;
      await new Promise((r) => setTimeout(r, 10));
    }
    return undefined;
  }

  /**
   * Two endpoints of one tenant, both holding their answer to one event until `gate` opens:
   * their outcomes come back together and are recorded in one batch.
   */
  async function twoHeld() {
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const answer = () => ({ status: 204, after: gate });
    const gone = await hooked({ answer });
    const kept = await hooked({ answer, tenant: gone.tenant });
    await signUp(gone.tenant);
    await eventually(async () =>
      gone.receiver.received.length === 1 && kept.receiver.received.length === 1 ? true : undefined,
    );
    return { gone, kept, open };
  }

  it('an endpoint deleted while its attempt is in flight: the rest of the batch is recorded once', async () => {
    const { gone, kept, open } = await twoHeld();
    await deleteEndpoint(app.ctx.database.db, gone.tenant.tenant.id, gone.endpoint.id);
    open();
    // Recorded at once, not sent again when the lease ends (3 s with these settings).
    const done = await deliveryWithin(kept.tenant, kept.endpoint.id, 2_000, (s) => s !== 'pending');
    expect(done).toMatchObject({ status: 'succeeded', attempts: 1 });
    const rows = await app.ctx.database.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('endpoint_id', '=', gone.endpoint.id)
      .execute();
    expect(rows).toEqual([]);
    await new Promise((r) => setTimeout(r, 3_200));
    expect(kept.receiver.received).toHaveLength(1);
    expect(gone.receiver.received).toHaveLength(1);
  });

  it.runIf(dialect === 'postgres')(
    'deleting an endpoint while its outcome is being recorded: neither waits for the other forever',
    async () => {
      const { gone, kept, open } = await twoHeld();
      const db = app.ctx.database.db;
      // Another transaction holds the endpoint's row: the deletion queues behind it first,
      // then the dispatcher's record of both outcomes. Once it ends, the deletion goes
      // first. Taking rows in different orders, the two would deadlock, and PostgreSQL
      // would end one of them with an error after a second.
      let deleted: Promise<unknown> = Promise.resolve();
      await db.transaction().execute(async (trx) => {
        await sql`select id from webhook_endpoints where id = ${gone.endpoint.id} for no key update`.execute(
          trx,
        );
        deleted = deleteEndpoint(db, gone.tenant.tenant.id, gone.endpoint.id).then(
          () => 'deleted',
          (error: unknown) => error,
        );
        await waitingOnLocks(db, 1);
        open();
        await waitingOnLocks(db, 2);
      });
      expect(await deleted).toBe('deleted');
      const done = await deliveryWithin(
        kept.tenant,
        kept.endpoint.id,
        2_000,
        (s) => s !== 'pending',
      );
      expect(done).toMatchObject({ status: 'succeeded', attempts: 1 });
      expect((await listEndpoints(db, gone.tenant.tenant.id)).map((e) => e.id)).toEqual([
        kept.endpoint.id,
      ]);
    },
  );

  it.runIf(dialect === 'postgres')(
    'changes made while their endpoint is being deleted commit, with no delivery for them',
    async () => {
      const db = app.ctx.database.db;
      const tenant = await app.tenant();
      const userId = await signUp(tenant);
      const { receiver, endpoint } = await hooked({ tenant });
      // A sign-up (its event written in one statement) and a change of name (its event's
      // data read first), each while another transaction deletes the endpoint.
      for (const change of [
        () =>
          postJson(app, '/v1/auth/sign-up', tenant.secretKey, {
            email: email('during'),
            password: PASSWORD,
          }),
        () => call(tenant, 'PATCH', `/v1/users/${userId}`, { name: 'Ada' }),
      ]) {
        const again = await createEndpoint(deps(), tenant.tenant, { url: receiver.url });
        let made: Promise<Response> = Promise.resolve(new Response());
        await db.transaction().execute(async (trx) => {
          await trx.deleteFrom('webhook_endpoints').where('id', '=', again.endpoint.id).execute();
          made = change();
          await waitingOnLocks(db, 1);
        });
        expect((await made).status).toBeLessThan(300);
      }
      const left = await db
        .selectFrom('webhook_deliveries')
        .select('endpoint_id')
        .where('tenant_id', '=', tenant.tenant.id)
        .execute();
      // Only the endpoint that was never deleted, once for each change.
      expect(left).toEqual([{ endpoint_id: endpoint.id }, { endpoint_id: endpoint.id }]);
    },
  );

  it.runIf(dialect === 'postgres')(
    'resending a delivery while its endpoint is being deleted: not found, nothing written',
    async () => {
      const db = app.ctx.database.db;
      const { tenant, endpoint } = await hooked();
      await signUp(tenant);
      const sent = await deliveryWithin(tenant, endpoint.id, 5_000, (s) => s === 'succeeded');
      let resent: Promise<unknown> = Promise.resolve();
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('webhook_endpoints').where('id', '=', endpoint.id).execute();
        resent = resendDelivery(db, tenant.tenant.id, sent?.id ?? '').then(
          () => 'resent',
          (error: unknown) => error,
        );
        await waitingOnLocks(db, 1);
      });
      expect(await resent).toMatchObject({ code: 'not_found' });
      const left = await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('tenant_id', '=', tenant.tenant.id)
        .execute();
      expect(left).toEqual([]);
    },
  );

  it('marks a delivery failed after its last retry and disables an endpoint that only fails', async () => {
    const { receiver, tenant, endpoint } = await hooked({ answer: () => ({ status: 503 }) });
    await signUp(tenant);
    const failed = await eventually(async () => {
      const [d] = await listDeliveries(app.ctx.database.db, tenant.tenant.id, endpoint.id, {
        limit: 5,
      });
      return d?.status === 'failed' ? d : undefined;
    });
    expect(failed.attempts).toBe(FAST.retryDelaysMs.length + 1);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(1);
    const [now] = await listEndpoints(app.ctx.database.db, tenant.tenant.id);
    expect(now).toMatchObject({ disabled: true, disabledReason: 'failing' });
    const audit = await queryAudit(app.ctx.database.db, {
      tenantId: tenant.tenant.id,
      kind: 'webhook.endpoint_disabled',
      limit: 5,
    });
    expect(audit).toHaveLength(1);
    // Disabled: new changes write no delivery for it.
    await signUp(tenant);
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.received).toHaveLength(FAST.retryDelaysMs.length + 1);
  });
});

describe.runIf(HAVE_POSTGRES)('webhooks with two instances on one PostgreSQL database', () => {
  let one: TestApp;
  let two: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    one = await startApp('postgres', { webhooks: { ...FAST, retryDelaysMs: [100, 100, 100] } });
    const url = (one.ctx.config as { databaseUrl: string }).databaseUrl;
    two = await startApp('postgres', {
      databaseUrl: url,
      webhooks: { ...FAST, retryDelaysMs: [100, 100, 100] },
    });
  });
  afterAll(async () => {
    await receiver?.close();
    await two?.dispose();
    await one?.dispose();
  });

  it('delivers each event, never with two attempts of one delivery in flight at once', async () => {
    const tenant = await one.tenant();
    const seen = new Set<string>();
    const secrets: string[] = [];
    receiver = await startReceiver({
      secrets: () => secrets,
      // Every first attempt fails, so each event is claimed twice; both instances look.
      answer: (r) => {
        if (seen.has(r.id)) return { status: 204 };
        seen.add(r.id);
        return { status: 500 };
      },
    });
    const { secret } = await createEndpoint(
      { db: one.ctx.database.db, box: one.ctx.box },
      tenant.tenant,
      {
        url: receiver.url,
        events: ['user.created'],
      },
    );
    secrets.push(secret);
    const users: string[] = [];
    for (let i = 0; i < 30; i++) {
      const app = i % 2 ? two : one;
      const res = await postJson(app, '/v1/auth/sign-up', tenant.secretKey, {
        email: email('two'),
        password: PASSWORD,
      });
      users.push((await json(res)).userId);
    }
    await eventually(async () =>
      seen.size === users.length && receiver.received.length >= 2 * users.length ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.maxInFlightPerId()).toBe(1);
    // Exactly two attempts per event (the failed one and the success): no instance sent one twice.
    expect(receiver.received).toHaveLength(2 * users.length);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    expect(new Set(receiver.received.map((r) => r.body.data.id))).toEqual(new Set(users));
  });
});

/** Waits until `count` sessions of this database wait for a row lock on a webhooks table. */
async function waitingOnLocks(db: TestApp['ctx']['database']['db'], count: number) {
  await eventually(async () => {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'
        and query ilike '%webhook_%'`.execute(db);
    return (rows[0]?.n ?? 0) >= count ? true : undefined;
  });
}
