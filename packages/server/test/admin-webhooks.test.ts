/**
 * The admin "Webhooks" section (docs/design.md §12.2, §17) over real HTTP on every
 * database, with a real receiver on loopback that verifies each delivery with the
 * `standardwebhooks` package: an endpoint is added (its secret shown once, kept sealed),
 * a REST sign-up is delivered and its attempt shown, a receiver answering 500 shows the
 * failed attempt and (with no retries left) the endpoint disabled because it only failed,
 * announced on the tenant's page with "Enable"; "Resend" sends the same webhook-id again;
 * edit, rotate (the old secret signing beside the new one), disable and delete; refused
 * input answers the form again as typed with every error and stores nothing; CSRF,
 * re-authentication and tenant-bound access hold; each change is audited without a secret.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, type AdminClient, signedInAdmin } from './admin-support.js';
import {
  DIALECTS,
  email,
  eventually,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const SECRET_IN_PAGE = /<code id="new-secret">(whsec_[A-Za-z0-9+/]{43}=)<\/code>/;
const ENDPOINT_ID = /action="\/admin\/tenants\/[^/]+\/webhooks\/([0-9a-f-]{36})\/rotate-secret"/;

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback: keeps what arrives, answers `status` (and `reply`). */
class Receiver {
  readonly got: Received[] = [];
  status = 200;
  reply = 'ok';
  #server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(this.status, { 'content-type': 'text/plain' }).end(this.reply);
    });
  });
  url = '';

  async start() {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hooks`;
  }
  close() {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(resolve));
  }
  /** The deliveries of one event type, verified with `secret` (throws if one is not). */
  verified(secret: string, type: string) {
    return this.got
      .filter((r) => JSON.parse(r.body).type === type)
      .map((r) => {
        new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
        return r;
      });
  }
}

for (const dialect of DIALECTS) {
  describe(`admin Webhooks (${dialect})`, () => {
    let app: TestApp;
    let dev: TestTenant;
    let prod: TestTenant;
    let root: AdminClient;
    let bound: AdminClient;
    const receiver = new Receiver();
    const rootEmail = email('hooks-root');

    beforeAll(async () => {
      await receiver.start();
      // No retries: an attempt that fails fails its delivery (the retry schedule is
      // webhooks.test.ts's); a fast poll keeps the test short.
      // The test's DNS points hooks.example.com at loopback: a production tenant's
      // attempts there are refused at connection time.
      app = await startApp(dialect, {
        webhooks: {
          retryDelaysMs: [],
          pollMs: 20,
          resolve: async () => [{ address: '127.0.0.1', family: 4 }],
        },
      });
      [dev, prod] = [await app.tenant(), await app.tenant({ environment: 'production' })];
      root = await signedInAdmin(app, rootEmail, { superuser: true });
      bound = await signedInAdmin(app, email('hooks-bound'), { tenantIds: [dev.tenant.id] });
    }, 60_000);
    afterAll(async () => {
      await app?.dispose();
      await receiver.close();
    });

    const db = () => app.ctx.database.db;
    const hooks = (tenant: TestTenant) => `/admin/tenants/${tenant.tenant.id}/webhooks`;
    const endpointRows = (tenantId: string) =>
      db()
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .orderBy('id')
        .execute();
    const endpointRow = (id: string) =>
      db().selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
    const audit = (tenantId: string, kind?: string) => {
      let q = db().selectFrom('audit_events').selectAll().where('tenant_id', '=', tenantId);
      if (kind) q = q.where('kind', '=', kind);
      return q.orderBy('created_at').execute();
    };
    const signUp = async (tenant: TestTenant) => {
      const address = email('hooked');
      const res = await postJson(app, '/v1/auth/sign-up', tenant.secretKey, {
        email: address,
        password: 'correct horse battery staple',
      });
      expect(res.status).toBe(201);
      return address;
    };

    /** An endpoint added through the page: its id, its secret and the answer. */
    async function added(tenant: TestTenant, fields: Record<string, string> = {}) {
      await root.get(hooks(tenant));
      const made = await root.post(hooks(tenant), { url: receiver.url, ...fields });
      expect(made.status, made.html.slice(0, 2000)).toBe(201);
      const id = ENDPOINT_ID.exec(made.html)?.[1] ?? '';
      return { id, secret: SECRET_IN_PAGE.exec(made.html)?.[1] ?? '', page: made };
    }

    it('Webhooks is in the tenant navigation; adding an endpoint shows its secret once, kept sealed, audited without it', async () => {
      const list = await root.get(hooks(dev));
      expect(list.status).toBe(200);
      expect(list.html).toContain('<h1>Webhooks</h1>');
      expect(list.html).toContain(`<a href="${hooks(dev)}" aria-current="page">Webhooks</a>`);
      expect(list.html).toContain('No endpoints yet: add one below.');
      expect(list.html).toContain('>Endpoint URL</label>');
      for (const type of ['user.created', 'session.ended', 'user.factor_removed'])
        expect(list.html).toContain(`name="event_${type}"`);
      expect((await root.get(`/admin/tenants/${dev.tenant.id}/apps`)).html).toContain(
        `<a href="${hooks(dev)}">Webhooks</a>`,
      );

      const { id, secret, page } = await added(dev, { 'event_user.created': 'on' });
      expect(secret).toMatch(/^whsec_/);
      expect(page.html).toContain('it is shown only this once');
      expect(page.html).toContain('data-copy="new-secret"');
      expect(page.res.headers.get('cache-control')).toBe('no-store');
      const row = await endpointRow(id);
      expect(row).toMatchObject({ tenant_id: dev.tenant.id, url: receiver.url });
      expect(JSON.parse(row?.events ?? '')).toEqual(['user.created']);
      expect(JSON.stringify(row)).not.toContain(secret.slice(6));

      // Never again: not on the list, not on the endpoint's page.
      const after = await root.get(hooks(dev));
      expect(after.html).not.toContain(secret);
      expect(after.html).toContain(
        `<a href="${hooks(dev)}/${id}"><code>${receiver.url}</code></a>`,
      );
      expect(after.html).toContain('<code class="kind">user.created</code>');
      expect(after.html).toContain('<span class="badge ok">active</span>');
      const shown = await root.get(`${hooks(dev)}/${id}`);
      expect(shown.status).toBe(200);
      expect(shown.html).not.toContain(secret);
      expect(shown.html).not.toMatch(SECRET_IN_PAGE);
      expect(shown.html).toContain('No deliveries yet');

      const [entry, ...more] = await audit(dev.tenant.id, 'webhook.endpoint_created');
      expect(more).toEqual([]);
      expect(entry?.actor).toBe(rootEmail);
      expect(JSON.parse(entry?.detail ?? '')).toEqual({
        endpointId: id,
        url: receiver.url,
        events: ['user.created'],
      });
      expect(JSON.stringify(await audit(dev.tenant.id))).not.toContain(secret.slice(6));
      await root.post(`${hooks(dev)}/${id}/delete`, {});
    });

    it('a sign-up is delivered and shown with its attempt; a 500 fails it and disables the endpoint, announced with Enable; Resend sends the same webhook-id', async () => {
      const { id, secret } = await added(dev);
      const path = `${hooks(dev)}/${id}`;
      expect((await root.get(hooks(dev))).html).toContain('all events');

      const first = await signUp(dev);
      const [ok] = await eventually(async () => {
        const got = receiver.verified(secret, 'user.created');
        return got.some((r) => r.body.includes(first)) ? got : undefined;
      });
      const firstId = ok?.headers['webhook-id'] as string;
      expect(firstId).toMatch(/^msg_/);
      const page = await eventually(async () => {
        const p = await root.get(path);
        return p.html.includes('badge ok">succeeded') ? p : undefined;
      });
      expect(page.html).toContain('<code class="kind">user.created</code>');
      expect(page.html).toContain(`<code>${firstId}</code>`);
      expect(page.html).toContain('<span class="badge ok">200</span>');
      expect(page.html).toMatch(/<td data-label="Response time">\d+ ms<\/td>/);
      expect(page.html).toContain('<pre class="body">ok</pre>');
      // The body sent, under "Body sent".
      expect(page.html).toMatch(new RegExp(`<summary>Body sent</summary><pre>[^<]*${first}`));
      expect(page.html).not.toContain(secret);

      // The receiver breaks: the next event fails, and (no retries left, nothing received
      // since it was made) the endpoint is disabled because it only failed.
      receiver.status = 500;
      receiver.reply = 'receiver is down';
      const second = await signUp(dev);
      await eventually(async () =>
        (await endpointRow(id))?.disabled_reason === 'failing' ? true : undefined,
      );
      const secondId = receiver.got.find((r) => r.body.includes(second))?.headers['webhook-id'];
      const failed = await root.get(path);
      expect(failed.html).toContain('<span class="badge bad">failed</span>');
      expect(failed.html).toContain('<span class="badge bad">500</span>');
      expect(failed.html).toContain('<pre class="body">receiver is down</pre>');
      expect(failed.html).toContain('disabled: it only failed');
      // Newest first.
      expect(failed.html.indexOf(`<code>${secondId}</code>`)).toBeGreaterThan(0);
      expect(failed.html.indexOf(`<code>${secondId}</code>`)).toBeLessThan(
        failed.html.indexOf(`<code>${firstId}</code>`),
      );
      for (const notice of [
        await root.get(`/admin/tenants/${dev.tenant.id}`),
        await root.get(hooks(dev)),
      ]) {
        expect(notice.html).toContain('A webhook endpoint was disabled');
        expect(notice.html).toContain(`action="${path}/enable"`);
      }
      expect((await root.get(`/admin/tenants/${prod.tenant.id}`)).html).not.toContain(
        'webhook endpoint was disabled',
      );

      // Fixed, enabled again from the notice, and the failed delivery resent.
      receiver.status = 200;
      receiver.reply = 'ok';
      await root.get(`/admin/tenants/${dev.tenant.id}`);
      const enabled = await root.post(`${path}/enable`, {});
      expect(enabled.status).toBe(303);
      expect(enabled.location).toBe(`${path}?done=endpoint-enabled`);
      expect((await root.get(`/admin/tenants/${dev.tenant.id}`)).html).not.toContain(
        'webhook endpoint was disabled',
      );
      const failedDelivery = await db()
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('endpoint_id', '=', id)
        .where('status', '=', 'failed')
        .executeTakeFirstOrThrow();
      const before = receiver.got.length;
      const resent = await root.post(`${path}/deliveries/${failedDelivery.id}/resend`, {});
      expect(resent.status).toBe(303);
      expect(resent.location).toBe(`${path}?done=delivery-resent`);
      const again = await eventually(async () =>
        receiver.got.slice(before).find((r) => r.headers['webhook-id'] === secondId),
      );
      new Webhook(secret).verify(again.body, again.headers as Record<string, string>);
      expect(JSON.parse(again.body).data.email).toBe(second);
      const shown = await eventually(async () => {
        const p = await root.get(`${path}?done=delivery-resent`);
        return (p.html.match(/badge ok">succeeded/g) ?? []).length === 2 ? p : undefined;
      });
      expect(shown.html).toContain('The event is sent again, with the same webhook-id');
      expect(shown.html.match(new RegExp(`<code>${secondId}</code>`, 'g'))).toHaveLength(2);

      const [entry] = await audit(dev.tenant.id, 'webhook.delivery_resent');
      expect(entry?.actor).toBe(rootEmail);
      expect(JSON.parse(entry?.detail ?? '')).toMatchObject({
        endpointId: id,
        type: 'user.created',
        messageId: secondId,
        resentFrom: failedDelivery.id,
      });
      const kinds = (await audit(dev.tenant.id)).map((e) => e.kind);
      expect(kinds).toEqual(
        expect.arrayContaining(['webhook.endpoint_disabled', 'webhook.endpoint_enabled']),
      );
      await root.post(`${path}/delete`, {});
    });

    it('refused input (a bad URL, an unknown event, http://127.0.0.1 on a production tenant) answers the form as typed and stores nothing', async () => {
      const audited = [(await audit(dev.tenant.id)).length, (await audit(prod.tenant.id)).length];
      const rows = [await endpointRows(dev.tenant.id), await endpointRows(prod.tenant.id)];
      await root.get(hooks(dev));
      const bad = await root.post(hooks(dev), {
        url: 'not a url',
        'event_user.deleted': 'on',
        'event_user.exploded': 'on',
      });
      expect(bad.status).toBe(422);
      expect(bad.html).toContain('Please correct the following:');
      expect(bad.html).toContain('<li>url must be an absolute http or https URL</li>');
      expect(bad.html).toContain('user.exploded is not an event');
      expect(bad.html).toContain('value="not a url"');
      expect(bad.html).toMatch(/id="new-url"[^>]*aria-invalid="true"/);
      expect(bad.html).toMatch(/name="event_user.deleted" value="on" checked/);
      expect(bad.html).not.toMatch(SECRET_IN_PAGE);

      await root.get(hooks(prod));
      for (const url of ['http://127.0.0.1:9/hooks', 'https://127.0.0.1/hooks']) {
        const refused = await root.post(hooks(prod), { url });
        expect(refused.status, url).toBe(422);
        expect(refused.html).toContain(`value="${url}"`);
        expect(refused.html).toMatch(
          /a production endpoint must (use https|not target a loopback)/,
        );
      }
      // The edit form refuses the same way and keeps what was typed.
      const { id } = await added(dev);
      const path = `${hooks(dev)}/${id}`;
      const before = await endpointRow(id);
      const edit = await root.post(path, { url: 'ftp://example.com/x', 'event_user.nope': 'on' });
      expect(edit.status).toBe(422);
      expect(edit.html).toContain('value="ftp://example.com/x"');
      expect(edit.html).toContain('user.nope is not an event');
      expect(await endpointRow(id)).toEqual(before);
      await root.post(`${path}/delete`, {});

      expect([await endpointRows(dev.tenant.id), await endpointRows(prod.tenant.id)]).toEqual(rows);
      // Only the added-and-deleted endpoint's two entries.
      expect([(await audit(dev.tenant.id)).length, (await audit(prod.tenant.id)).length]).toEqual([
        (audited[0] as number) + 2,
        audited[1],
      ]);
    });

    it('edits the address and events, disables and enables, audited with what changed', async () => {
      const { id } = await added(dev);
      const path = `${hooks(dev)}/${id}`;
      await root.get(path);
      const other = receiver.url.replace('/hooks', '/other');
      const saved = await root.post(path, {
        url: other,
        'event_session.created': 'on',
        'event_session.ended': 'on',
      });
      expect(saved.status).toBe(303);
      expect(saved.location).toBe(`${path}?done=saved`);
      const row = await endpointRow(id);
      expect(row?.url).toBe(other);
      expect(JSON.parse(row?.events ?? '')).toEqual(['session.created', 'session.ended']);
      const [updated] = await audit(dev.tenant.id, 'webhook.endpoint_updated');
      expect(JSON.parse(updated?.detail ?? '')).toEqual({
        endpointId: id,
        url: { from: receiver.url, to: other },
        events: { from: [], to: ['session.created', 'session.ended'] },
      });

      const disabled = await root.post(`${path}/disable`, {});
      expect(disabled.location).toBe(`${path}?done=endpoint-disabled`);
      expect(await endpointRow(id)).toMatchObject({ disabled_reason: 'operator' });
      const page = await root.get(disabled.location as string);
      expect(page.html).toContain('The endpoint is disabled');
      expect(page.html).toContain('<span class="badge">disabled by an operator</span>');
      expect(page.html).toContain(`action="${path}/enable"`);
      // An operator's choice is not announced as a failure.
      expect((await root.get(hooks(dev))).html).not.toContain('webhook endpoint was disabled');
      await root.post(`${path}/enable`, {});
      expect(await endpointRow(id)).toMatchObject({ disabled_at: null, disabled_reason: null });
      // (The dispatcher's entry of the failing endpoint above has no actor.)
      const [off] = (await audit(dev.tenant.id, 'webhook.endpoint_disabled')).filter(
        (e) => e.actor !== null,
      );
      expect(off?.actor).toBe(rootEmail);
      expect(JSON.parse(off?.detail ?? '')).toEqual({
        endpointId: id,
        url: other,
        reason: 'operator',
      });
      await root.post(`${path}/delete`, {});
    });

    it('rotates the secret: the new one shown once, the old one signing beside it until the time shown', async () => {
      const { id, secret } = await added(dev);
      const path = `${hooks(dev)}/${id}`;
      await root.get(path);
      const badGrace = await root.post(`${path}/rotate-secret`, { grace: '5y' });
      expect(badGrace.status).toBe(422);
      expect(badGrace.html).toContain('nothing was changed');

      const rotated = await root.post(`${path}/rotate-secret`, { grace: '1h' });
      expect(rotated.status).toBe(200);
      const fresh = SECRET_IN_PAGE.exec(rotated.html)?.[1] ?? '';
      expect(fresh).toMatch(/^whsec_/);
      expect(fresh).not.toBe(secret);
      const until = (await endpointRow(id))?.previous_secret_expires_at as number;
      expect(until).toBeGreaterThan(Date.now() + 59 * 60_000);
      expect(rotated.html).toContain('every delivery is signed with the old secret too');
      expect(rotated.html).toContain(`datetime="${new Date(until).toISOString()}"`);
      expect((await root.get(path)).html).not.toContain(fresh);

      // Both sign the next delivery.
      const address = await signUp(dev);
      const got = await eventually(async () =>
        receiver.got.find(
          (r) => r.body.includes(address) && JSON.parse(r.body).type === 'user.created',
        ),
      );
      for (const s of [secret, fresh])
        new Webhook(s).verify(got.body, got.headers as Record<string, string>);

      const [entry] = await audit(dev.tenant.id, 'webhook.secret_rotated');
      expect(entry?.actor).toBe(rootEmail);
      expect(JSON.parse(entry?.detail ?? '')).toEqual({
        endpointId: id,
        url: receiver.url,
        oldSecretUntil: new Date(until).toISOString(),
      });
      for (const s of [secret, fresh])
        expect(JSON.stringify(await audit(dev.tenant.id))).not.toContain(s.slice(6));
      await root.post(`${path}/delete`, {});
    });

    it('a secret is shown only after the password again when the sign-in is older than 10 minutes', async () => {
      const { id } = await added(dev);
      const path = `${hooks(dev)}/${id}`;
      const before = await endpointRows(dev.tenant.id);
      await db()
        .updateTable('admin_sessions')
        .set({ authenticated_at: Date.now() - 11 * 60_000 })
        .execute();
      expect((await root.get(path)).html).toContain('Your password');
      const rotate = await root.post(`${path}/rotate-secret`, { grace: '24h' });
      expect(rotate.status).toBe(403);
      expect(rotate.html).toContain('Type your password again to do this.');
      const add = await root.post(hooks(dev), {
        url: `${receiver.url}?x=1`,
        reauth_password: 'wrong password',
      });
      expect(add.status).toBe(403);
      expect(add.html).toContain('That password is wrong; nothing was done.');
      expect(add.html).toContain(`value="${receiver.url}?x=1"`);
      expect(await endpointRows(dev.tenant.id)).toEqual(before);
      const right = await root.post(`${path}/rotate-secret`, {
        grace: '24h',
        reauth_password: ADMIN_PASSWORD,
      });
      expect(right.status).toBe(200);
      expect(right.html).toMatch(SECRET_IN_PAGE);
      await root.post(`${path}/delete`, {});
    });

    it('deletes an endpoint after a confirmation page, with its deliveries, audited', async () => {
      const { id } = await added(dev);
      const path = `${hooks(dev)}/${id}`;
      const address = await signUp(dev);
      await eventually(async () => receiver.got.find((r) => r.body.includes(address)));
      const confirm = await root.get(`${path}/delete`);
      expect(confirm.status).toBe(200);
      expect(confirm.html).toContain('<h1>Delete this endpoint?</h1>');
      expect(confirm.html).toContain(`<code>${receiver.url}</code> gets no more events`);
      expect(await endpointRow(id)).toBeDefined();
      const deleted = await root.post(`${path}/delete`, {});
      expect(deleted.status).toBe(303);
      expect(deleted.location).toBe(`${hooks(dev)}?done=endpoint-deleted`);
      expect(await endpointRow(id)).toBeUndefined();
      const left = await db()
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('endpoint_id', '=', id)
        .execute();
      expect(left).toEqual([]);
      expect((await root.get(deleted.location as string)).html).toContain(
        'The endpoint is deleted',
      );
      const [entry] = (await audit(dev.tenant.id, 'webhook.endpoint_deleted')).filter(
        (e) => JSON.parse(e.detail ?? '{}').endpointId === id,
      );
      expect(entry?.actor).toBe(rootEmail);
      expect((await root.get(path)).status).toBe(404);
      expect((await root.post(`${path}/delete`, {})).status).toBe(404);
    });

    it('every change needs the CSRF token; another tenant and its endpoints answer 404 to a tenant-bound admin', async () => {
      await root.get(hooks(prod));
      const theirs = await root.post(hooks(prod), { url: 'https://hooks.example.com/in' });
      expect(theirs.status).toBe(201);
      const prodId = ENDPOINT_ID.exec(theirs.html)?.[1] ?? '';
      const { id: devId } = await added(dev);
      await signUp(prod);
      // Refused at connection (loopback for a production tenant): failed, and the endpoint
      // disabled; settled before the counts below are taken.
      const prodDelivery = await eventually(() =>
        db()
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('endpoint_id', '=', prodId)
          .where('status', '=', 'failed')
          .executeTakeFirst(),
      );
      await eventually(async () =>
        (await endpointRow(prodId))?.disabled_reason === 'failing' ? true : undefined,
      );
      const rows = [await endpointRows(dev.tenant.id), await endpointRows(prod.tenant.id)];
      const audited = [(await audit(dev.tenant.id)).length, (await audit(prod.tenant.id)).length];
      await root.get(hooks(dev));
      const base = `${hooks(dev)}/${devId}`;
      for (const [path, fields] of [
        [hooks(dev), { url: 'https://forged.example.com/' }],
        [base, { url: 'https://forged.example.com/' }],
        [`${base}/disable`, {}],
        [`${base}/rotate-secret`, { grace: '0' }],
        [`${base}/delete`, {}],
      ] as const) {
        expect((await root.post(path, { ...fields, _csrf: '' })).status, path).toBe(403);
        expect((await root.post(path, { ...fields, _csrf: 'x'.repeat(40) })).status, path).toBe(
          403,
        );
      }

      const their = `${hooks(prod)}/${prodId}`;
      expect((await bound.get(hooks(prod))).status).toBe(404);
      expect((await bound.get(their)).status).toBe(404);
      expect((await bound.get(`${their}/delete`)).status).toBe(404);
      // Their endpoint through our tenant's path is not found either.
      expect((await bound.get(`${hooks(dev)}/${prodId}`)).status).toBe(404);
      await bound.get(hooks(dev));
      for (const [path, fields] of [
        [hooks(prod), { url: 'https://x.example.com/' }],
        [their, { url: 'https://hijacked.example.com/' }],
        [`${their}/disable`, {}],
        [`${their}/rotate-secret`, { grace: '0', reauth_password: ADMIN_PASSWORD }],
        [`${their}/delete`, {}],
        [`${their}/deliveries/${prodDelivery.id}/resend`, {}],
        [`${hooks(dev)}/${prodId}/delete`, {}],
        // Their delivery through our endpoint's path.
        [`${base}/deliveries/${prodDelivery.id}/resend`, {}],
      ] as const)
        expect((await bound.post(path, fields)).status, path).toBe(404);
      expect((await bound.get(hooks(dev))).status).toBe(200);
      expect((await bound.get(base)).status).toBe(200);

      expect([await endpointRows(dev.tenant.id), await endpointRows(prod.tenant.id)]).toEqual(rows);
      expect([(await audit(dev.tenant.id)).length, (await audit(prod.tenant.id)).length]).toEqual(
        audited,
      );
      const deliveries = await db()
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('endpoint_id', '=', prodId)
        .execute();
      expect(deliveries).toHaveLength(1);
    });
  });
}
