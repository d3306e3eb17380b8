/**
 * The OpenAPI document as tools read it: Redocly's recommended rules find no error, a
 * client generated from it (openapi-typescript types, openapi-fetch) signs a user up and
 * redeems a hosted sign-in's PKCE code with no hand-written request shapes, and its
 * `webhooks` describe every event as Latchkey really writes it.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import createClient from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint, EVENT_TYPES } from '../../server/src/modules/webhooks/index.js';
import type { TestApp, TestTenant } from '../../server/test/support.js';
import type { paths } from '../generated/latchkey-api.js';
import { PASSWORD, signIn, startLatchkey } from './latchkey.js';

const GENERATED = new URL('../generated/latchkey-api.d.ts', import.meta.url);
const REDOCLY = new URL('../../../node_modules/.bin/redocly', import.meta.url).pathname;
const ORIGIN = 'http://localhost:5173';

let app: TestApp;
let t: TestTenant;
let document: Record<string, unknown>;

beforeAll(async () => {
  app = await startLatchkey();
  t = await app.tenant({ allowedOrigins: [ORIGIN] });
  document = (await (await app.request('/v1/openapi.json')).json()) as Record<string, unknown>;
});
afterAll(() => app.dispose());

describe('the OpenAPI document', () => {
  it('passes `redocly lint` with the recommended rules, without errors', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'latchkey-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      await writeFile(file, JSON.stringify(document));
      // Offline: no telemetry, no update check.
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [REDOCLY, 'lint', '--extends', 'recommended', '--format', 'json', file],
        {
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        },
      ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
      const report = JSON.parse(stdout) as {
        totals: { errors: number };
        problems: { ruleId: string; severity: string; message: string }[];
      };
      expect(report.problems.filter((p) => p.severity === 'error')).toEqual([]);
      expect(report.totals.errors).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('generates the committed client types (regenerate: LATCHKEY_UPDATE_GENERATED=1)', async () => {
    const generated = astToString(await openapiTS(document as never));
    if (process.env.LATCHKEY_UPDATE_GENERATED === '1') await writeFile(GENERATED, generated);
    expect(await readFile(GENERATED, 'utf8')).toBe(generated);
  });
});

describe('the webhooks of the OpenAPI document (docs/design.md §17)', () => {
  type Operation = {
    requestBody: { content: Record<string, { schema: unknown }> };
    parameters: { name: string; in: string; required: boolean }[];
    responses: Record<string, unknown>;
  };
  const webhooks = () => document.webhooks as Record<string, { post: Operation }>;

  it('lists every event, each a signed POST of {type, timestamp, data} answered 2xx', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(webhooks()).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const post = webhooks()[type]?.post as Operation;
      expect(post.parameters.map((p) => [p.name, p.in, p.required])).toEqual([
        ['webhook-id', 'header', true],
        ['webhook-timestamp', 'header', true],
        ['webhook-signature', 'header', true],
      ]);
      expect(post.requestBody.content['application/json']?.schema).toMatchObject({
        required: ['type', 'timestamp', 'data'],
        properties: { type: { const: type } },
      });
      expect(Object.keys(post.responses).every((code) => /^2\d\d$/.test(code))).toBe(true);
    }
  });

  it('describes the bodies Latchkey writes: the events of a user, from sign-up to deletion, validate against their schemas', async () => {
    const tenant = await app.tenant();
    await createEndpoint({ db: app.ctx.database.db, box: app.ctx.box }, tenant.tenant, {
      url: 'http://127.0.0.1:9/hooks',
    });
    const tokens = await signIn(app, tenant);
    const userId = tokens.user.id;
    const patched = await app.request(`/v1/users/${userId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${tenant.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ada', metadata: { plan: 'gold' } }),
    });
    expect(patched.status).toBe(200);
    const ended = await app.request(`/v1/users/${userId}/sessions`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${tenant.secretKey}` },
    });
    expect(ended.status).toBeLessThan(300);
    const removed = await app.request(`/v1/users/${userId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${tenant.secretKey}` },
    });
    expect(removed.status).toBeLessThan(300);

    const bodies = await app.ctx.database.db
      .selectFrom('webhook_messages')
      .select(['type', 'body'])
      .where('tenant_id', '=', tenant.tenant.id)
      .orderBy('created_at')
      .execute();
    expect(new Set(bodies.map((b) => b.type))).toEqual(
      new Set(['user.created', 'session.created', 'user.updated', 'user.deleted', 'session.ended']),
    );
    // The document as a JSON Schema 2020-12 resource: each event's schema is a pointer into it.
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ ...document, $id: 'latchkey-openapi' });
    for (const { type, body } of bodies) {
      const validate = ajv.getSchema(
        `latchkey-openapi#/webhooks/${type}/post/requestBody/content/application~1json/schema`,
      );
      if (!validate) throw new Error(`no schema for ${type}`);
      const valid = validate(JSON.parse(body));
      expect([type, validate.errors ?? []]).toEqual([type, []]);
      expect(valid).toBe(true);
    }
    // And the schemas say no: a body short of the User's fields does not pass.
    const created = ajv.getSchema(
      'latchkey-openapi#/webhooks/user.created/post/requestBody/content/application~1json/schema',
    );
    const body = JSON.parse(bodies[0]?.body ?? '{}');
    expect(created?.({ ...body, data: { id: body.data.id } })).toBe(false);
    expect(created?.({ ...body, timestamp: 'yesterday' })).toBe(false);
  });
});

/** The hosted page's PKCE sign-in, as a browser does it; returns the redirect fragment. */
async function hostedSignIn(email: string, verifier: string): Promise<URLSearchParams> {
  const q = new URLSearchParams({
    pk: t.publishableKey,
    redirect_url: `${ORIGIN}/callback`,
    state: 'interop',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const page = await app.request(`/sign-in?${q}`);
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  const res = await app.request(`/sign-in?${q}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ _csrf: csrf, email, password: PASSWORD }).toString(),
  });
  return new URLSearchParams(new URL(res.headers.get('location') ?? '').hash.slice(1));
}

describe('a client generated with openapi-typescript and openapi-fetch', () => {
  it('signs a user up with the secret key and redeems a PKCE code with the publishable key', async () => {
    const api = createClient<paths>({ baseUrl: app.url });
    const email = `generated-${randomBytes(4).toString('hex')}@example.com`;
    const signUp = await api.POST('/v1/auth/sign-up', {
      headers: { authorization: `Bearer ${t.secretKey}` },
      body: { email, password: PASSWORD },
    });
    expect(signUp.response.status).toBe(201);
    expect(signUp.data?.email).toBe(email);

    const again = await api.POST('/v1/auth/sign-up', {
      headers: { authorization: `Bearer ${t.secretKey}` },
      body: { email, password: PASSWORD },
    });
    expect(again.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(again.error?.code).toBe('email_taken');

    const verifier = randomBytes(32).toString('base64url');
    const fragment = await hostedSignIn(email, verifier);
    const code = fragment.get('code') ?? '';
    expect(code).not.toBe('');
    const tokens = await api.POST('/v1/client/token', {
      // A browser adds Origin itself: the page the code was sent to.
      headers: { 'X-Latchkey-Publishable-Key': t.publishableKey, origin: ORIGIN },
      body: { grant_type: 'authorization_code', code, code_verifier: verifier },
    });
    expect(tokens.error).toBeUndefined();
    expect(tokens.response.status).toBe(200);
    expect(tokens.data?.refreshToken).toMatch(/^lkr_/);
    expect(tokens.data?.tokenType).toBe('Bearer');
  });
});
