/**
 * Introspection and the apps of docs/design.md §14, on the real server: a web or m2m app
 * introspects its tenant's tokens with its client credentials (RFC 7662 section 2.1,
 * HTTP Basic or client_secret_post), and an m2m app's client-credentials token (minted by
 * the tenant's node-oidc-provider on the same database and keys) is active while its app
 * exists. The app is looked up as keys are (cached while the bus is live), so a deletion or
 * a new secret counts at once, on every instance.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/index.js';
import { createApp, deleteApp, rotateAppSecret } from '../src/modules/oauth/index.js';
import { OAuthProviders } from '../src/modules/oauth/registry.js';
import {
  type Body,
  DIALECTS,
  eventually,
  freshDatabaseUrl,
  HAVE_POSTGRES,
  HAVE_REDIS,
  json,
  postJson,
  REDIS_URL,
  SECRET,
  signedIn,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

/** RFC 7617 with RFC 6749 section 2.3.1's form-urlencoding of both parts. */
function basic(clientId: string, secret: string): string {
  const encode = (v: string) => encodeURIComponent(v).replaceAll('%20', '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}

interface Made {
  id: string;
  secret: string;
}

/**
 * The tenants' OpenID Providers of `app` (its database, signing keys and PUBLIC_URL, so its
 * issuers), served on a port of their own until the server mounts them: for minting
 * client-credentials tokens as a worker would.
 */
async function tokenEndpoint(app: TestApp) {
  const providers = new OAuthProviders({
    db: app.ctx.database.db,
    bus: app.ctx.bus,
    authUrl: app.ctx.authUrl,
    signingKeys: app.ctx.signingKeys,
    secret: SECRET,
  });
  const tenants = new Map<string, TestTenant>();
  const server: Server = createServer((req, res) => {
    const id = /^\/t\/([^/]+)\//.exec(req.url ?? '')?.[1] ?? '';
    const t = tenants.get(id);
    if (!t) return void res.writeHead(404).end();
    req.url = req.url?.slice(`/t/${id}`.length);
    void providers.get(t.tenant).then((provider) => provider.callback()(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    async mint(t: TestTenant, made: Made): Promise<string> {
      tenants.set(t.tenant.id, t);
      const res = await fetch(`${base}/t/${t.tenant.id}/oauth/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: basic(made.id, made.secret),
        },
        body: new URLSearchParams({ grant_type: 'client_credentials' }),
      });
      if (res.status !== 200) throw new Error(`the token endpoint answered ${res.status}`);
      return (await json(res)).access_token as string;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function madeApp(app: TestApp, t: TestTenant, type: 'm2m' | 'web'): Promise<Made> {
  const made = await createApp(app.ctx.database.db, t.tenant.id, {
    name: `${type} app`,
    type,
    redirectUris: type === 'web' ? ['http://localhost:3000/callback'] : [],
  });
  return { id: made.app.id, secret: made.clientSecret ?? '' };
}

describe.each(DIALECTS)('introspection and apps (docs/design.md §14) on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;
  let other: TestTenant;
  let userToken: string;
  let worker: Made;
  let site: Made;
  let spaId: string;
  let theirs: Made;
  let endpoint: Awaited<ReturnType<typeof tokenEndpoint>>;
  const deps = () => ({ db: app.ctx.database.db, bus: app.ctx.bus });

  beforeAll(async () => {
    app = await startApp(dialect);
    [t, other] = await Promise.all([app.tenant(), app.tenant()]);
    userToken = (await signedIn(app, t)).accessToken;
    [worker, site, theirs] = await Promise.all([
      madeApp(app, t, 'm2m'),
      madeApp(app, t, 'web'),
      madeApp(app, other, 'm2m'),
    ]);
    const spa = await createApp(app.ctx.database.db, t.tenant.id, {
      name: 'Browser',
      type: 'spa',
      redirectUris: ['http://localhost:3000/'],
    });
    spaId = spa.app.id;
    endpoint = await tokenEndpoint(app);
  });
  afterAll(async () => {
    await endpoint?.close();
    await app?.dispose();
  });

  function introspect(form: Record<string, string>, headers: Record<string, string> = {}) {
    return app.request('/api/auth/introspect', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    });
  }
  /** With the tenant's secret key, through the fast path's request shape (JSON, Bearer). */
  const withKey = (token: string, key = t.secretKey) =>
    postJson(app, '/api/auth/introspect', key, { token });
  const asApp = (made: Made, token: string) =>
    introspect({ token }, { authorization: basic(made.id, made.secret) });

  async function expectUnauthorized(
    res: Response,
    secret: string,
    challenge = 'Basic realm="latchkey"',
  ) {
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('www-authenticate')).toBe(challenge);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ code: 'unauthorized', detail: expect.any(String) });
    if (secret) expect(text).not.toContain(secret);
    expect(text).not.toContain(userToken);
  }

  it("a web or m2m app introspects its tenant's tokens as a secret key does: Basic or client_secret_post", async () => {
    const byKey = await json(await withKey(userToken));
    expect(byKey).toMatchObject({ active: true, tid: t.tenant.id, sid: expect.any(String) });
    for (const made of [worker, site]) {
      const res = await asApp(made, userToken);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await json(res)).toEqual(byKey);
      const posted = await introspect({
        token: userToken,
        client_id: made.id,
        client_secret: made.secret,
      });
      expect(await json(posted)).toEqual(byKey);
      const asJson = await postJson(app, '/api/auth/introspect', undefined, {
        token: userToken,
        client_id: made.id,
        client_secret: made.secret,
      });
      expect(await json(asJson)).toEqual(byKey);
    }
  });

  it('refuses wrong app credentials with 401 and the Basic challenge, and changes nothing', async () => {
    const wrong = `${worker.secret.slice(0, -4)}AAAA`;
    await expectUnauthorized(await asApp({ id: worker.id, secret: wrong }, userToken), wrong);
    await expectUnauthorized(
      await introspect({ token: userToken, client_id: worker.id, client_secret: wrong }),
      wrong,
    );
    // Another app's secret, an unknown app, a public client (it has no secret), no secret.
    await expectUnauthorized(await asApp({ id: worker.id, secret: site.secret }, userToken), '');
    await expectUnauthorized(
      await asApp({ id: 'app_AAAAAAAAAAAAAAAAAAAAAAAA', secret: worker.secret }, userToken),
      worker.secret,
    );
    await expectUnauthorized(await asApp({ id: spaId, secret: 'x' }, userToken), '');
    // No secret at all: both schemes are offered, as when nothing came (RFC 7235 section 4.1).
    await expectUnauthorized(
      await introspect({ token: userToken, client_id: worker.id }),
      '',
      'Bearer realm="latchkey", Basic realm="latchkey"',
    );
    // The app's id with the tenant's secret key is no tenant client either.
    await expectUnauthorized(
      await asApp({ id: worker.id, secret: t.secretKey }, userToken),
      t.secretKey,
    );
    // The refusals changed nothing: the app and the token still work.
    expect((await json(await asApp(worker, userToken))).active).toBe(true);
  });

  it("refuses an app's secret sent from a browser (an Origin header), as a secret key's", async () => {
    const res = await introspect(
      { token: userToken },
      { authorization: basic(worker.id, worker.secret), origin: 'http://localhost:3000' },
    );
    expect(res.status).toBe(403);
    const body = await json(res);
    expect(body.code).toBe('forbidden');
    expect(body.detail).toContain(
      `latchkey app rotate-secret --tenant ${t.tenant.id} ${worker.id}`,
    );
    expect(JSON.stringify(body)).not.toContain(worker.secret);
  });

  it('another tenant\'s app sees this tenant\'s tokens inactive, exactly {"active":false}', async () => {
    expect(await (await asApp(theirs, userToken)).text()).toBe('{"active":false}');
    const token = await endpoint.mint(t, worker);
    expect(await (await asApp(theirs, token)).text()).toBe('{"active":false}');
    expect(await (await withKey(token, other.secretKey)).text()).toBe('{"active":false}');
    // And this tenant's callers see the other tenant's app token inactive.
    const foreign = await endpoint.mint(other, theirs);
    expect(await (await asApp(worker, foreign)).text()).toBe('{"active":false}');
    expect(await (await withKey(foreign)).text()).toBe('{"active":false}');
  });

  it("an m2m app's client-credentials token is active while its app exists, then inactive at once", async () => {
    const made = await madeApp(app, t, 'm2m');
    const token = await endpoint.mint(t, made);
    const expected = {
      active: true,
      sub: made.id,
      client_id: made.id,
      tid: t.tenant.id,
      scope: '',
      iss: `${app.ctx.authUrl}/t/${t.tenant.id}`,
      aud: `${app.ctx.authUrl}/t/${t.tenant.id}/api`,
      jti: expect.any(String),
      iat: expect.any(Number),
      exp: expect.any(Number),
      token_type: 'Bearer',
    };
    // Asked twice (the second from the verified-token cache), by key and by app, JSON and form.
    for (let i = 0; i < 2; i++) {
      const res = await withKey(token);
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body).toEqual(expected);
      expect(body.exp - body.iat).toBe(t.tenant.accessTokenTtl);
      expect(await json(await asApp(made, token))).toEqual(body);
      expect(await json(await asApp(site, token))).toEqual(body);
    }

    await deleteApp(deps(), t.tenant.id, made.id);
    expect(await (await withKey(token)).text()).toBe('{"active":false}');
    expect(await (await asApp(site, token)).text()).toBe('{"active":false}');
    // Its credentials stop at once too.
    await expectUnauthorized(await asApp(made, userToken), made.secret);
  });

  it('a rotated secret works during its grace and not after; the tokens of the app stay active', async () => {
    const made = await madeApp(app, t, 'm2m');
    const token = await endpoint.mint(t, made);
    expect((await json(await asApp(made, token))).active).toBe(true);

    const rotated = await rotateAppSecret(deps(), t.tenant.id, made.id, 1_500);
    const current = { id: made.id, secret: rotated.clientSecret };
    expect((await json(await asApp(current, token))).active).toBe(true);
    expect((await json(await asApp(made, token))).active).toBe(true);
    // The grace ends by the clock, with the app cached meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    await expectUnauthorized(await asApp(made, token), made.secret);
    expect((await json(await asApp(current, token))).active).toBe(true);

    // Without a grace period the previous secret stops at once.
    const again = await rotateAppSecret(deps(), t.tenant.id, made.id, 0);
    await expectUnauthorized(await asApp(current, token), current.secret);
    expect(
      (await json(await asApp({ id: made.id, secret: again.clientSecret }, token))).active,
    ).toBe(true);
    // A token is the app's, not its secret's: it stays active through every rotation.
    expect((await json(await withKey(token))).active).toBe(true);
  });

  it("a user's token keeps its session rules when an app asks", async () => {
    const session = await signedIn(app, t);
    expect((await json(await asApp(worker, session.accessToken))).active).toBe(true);
    const sid = (await json(await withKey(session.accessToken))).sid as string;
    const revoked = await app.request(`/v1/sessions/${sid}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${t.secretKey}` },
    });
    expect(revoked.status).toBeLessThan(300);
    expect(await (await asApp(worker, session.accessToken)).text()).toBe('{"active":false}');
  });
});

describe.runIf(HAVE_POSTGRES && HAVE_REDIS)(
  'an app deleted by another process stops at once',
  () => {
    let a: TestApp;
    let t: TestTenant;
    let drop: () => Promise<void>;
    let databaseUrl: string;
    let endpoint: Awaited<ReturnType<typeof tokenEndpoint>>;

    beforeAll(async () => {
      const fresh = await freshDatabaseUrl('postgres');
      databaseUrl = fresh.url;
      drop = fresh.drop;
      a = await startApp('postgres', { databaseUrl, env: { REDIS_URL } });
      t = await a.tenant();
      endpoint = await tokenEndpoint(a);
    });
    afterAll(async () => {
      await endpoint?.close();
      await a?.dispose();
      await drop?.();
    });

    it('through the CLI (announced on Redis): its tokens and its credentials, cached, stop', async () => {
      const made = await madeApp(a, t, 'm2m');
      const token = await endpoint.mint(t, made);
      const ask = (by: Record<string, string>): Promise<Body> =>
        a
          .request('/api/auth/introspect', {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', ...by },
            body: new URLSearchParams({ token }).toString(),
          })
          .then((res) => (res.status === 200 ? json(res) : { status: res.status }));
      const byKey = { authorization: `Bearer ${t.secretKey}` };
      const byApp = { authorization: basic(made.id, made.secret) };
      expect((await ask(byKey)).active).toBe(true);
      expect((await ask(byApp)).active).toBe(true);
      const err: string[] = [];
      const code = await runCli(
        ['app', 'delete', '--tenant', t.tenant.id, made.id, '--json'],
        { DATABASE_URL: databaseUrl, REDIS_URL, LATCHKEY_SECRET: SECRET },
        { out: () => {}, err: (line) => err.push(line) },
      );
      expect({ code, err }).toEqual({ code: 0, err: [] });
      await eventually(async () => ((await ask(byKey)).active === false ? true : undefined));
      await eventually(async () => ((await ask(byApp)).status === 401 ? true : undefined));
    });
  },
);
