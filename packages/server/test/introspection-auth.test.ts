import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DIALECTS,
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const PASSWORD = 'correct horse battery staple';

/** RFC 7617 with RFC 6749 section 2.3.1's form-urlencoding of both parts. */
function basic(clientId: string, secret: string): string {
  const encode = (v: string) => encodeURIComponent(v).replaceAll('%20', '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}

describe.each(DIALECTS)('introspection client authentication (RFC 7662) on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;
  let other: TestTenant;
  let token: string;

  beforeAll(async () => {
    app = await startApp(dialect);
    [t, other] = await Promise.all([app.tenant(), app.tenant()]);
    const address = email();
    expect(
      (await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD }))
        .status,
    ).toBe(201);
    const signedIn = await postJson(app, '/v1/auth/sign-in', t.secretKey, {
      email: address,
      password: PASSWORD,
    });
    token = (await json(signedIn)).accessToken;
  });
  afterAll(() => app.dispose());

  function introspect(headers: Record<string, string>, form: Record<string, string>) {
    return app.request('/api/auth/introspect', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    });
  }

  async function expectUnauthorized(res: Response, challenge: string) {
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('www-authenticate')).toBe(challenge);
    const text = await res.text();
    expect(JSON.parse(text).code).toBe('unauthorized');
    expect(text).not.toContain(t.secretKey);
    expect(text).not.toContain(token);
  }

  it('client_secret_basic: the tenant id and a secret key in HTTP Basic', async () => {
    const res = await introspect({ authorization: basic(t.tenant.id, t.secretKey) }, { token });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({
      active: true,
      tid: t.tenant.id,
      client_id: t.tenant.id,
      aud: `${app.ctx.authUrl}/t/${t.tenant.id}/api`,
    });
    // Each part is form-decoded first (RFC 6749 section 2.3.1): %2D is "-".
    const encodedId = t.tenant.id.replaceAll('-', '%2D');
    const header = `Basic ${Buffer.from(`${encodedId}:${t.secretKey}`).toString('base64')}`;
    expect((await json(await introspect({ authorization: header }, { token }))).active).toBe(true);
  });

  it('client_secret_post: client_id and client_secret in the form, or in the JSON body', async () => {
    const form = await introspect(
      {},
      { token, client_id: t.tenant.id, client_secret: t.secretKey },
    );
    expect(form.status).toBe(200);
    expect((await json(form)).active).toBe(true);
    const body = { token, client_id: t.tenant.id, client_secret: t.secretKey };
    const asJson = await postJson(app, '/api/auth/introspect', undefined, body);
    expect((await json(asJson)).active).toBe(true);
  });

  it("answers another tenant's token inactive, whichever method authenticated", async () => {
    const res = await introspect(
      { authorization: basic(other.tenant.id, other.secretKey) },
      { token },
    );
    expect(await res.text()).toBe('{"active":false}');
  });

  it('refuses wrong credentials with 401 and the challenge of the scheme used (RFC 6749 section 5.2)', async () => {
    const wrongSecret = `${t.secretKey.slice(0, -4)}AAAA`;
    await expectUnauthorized(
      await introspect({ authorization: basic(t.tenant.id, wrongSecret) }, { token }),
      'Basic realm="latchkey"',
    );
    // A real secret key, but named as another tenant's client.
    await expectUnauthorized(
      await introspect({ authorization: basic(other.tenant.id, t.secretKey) }, { token }),
      'Basic realm="latchkey"',
    );
    await expectUnauthorized(
      await introspect({ authorization: 'Basic !!!' }, { token }),
      'Basic realm="latchkey"',
    );
    await expectUnauthorized(
      await introspect({}, { token, client_id: t.tenant.id, client_secret: wrongSecret }),
      'Basic realm="latchkey"',
    );
    await expectUnauthorized(
      await introspect({}, { token, client_secret: t.secretKey }),
      'Basic realm="latchkey"',
    );
    await expectUnauthorized(
      await introspect({ authorization: `Bearer ${wrongSecret}` }, { token }),
      'Bearer realm="latchkey", error="invalid_token"',
    );
    // A malformed token is still the credential presented (RFC 6750 section 3.1).
    for (const malformed of ['Bearer !!!@@@###', 'Bearer sk_test_\u00ff', 'Bearer ab=cd'])
      await expectUnauthorized(
        await introspect({ authorization: malformed }, { token }),
        'Bearer realm="latchkey", error="invalid_token"',
      );
  });

  it('offers both schemes when no credentials came, and takes one method per request', async () => {
    await expectUnauthorized(
      await introspect({}, { token }),
      'Bearer realm="latchkey", Basic realm="latchkey"',
    );
    const twice = await introspect(
      { authorization: `Bearer ${t.secretKey}` },
      { token, client_id: t.tenant.id, client_secret: t.secretKey },
    );
    expect(twice.status).toBe(400);
    expect((await json(twice)).code).toBe('invalid_request');
  });

  it('still wants a secret key with tokens:introspect: a publishable key is 403', async () => {
    const res = await introspect(
      { authorization: basic(t.tenant.id, t.publishableKey) },
      { token },
    );
    expect(res.status).toBe(403);
    expect((await json(res)).code).toBe('forbidden');
  });
});
