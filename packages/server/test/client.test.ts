/** The browser endpoints: /public/config and the PKCE token endpoint (publishable key, CORS). */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../src/modules/tenants/index.js';
import {
  browserSignIn,
  DIALECTS,
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const ORIGIN = 'http://localhost:5173';
const PASSWORD = 'correct horse battery staple';

describe.each(DIALECTS)('browser endpoints on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;

  beforeAll(async () => {
    app = await startApp(dialect);
    t = await app.tenant({ allowedOrigins: [ORIGIN] });
    await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, t.tenant.id, {
      primaryColor: '#1A7F37',
      logoUrl: 'https://cdn.example.com/l.png',
    });
  });
  afterAll(() => app.dispose());

  it('GET /public/config answers the tenant config, CORS-readable and cacheable', async () => {
    const res = await app.request(`/public/config?pk=${t.publishableKey}`, {
      headers: { origin: 'https://anywhere.example' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cache-control')).toMatch(/max-age/);
    expect(await json(res)).toEqual({
      tenantId: t.tenant.id,
      name: t.tenant.name,
      environment: 'development',
      branding: { logoUrl: 'https://cdn.example.com/l.png', primaryColor: '#1a7f37' },
      providers: [],
      passwordEnabled: true,
      signInUrl: `${app.url}/sign-in?pk=${t.publishableKey}`,
    });
    const again = await app.request('/public/config', {
      headers: {
        'x-latchkey-publishable-key': t.publishableKey,
        'if-none-match': res.headers.get('etag') as string,
      },
    });
    expect(again.status).toBe(304);
    expect((await app.request('/public/config')).status).toBe(401);
    expect((await app.request(`/public/config?pk=${t.secretKey}`)).status).toBe(403);
    expect((await app.request(`/public/config?pk=pk_test_${'x'.repeat(43)}`)).status).toBe(401);
  });

  /** Signs in through the hosted page with a PKCE challenge; returns the fragment. */
  async function hostedSignIn(verifier: string) {
    const address = email();
    await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD });
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const q = new URLSearchParams({
      pk: t.publishableKey,
      redirect_url: `${ORIGIN}/callback`,
      state: 's1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const page = await app.request(`/sign-in?${q}`);
    const cookie = (page.headers.getSetCookie() ?? []).map((c) => c.split(';')[0]).join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] as string;
    const res = await app.request(`/sign-in?${q}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ _csrf: csrf, email: address, password: PASSWORD }).toString(),
    });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get('location') as string);
    expect(location.origin + location.pathname).toBe(`${ORIGIN}/callback`);
    expect(location.search).toBe('');
    return new URLSearchParams(location.hash.slice(1));
  }

  const redeem = (body: Record<string, string>, origin = ORIGIN) =>
    app.request('/v1/client/token', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-latchkey-publishable-key': t.publishableKey,
        origin,
      },
      body: JSON.stringify(body),
    });

  it('the hosted page puts tokens and the PKCE code in the fragment; the code redeems once', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const fragment = await hostedSignIn(verifier);
    expect(fragment.get('token_type')).toBe('Bearer');
    expect(fragment.get('tenant_id')).toBe(t.tenant.id);
    expect(fragment.get('state')).toBe('s1');
    expect(Number(fragment.get('expires_in'))).toBe(600);
    const introspected = await json(
      await postJson(app, '/api/auth/introspect', t.secretKey, {
        token: fragment.get('access_token'),
      }),
    );
    expect(introspected.active).toBe(true);

    const code = fragment.get('code') as string;
    const accessToken = fragment.get('access_token') as string;
    // A wrong verifier is refused without burning the code for its owner.
    const wrong = await redeem({
      grant_type: 'authorization_code',
      code,
      code_verifier: randomBytes(32).toString('base64url'),
    });
    expect(wrong.status).toBe(400);
    // Only from the origin the code was sent to (browsers always send Origin).
    expect(
      (
        await redeem(
          { grant_type: 'authorization_code', code, code_verifier: verifier },
          'https://evil.example',
        )
      ).status,
    ).toBe(403);
    const first = await redeem({ grant_type: 'authorization_code', code, code_verifier: verifier });
    expect(first.status).toBe(200);
    // RFC 6749 section 4.1.2: a replayed code is refused and revokes what it gave.
    const replay = await redeem({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
    });
    expect(replay.status).toBe(400);
    expect((await json(replay)).code).toBe('invalid_grant');
    const after = await json(
      await postJson(app, '/api/auth/introspect', t.secretKey, { token: accessToken }),
    );
    expect(after.active).toBe(false);
  });

  it('redeems a code for a refresh token that rotates; CORS only for allowed origins', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const code = (await hostedSignIn(verifier)).get('code') as string;
    const res = await redeem({ grant_type: 'authorization_code', code, code_verifier: verifier });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    const tokens = await json(res);
    expect(tokens.refreshToken).toMatch(/^lkr_/);

    const refreshed = await redeem({
      grant_type: 'refresh_token',
      refresh_token: tokens.refreshToken,
    });
    expect(refreshed.status).toBe(200);
    expect((await json(refreshed)).refreshToken).not.toBe(tokens.refreshToken);

    const elsewhere = await redeem(
      { grant_type: 'refresh_token', refresh_token: tokens.refreshToken },
      'https://evil.example',
    );
    expect(elsewhere.status).toBe(403);
    // The refusal, and only it, is readable by the page that sent it: the library can say
    // which command allows the origin. No credentials, and the token was not used.
    expect(elsewhere.headers.get('access-control-allow-origin')).toBe('https://evil.example');
    expect(elsewhere.headers.get('access-control-allow-credentials')).toBeNull();
    expect(elsewhere.headers.get('vary')).toMatch(/origin/i);
    expect(await json(elsewhere)).toMatchObject({
      code: 'forbidden',
      detail: 'https://evil.example is not an allowed origin of this tenant',
    });
    // An unknown key's refusal too (what /public/config tells anyone anyway).
    const unknownKey = await app.request('/v1/client/token', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-latchkey-publishable-key': `pk_test_${'x'.repeat(43)}`,
        origin: 'https://evil.example',
      },
      body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: tokens.refreshToken }),
    });
    expect(unknownKey.status).toBe(401);
    expect(unknownKey.headers.get('access-control-allow-origin')).toBe('https://evil.example');
    const preflight = await app.request('/v1/client/token', {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain(
      'x-latchkey-publishable-key',
    );
  });

  it('refresh tokens work only on their own channel; no Origin, no tokens', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const code = (await hostedSignIn(verifier)).get('code') as string;
    const browser = await json(
      await redeem({ grant_type: 'authorization_code', code, code_verifier: verifier }),
    );
    const address = email();
    await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD });
    const server = await json(
      await postJson(app, '/v1/auth/sign-in', t.secretKey, { email: address, password: PASSWORD }),
    );
    // A server's refresh token is refused with only the public key, and vice versa.
    const crossed = await redeem({
      grant_type: 'refresh_token',
      refresh_token: server.refreshToken,
    });
    expect(crossed.status).toBe(400);
    expect((await json(crossed)).code).toBe('invalid_grant');
    const back = await postJson(app, '/v1/auth/token', t.secretKey, {
      refreshToken: browser.refreshToken,
    });
    expect(back.status).toBe(400);
    // Neither was burned (nor its session revoked) by the attempt.
    expect(
      (await postJson(app, '/v1/auth/token', t.secretKey, { refreshToken: server.refreshToken }))
        .status,
    ).toBe(200);
    const noOrigin = await app.request('/v1/client/token', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-latchkey-publishable-key': t.publishableKey,
      },
      body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: browser.refreshToken }),
    });
    expect(noOrigin.status).toBe(403);
    expect(
      (await redeem({ grant_type: 'refresh_token', refresh_token: browser.refreshToken })).status,
    ).toBe(200);
  });

  it('refuses a secret key, bad grants and bad bodies', async () => {
    const res = await app.request('/v1/client/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-latchkey-publishable-key': t.secretKey },
      body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: 'x' }),
    });
    expect(res.status).toBe(403);
    expect((await redeem({ grant_type: 'password' })).status).toBe(422);
    expect((await redeem({ grant_type: 'authorization_code' })).status).toBe(400);
    expect(
      (await redeem({ grant_type: 'authorization_code', code: 'nope', code_verifier: 'short' }))
        .status,
    ).toBe(400);
  });

  it('OPTIONS /public/config answers a preflight for the publishable-key header', async () => {
    const res = await app.request('/public/config', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://anywhere.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-latchkey-publishable-key',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')).toContain('x-latchkey-publishable-key');
  });

  const signOut = (refreshToken: string, origin = ORIGIN) =>
    app.request('/v1/client/sign-out', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-latchkey-publishable-key': t.publishableKey,
        origin,
      },
      body: JSON.stringify({ refresh_token: refreshToken }),
    });

  it('POST /v1/client/sign-out ends the session at once, for allowed origins only', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const code = (await hostedSignIn(verifier)).get('code') as string;
    const tokens = await json(
      await redeem({ grant_type: 'authorization_code', code, code_verifier: verifier }),
    );
    const active = async () =>
      (
        await json(
          await postJson(app, '/api/auth/introspect', t.secretKey, { token: tokens.accessToken }),
        )
      ).active;
    expect(await active()).toBe(true);

    const refused = await signOut(tokens.refreshToken, 'https://evil.example');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBe('https://evil.example');
    expect((await json(refused)).code).toBe('forbidden');
    expect(await active()).toBe(true);

    const preflight = await app.request('/v1/client/sign-out', {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('POST');

    const res = await signOut(tokens.refreshToken);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(await active()).toBe(false);
    const refreshed = await redeem({
      grant_type: 'refresh_token',
      refresh_token: tokens.refreshToken,
    });
    expect(refreshed.status).toBe(400);
    // Unknown tokens answer the same (RFC 7009 section 2.2); a body without one does not.
    expect((await signOut('lkr_unknown')).status).toBe(204);
    const empty = await app.request('/v1/client/sign-out', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-latchkey-publishable-key': t.publishableKey,
      },
      body: '{}',
    });
    expect(empty.status).toBe(422);
  });

  it("POST /v1/client/sign-out cannot end a server's session, nor burn its token", async () => {
    const address = email();
    await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password: PASSWORD });
    const server = await json(
      await postJson(app, '/v1/auth/sign-in', t.secretKey, { email: address, password: PASSWORD }),
    );
    // Only the public key and an allowed Origin: what any page, or anyone, can send.
    const res = await signOut(server.refreshToken);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await json(res)).code).toBe('invalid_grant');
    const check = await json(
      await postJson(app, '/api/auth/introspect', t.secretKey, { token: server.accessToken }),
    );
    expect(check.active).toBe(true);
    const refreshed = await postJson(app, '/v1/auth/token', t.secretKey, {
      refreshToken: server.refreshToken,
    });
    expect(refreshed.status).toBe(200);
  });

  const profileOf = (
    accessToken: string | undefined,
    origin: string | null = ORIGIN,
    pk = t.publishableKey,
  ) =>
    app.request('/v1/client/user', {
      headers: {
        'x-latchkey-publishable-key': pk,
        ...(accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` }),
        ...(origin === null ? {} : { origin }),
      },
    });

  /** A browser's session of a new user signed up with `profile`. */
  async function browserUser(
    profile: Record<string, unknown>,
    tenant = t,
  ): Promise<{ accessToken: string; refreshToken: string; email: string; userId: string }> {
    const credentials = { email: email(), password: PASSWORD };
    const up = await postJson(app, '/v1/auth/sign-up', tenant.secretKey, {
      ...credentials,
      ...profile,
    });
    expect(up.status).toBe(201);
    const tokens = await browserSignIn(app, tenant, credentials, ORIGIN);
    return {
      accessToken: tokens.accessToken as string,
      refreshToken: tokens.refreshToken as string,
      email: credentials.email,
      userId: (await json(up)).userId as string,
    };
  }

  it('GET /v1/client/user answers the profile: name, and of the metadata only metadata.public', async () => {
    const s = await browserUser({
      name: 'Ada Lovelace',
      metadata: { public: { plan: 'pro', theme: 'dark' }, stripeCustomer: 'cus_secret' },
    });
    const res = await profileOf(s.accessToken);
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(res.headers.get('ratelimit')).toBeTruthy();
    const body = await json(res);
    expect(body).toEqual({
      id: s.userId,
      email: s.email,
      emailVerified: false,
      name: 'Ada Lovelace',
      picture: null,
      publicMetadata: { plan: 'pro', theme: 'dark' },
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(JSON.stringify(body)).not.toContain('cus_secret');

    // No name, and a `public` that is not an object: nothing of the metadata shows.
    for (const metadata of [{ public: 'yes' }, { public: ['a'] }, { public: null }, {}]) {
      const other = await browserUser({ metadata });
      const answer = await json(await profileOf(other.accessToken));
      expect(answer.name).toBeNull();
      expect(answer.publicMetadata).toEqual({});
    }

    // The preflight lets the page send its access token.
    const preflight = await app.request('/v1/client/user', {
      method: 'OPTIONS',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization, x-latchkey-publishable-key',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
  });

  it('GET /v1/client/user refuses a missing, forged, ended or foreign token with 401', async () => {
    const s = await browserUser({ name: 'Grace Hopper' });
    const refusedWith401 = async (res: Response) => {
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('www-authenticate')).toBe(
        'Bearer realm="latchkey", error="invalid_token"',
      );
      const problem = await json(res);
      expect(problem.code).toBe('unauthorized');
      expect(JSON.stringify(problem)).not.toContain(s.accessToken);
    };
    await refusedWith401(await profileOf(undefined));
    await refusedWith401(await profileOf('not-a-token'));
    const [head, payload] = s.accessToken.split('.');
    await refusedWith401(await profileOf(`${head}.${payload}.${'A'.repeat(342)}`));

    // Another tenant's token, with this tenant's key: never this tenant's user.
    const other = await app.tenant({ allowedOrigins: [ORIGIN] });
    const foreign = await browserUser({ name: 'Someone Else' }, other);
    await refusedWith401(await profileOf(foreign.accessToken));
    expect((await profileOf(foreign.accessToken, ORIGIN, other.publishableKey)).status).toBe(200);

    // Only from allowed origins, and only from browsers (which send Origin).
    const evil = await profileOf(s.accessToken, 'https://evil.example');
    expect(evil.status).toBe(403);
    expect(JSON.stringify(await json(evil))).not.toContain('Grace');
    expect((await profileOf(s.accessToken, null)).status).toBe(403);
    expect((await profileOf(s.accessToken, ORIGIN, t.secretKey)).status).toBe(403);

    // Signed out: the token is inactive at once.
    expect((await profileOf(s.accessToken)).status).toBe(200);
    expect((await signOut(s.refreshToken)).status).toBe(204);
    await refusedWith401(await profileOf(s.accessToken));
  });
});
