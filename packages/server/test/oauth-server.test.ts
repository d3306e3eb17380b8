/**
 * docs/design.md §14 in the real server, on every database: each tenant's OpenID Provider
 * mounted under its issuer, with sign-in on the hosted pages (the browser's hosted
 * session is handed over; a second factor applies), consent for registered apps, RFC 7591
 * registration, our userinfo, RP-initiated logout, and what Latchkey adds around
 * node-oidc-provider. The relying-party libraries' view is in packages/interop.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/modules/oauth/index.js';
import { updateTenant } from '../src/modules/tenants/index.js';
import { OAuthBrowser } from './oauth-browser.js';
import {
  type Body,
  DIALECTS,
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const REDIRECT = 'https://rp.example.com/callback';
const LOGGED_OUT = 'https://rp.example.com/bye';
const PASSWORD = 'correct horse battery staple';

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe.each(DIALECTS)('OpenID Provider in the server on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;
  let issuer: string;
  let web: { id: string; secret: string };

  beforeAll(async () => {
    app = await startApp(dialect);
    t = await app.tenant();
    issuer = `${app.url}/t/${t.tenant.id}`;
    const made = await createApp(app.ctx.database.db, t.tenant.id, {
      name: 'Site',
      type: 'web',
      redirectUris: [REDIRECT],
      postLogoutRedirectUris: [LOGGED_OUT],
    });
    web = { id: made.app.id, secret: made.clientSecret ?? '' };
  });
  afterAll(() => app?.dispose());

  async function newUser(tenant = t) {
    const address = email();
    const up = await postJson(app, '/v1/auth/sign-up', tenant.secretKey, {
      email: address,
      password: PASSWORD,
      name: 'Ada Lovelace',
    });
    expect(up.status).toBe(201);
    return { email: address, password: PASSWORD, id: (await json(up)).userId as string };
  }

  function authorizeUrl(extra: Record<string, string | undefined> = {}, base = issuer) {
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(`${base}/oauth/authorize`);
    const params: Record<string, string | undefined> = {
      client_id: web.id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid email profile',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state: 'st',
      nonce: 'n1',
      ...extra,
    };
    for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
    return { url, verifier };
  }

  async function exchange(
    code: string,
    verifier: string | undefined,
    client: { id: string; secret?: string } = web,
  ) {
    const res = await fetch(`${issuer}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(client.secret ? { authorization: basic(client.id, client.secret) } : {}),
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        ...(verifier ? { code_verifier: verifier } : {}),
        ...(client.secret ? {} : { client_id: client.id }),
      }),
    });
    return { status: res.status, body: (await res.json()) as Body };
  }

  const introspect = async (token: string) =>
    json(await postJson(app, '/api/auth/introspect', t.secretKey, { token }));
  const userinfo = (token: string | undefined) =>
    fetch(`${issuer}/oauth/userinfo`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });

  it('signs in on the hosted form and back: ID token, RFC 9068 access token, userinfo, introspection', async () => {
    const user = await newUser();
    const browser = new OAuthBrowser(app.url);
    const before = Math.floor(Date.now() / 1000);
    const { url, verifier } = authorizeUrl();
    const visit = await browser.browse(url, user);
    // The provider, its interaction, the hosted form, back to the interaction, the app.
    expect(visit.path).toEqual([
      `/t/${t.tenant.id}/oauth/authorize`,
      expect.stringMatching(new RegExp(`^/t/${t.tenant.id}/interaction/`)),
      '/sign-in',
      'POST /sign-in',
      expect.stringMatching(/\/interaction\//),
      expect.stringMatching(/\/oauth\/authorize\//),
    ]);
    expect(visit.url.origin + visit.url.pathname).toBe(REDIRECT);
    expect(visit.url.searchParams.get('state')).toBe('st');
    expect(visit.url.searchParams.get('iss')).toBe(issuer);
    const { status, body: tokens } = await exchange(
      visit.url.searchParams.get('code') ?? '',
      verifier,
    );
    expect(status).toBe(200);
    expect(tokens).toMatchObject({ token_type: 'Bearer', refresh_token: expect.any(String) });

    const jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`));
    const id = await jwtVerify(tokens.id_token, jwks, { issuer, audience: web.id });
    expect(id.payload).toMatchObject({
      sub: user.id,
      nonce: 'n1',
      amr: ['pwd'],
      email: user.email,
      email_verified: false,
      name: 'Ada Lovelace',
    });
    expect(id.payload.auth_time).toBeGreaterThanOrEqual(before - 1);

    const access = await jwtVerify(tokens.access_token, jwks, {
      issuer,
      audience: `${issuer}/api`,
      typ: 'at+jwt',
    });
    expect(access.payload).toMatchObject({
      sub: user.id,
      client_id: web.id,
      tid: t.tenant.id,
      sid: expect.any(String),
      amr: ['pwd'],
      scope: 'openid email profile',
    });
    expect(await introspect(tokens.access_token)).toMatchObject({
      active: true,
      sub: user.id,
      client_id: web.id,
      email: user.email,
    });

    const info = await userinfo(tokens.access_token);
    expect(info.status).toBe(200);
    expect(info.headers.get('cache-control')).toBe('no-store');
    expect(await info.json()).toEqual({
      sub: user.id,
      email: user.email,
      email_verified: false,
      name: 'Ada Lovelace',
    });
  });

  it('userinfo gives what the scopes allow, and answers RFC 6750 errors', async () => {
    const user = await newUser();
    const browser = new OAuthBrowser(app.url);
    const { url, verifier } = authorizeUrl({ scope: 'openid email' });
    const visit = await browser.browse(url, user);
    const { body: tokens } = await exchange(visit.url.searchParams.get('code') ?? '', verifier);
    expect(await (await userinfo(tokens.access_token)).json()).toEqual({
      sub: user.id,
      email: user.email,
      email_verified: false,
    });
    const none = await userinfo(undefined);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    const forged = await userinfo(`${tokens.access_token.slice(0, -4)}AAAA`);
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ error: 'invalid_token' });
    // Another tenant's issuer does not take this tenant's token.
    const other = await app.tenant();
    const elsewhere = await fetch(`${app.url}/t/${other.tenant.id}/oauth/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(elsewhere.status).toBe(401);
  });

  it('a returning browser goes straight back; prompt=login and max_age=0 ask for the form again', async () => {
    const user = await newUser();
    const browser = new OAuthBrowser(app.url);
    await browser.browse(authorizeUrl().url, user);
    const again = await browser.browse(authorizeUrl().url);
    expect(again.path).toEqual([`/t/${t.tenant.id}/oauth/authorize`]);
    expect(again.url.searchParams.get('code')).toEqual(expect.any(String));

    const forced = await browser.browse(authorizeUrl({ prompt: 'login' }).url, user);
    expect(forced.path).toContain('POST /sign-in');
    expect(forced.url.searchParams.get('code')).toEqual(expect.any(String));

    // max_age=3600: the sign-in just made is recent enough.
    const recent = await browser.browse(authorizeUrl({ max_age: '3600' }).url);
    expect(recent.path).not.toContain('/sign-in');
    // max_age=0: a sign-in of the moment, the form again.
    const asked = Math.floor(Date.now() / 1000);
    const { url, verifier } = authorizeUrl({ max_age: '0' });
    const old = await browser.browse(url, user);
    expect(old.path).toContain('POST /sign-in');
    const { body } = await exchange(old.url.searchParams.get('code') ?? '', verifier);
    expect(decodeJwt(body.id_token).auth_time).toBeGreaterThanOrEqual(asked);
  });

  it('login_hint fills in the address on the hosted form', async () => {
    const browser = new OAuthBrowser(app.url);
    const start = await browser.request(authorizeUrl({ login_hint: 'ada@example.com' }).url.href);
    const interaction = await browser.request(start.headers.get('location') ?? '');
    const form = await browser.request(interaction.headers.get('location') ?? '');
    expect(await form.text()).toContain('value="ada@example.com"');
  });

  it('the hosted form of an interaction lets its post lead to the app (CSP form-action)', async () => {
    const browser = new OAuthBrowser(app.url);
    const start = await browser.request(authorizeUrl().url.href);
    const interaction = await browser.request(start.headers.get('location') ?? '');
    const form = await browser.request(interaction.headers.get('location') ?? '');
    expect(form.status).toBe(200);
    expect(form.headers.get('content-security-policy')).toMatch(
      /form-action 'self' http:\/\/127\.0\.0\.1:\d+ https:\/\/rp\.example\.com/,
    );
  });

  it('a user with an authenticator app passes the second step first; amr says so', async () => {
    const user = await newUser();
    const call = (method: string, path: string, body: unknown) =>
      app.request(path, {
        method,
        headers: { authorization: `Bearer ${t.secretKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const factor = await json(await call('POST', `/v1/users/${user.id}/factors`, { type: 'totp' }));
    const codeAt = (steps: number) =>
      generateSync({ secret: factor.secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });
    const confirmed = await call('POST', `/v1/users/${user.id}/factors/${factor.id}/confirm`, {
      code: codeAt(-1),
    });
    expect(confirmed.status).toBe(200);
    const browser = new OAuthBrowser(app.url);
    const { url, verifier } = authorizeUrl();
    const visit = await browser.browse(url, { ...user, code: () => codeAt(0) });
    expect(visit.path).toContain('POST /sign-in/verify');
    const { body } = await exchange(visit.url.searchParams.get('code') ?? '', verifier);
    expect(decodeJwt(body.id_token).amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(decodeJwt(body.access_token).amr).toEqual(['pwd', 'otp', 'mfa']);
  });

  it('the hosted session is the truth: once it ends, the provider asks again (prompt=none: login_required)', async () => {
    const user = await newUser();
    const browser = new OAuthBrowser(app.url);
    await browser.browse(authorizeUrl().url, user);
    // Signed out of the hosted pages (here: every browser of the user ends).
    await app.ctx.database.db
      .updateTable('hosted_sessions')
      .set({ revoked_at: Date.now() })
      .where('user_id', '=', user.id)
      .execute();
    const silent = await browser.browse(authorizeUrl({ prompt: 'none' }).url);
    expect(silent.url.searchParams.get('error')).toBe('login_required');
    expect(silent.url.searchParams.get('state')).toBe('st');
    const asked = await browser.browse(authorizeUrl().url, user);
    expect(asked.path).toContain('POST /sign-in');
  });

  it('prompt=none without any session answers login_required at the redirect URI', async () => {
    const visit = await new OAuthBrowser(app.url).browse(authorizeUrl({ prompt: 'none' }).url);
    expect(visit.url.origin + visit.url.pathname).toBe(REDIRECT);
    expect(visit.url.searchParams.get('error')).toBe('login_required');
  });

  it('an unknown or finished interaction is an error page, not a redirect', async () => {
    const browser = new OAuthBrowser(app.url);
    const res = await browser.request(`/t/${t.tenant.id}/interaction/AAAAAAAAAAAAAAAAAAAAA`);
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('This sign-in has expired');
    const form = await browser.request(
      `/sign-in?tenant_id=${t.tenant.id}&interaction=AAAAAAAAAAAAAAAAAAAAA`,
    );
    expect(form.status).toBe(400);
    expect(await form.text()).toContain('expired');
  });

  it('RP-initiated logout asks, then ends the hosted session and returns to the app', async () => {
    const user = await newUser();
    const browser = new OAuthBrowser(app.url);
    const { url, verifier } = authorizeUrl();
    const visit = await browser.browse(url, user);
    const { body: tokens } = await exchange(visit.url.searchParams.get('code') ?? '', verifier);
    const end = new URL(`${issuer}/oauth/end-session`);
    end.searchParams.set('id_token_hint', tokens.id_token);
    end.searchParams.set('post_logout_redirect_uri', LOGGED_OUT);
    end.searchParams.set('state', 'bye');
    const page = await browser.request(end.href);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain(
      "form-action 'self' https://rp.example.com",
    );
    const html = await page.text();
    expect(html).toContain('Site asks to sign you out');
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1] ?? '';
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const confirmed = await browser.request(new URL(action, issuer).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      // As the page's "Sign out" button sends it, with the field the page adds.
      body: new URLSearchParams({ xsrf, logout: 'yes', latchkey_sign_out: 'hosted' }).toString(),
    });
    expect(confirmed.status).toBe(303);
    const back = new URL(confirmed.headers.get('location') ?? '');
    expect(back.origin + back.pathname).toBe(LOGGED_OUT);
    expect(back.searchParams.get('state')).toBe('bye');
    const hosted = await app.ctx.database.db
      .selectFrom('hosted_sessions')
      .select('revoked_at')
      .where('user_id', '=', user.id)
      .execute();
    expect(hosted.every((row) => row.revoked_at !== null)).toBe(true);
    const next = await browser.browse(authorizeUrl().url, user);
    expect(next.path).toContain('POST /sign-in');
  });

  it('"Stay signed in" on the logout page ends only the app\'s sign-in, and says so', async () => {
    const user = await newUser();
    const browser = new OAuthBrowser(app.url);
    const { url, verifier } = authorizeUrl();
    const visit = await browser.browse(url, user);
    const { body: tokens } = await exchange(visit.url.searchParams.get('code') ?? '', verifier);
    const page = await browser.request(
      `${issuer}/oauth/end-session?id_token_hint=${tokens.id_token}`,
    );
    const html = await page.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1] ?? '';
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const stayed = await browser.request(new URL(action, issuer).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf }).toString(),
    });
    const done = await browser.request(stayed.headers.get('location') ?? '');
    const text = await done.text();
    expect(text).toContain('Still signed in');
    expect(text).toContain('Site is signed out');
    // The browser's sign-in to the tenant goes on: the next sign-in needs no form.
    const next = await browser.browse(authorizeUrl().url);
    expect(next.url.searchParams.get('code')).toEqual(expect.any(String));
  });

  it("the provider's error page says what to do, in the tenant's look", async () => {
    const res = await fetch(`${issuer}/oauth/authorize?client_id=app_unknown&response_type=code`, {
      headers: { accept: 'text/html' },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await res.text();
    expect(html).toContain('This sign-in cannot go on');
    expect(html).toMatch(/Go back to the application and try again.*error: invalid_client/s);
    expect(html).toContain(t.tenant.name);
  });

  it('PKCE: required unless a web app opted out; a wrong or missing verifier is invalid_grant', async () => {
    const user = await newUser();
    const browser = new OAuthBrowser(app.url);
    const missing = await browser.browse(authorizeUrl({ code_challenge: undefined }).url, user);
    expect(missing.url.searchParams.get('error')).toBe('invalid_request');
    expect(missing.url.searchParams.get('error_description')).toMatch(/code_challenge/);

    const { url } = authorizeUrl();
    const visit = await browser.browse(url, user);
    const wrong = await exchange(visit.url.searchParams.get('code') ?? '', 'x'.repeat(43));
    expect(wrong).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    const lax = await createApp(app.ctx.database.db, t.tenant.id, {
      name: 'Legacy',
      type: 'web',
      redirectUris: [REDIRECT],
      pkceOptional: true,
    });
    const legacy = { id: lax.app.id, secret: lax.clientSecret ?? '' };
    const plain = await browser.browse(
      authorizeUrl({
        client_id: legacy.id,
        code_challenge: undefined,
        code_challenge_method: undefined,
      }).url,
      user,
    );
    const code = plain.url.searchParams.get('code') ?? '';
    expect(code).not.toBe('');
    expect(await exchange(code, undefined, legacy)).toMatchObject({ status: 200 });
  });

  it('deleting an app ends the sessions it opened: its access tokens stop at once', async () => {
    const user = await newUser();
    const made = await createApp(app.ctx.database.db, t.tenant.id, {
      name: 'Doomed',
      type: 'web',
      redirectUris: [REDIRECT],
    });
    const doomed = { id: made.app.id, secret: made.clientSecret ?? '' };
    const { url, verifier } = authorizeUrl({ client_id: doomed.id });
    const visit = await new OAuthBrowser(app.url).browse(url, user);
    const { body } = await exchange(visit.url.searchParams.get('code') ?? '', verifier, doomed);
    expect(await introspect(body.access_token)).toMatchObject({ active: true });
    const { deleteApp } = await import('../src/modules/oauth/index.js');
    await deleteApp({ db: app.ctx.database.db, bus: app.ctx.bus }, t.tenant.id, doomed.id);
    expect(await introspect(body.access_token)).toEqual({ active: false });
    expect((await userinfo(body.access_token)).status).toBe(401);
  });

  it('codes and refresh tokens are stored only as their SHA-256', async () => {
    const user = await newUser();
    const { url, verifier } = authorizeUrl();
    const visit = await new OAuthBrowser(app.url).browse(url, user);
    const code = visit.url.searchParams.get('code') ?? '';
    const { body } = await exchange(code, verifier);
    const rows = await app.ctx.database.db
      .selectFrom('oauth_artifacts')
      .select(['id', 'payload'])
      .where('tenant_id', '=', t.tenant.id)
      .execute();
    const stored = JSON.stringify(rows);
    for (const secret of [code, body.refresh_token as string]) {
      expect(stored).not.toContain(secret);
      expect(rows.map((row) => row.id)).toContain(
        createHash('sha256').update(secret).digest('hex'),
      );
    }
  });

  it('a native app has the user confirm every sign-in (RFC 8252 section 8.6), first-party too', async () => {
    const loopback = 'http://127.0.0.1:43110/cb';
    const made = await createApp(app.ctx.database.db, t.tenant.id, {
      name: 'Desktop',
      type: 'native',
      redirectUris: [loopback],
    });
    const user = await newUser();
    const browser = new OAuthBrowser(app.url);
    const start = () => authorizeUrl({ client_id: made.app.id, redirect_uri: loopback }).url;
    const first = await browser.browse(start(), { ...user, consent: 'allow' });
    expect(first.path.some((step) => step.endsWith('/consent'))).toBe(true);
    // Signed in already: still one click, so a program on another port gets nothing silently.
    await expect(browser.browse(start())).rejects.toThrow(/an interaction page/);
    const clicked = await browser.browse(start(), { consent: 'allow' });
    expect(clicked.url.searchParams.get('code')).toEqual(expect.any(String));
  });

  it("the library's own pages (form_post) carry a CSP that lets only their script run", async () => {
    const user = await newUser();
    const browser = new OAuthBrowser(app.url);
    await browser.browse(authorizeUrl().url, user);
    const res = await browser.request(authorizeUrl({ response_mode: 'form_post' }).url.href);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain("form-action 'self' https://rp.example.com");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(await res.text()).toContain('action="https://rp.example.com/callback"');
  });

  it("a cross-site link to end-session does not end a hosted sign-in (only our page's Sign out does)", async () => {
    const origin = 'http://localhost:5173';
    const tenant = await app.tenant({ allowedOrigins: [origin] });
    const address = email();
    await postJson(app, '/v1/auth/sign-up', tenant.secretKey, {
      email: address,
      password: PASSWORD,
    });
    const browser = new OAuthBrowser(app.url);
    const query = new URLSearchParams({ pk: tenant.publishableKey, redirect_url: `${origin}/cb` });
    const form = await browser.request(`/sign-in?${query}`);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
    const signedIn = await browser.request(`/sign-in?${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.url },
      body: new URLSearchParams({ _csrf: csrf, email: address, password: PASSWORD }).toString(),
    });
    expect(signedIn.status).toBe(303);
    // No provider session: the library's page posts itself; the browser follows it.
    const page = await browser.request(`${app.url}/t/${tenant.tenant.id}/oauth/end-session`);
    const html = await page.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1] ?? '';
    const fields = Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [
        m[1],
        m[2],
      ]),
    );
    await browser.request(new URL(action, app.url).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, logout: 'yes' }).toString(),
    });
    const hosted = await app.ctx.database.db
      .selectFrom('hosted_sessions')
      .innerJoin('users', 'users.id', 'hosted_sessions.user_id')
      .select('hosted_sessions.revoked_at')
      .where('users.email', '=', address)
      .execute();
    expect(hosted.map((row) => row.revoked_at)).toEqual([null]);
  });

  describe('dynamic registration (RFC 7591) and consent', () => {
    let open: TestTenant;
    let openIssuer: string;

    beforeAll(async () => {
      open = await app.tenant();
      openIssuer = `${app.url}/t/${open.tenant.id}`;
    });

    const register = (body: unknown, base = openIssuer) =>
      fetch(`${base}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    it('is off by default: 404, and discovery names no registration endpoint', async () => {
      const res = await register({ redirect_uris: [REDIRECT] }, issuer);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/problem\+json/);
      expect((await json(res)).detail).toContain('--dynamic-registration on');
      const meta = await json(await fetch(`${issuer}/.well-known/openid-configuration`));
      expect(meta.registration_endpoint).toBeUndefined();
    });

    it('when on: an MCP-style public client registers, its user consents, and allow or deny is honoured', async () => {
      await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, open.tenant.id, {
        dynamicRegistration: true,
      });
      const meta = await json(await fetch(`${openIssuer}/.well-known/openid-configuration`));
      expect(meta.registration_endpoint).toBe(`${openIssuer}/oauth/register`);
      const loopback = 'http://127.0.0.1:33418/callback';
      const res = await register({
        client_name: 'Inspector <b>',
        redirect_uris: [loopback],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      });
      expect(res.status).toBe(201);
      const client = await json(res);
      expect(client.client_id).toMatch(/^app_[0-9A-Za-z]{24}$/);
      expect(client.client_secret).toBeUndefined();
      const row = await app.ctx.database.db
        .selectFrom('apps')
        .select(['type', 'first_party', 'name'])
        .where('id', '=', client.client_id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ type: 'native', first_party: 0, name: 'Inspector <b>' });

      const user = await newUser(open);
      const browser = new OAuthBrowser(app.url);
      const start = () =>
        authorizeUrl({ client_id: client.client_id, redirect_uri: loopback }, openIssuer);
      // The consent page names the app (escaped), the account and what it asks.
      const first = start();
      await expect(browser.browse(first.url, user)).rejects.toThrow(/an interaction page/);
      const denied = await browser.browse(start().url, { consent: 'deny' });
      expect(denied.url.searchParams.get('error')).toBe('access_denied');
      const page = await browser.request(
        (await browser.request(start().url.href)).headers.get('location') ?? '',
      );
      const html = await page.text();
      expect(html).toContain('Allow Inspector &lt;b&gt;?');
      expect(html).toContain(user.email);
      expect(html).toContain('See your e-mail address');
      // What its access token opens, and that nobody vouched for it.
      expect(html).toContain(`Use ${openIssuer}/api as you, with your account&#39;s permissions`);
      expect(html).toContain('registered itself');
      expect(page.headers.get('content-security-policy')).toContain('http://127.0.0.1:33418');
      const { url, verifier } = start();
      const allowed = await browser.browse(url, { consent: 'allow' });
      const code = allowed.url.searchParams.get('code') ?? '';
      const tokens = await fetch(`${openIssuer}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: loopback,
          code_verifier: verifier,
          client_id: client.client_id,
        }),
      });
      expect(tokens.status).toBe(200);
      // A registered native app asks every time (RFC 8252 section 8.6: its loopback
      // redirect proves nothing of who it is); nothing new is asked, so allow is enough.
      const later = await browser.browse(start().url, { consent: 'allow' });
      expect(later.path.some((step) => step.endsWith('/consent'))).toBe(true);
      expect(later.url.searchParams.get('code')).toEqual(expect.any(String));

      // A registered web app (a secret, an https redirect): consent once, remembered.
      const webRes = await register({
        client_name: 'Dashboard',
        redirect_uris: [REDIRECT],
      });
      expect(webRes.status).toBe(201);
      const webClient = await json(webRes);
      expect(webClient.client_secret).toEqual(expect.any(String));
      const stored = await app.ctx.database.db
        .selectFrom('apps')
        .select(['type', 'secret_hash'])
        .where('id', '=', webClient.client_id)
        .executeTakeFirstOrThrow();
      expect(stored.type).toBe('web');
      expect(stored.secret_hash).toBe(
        createHash('sha256').update(webClient.client_secret).digest('hex'),
      );
      const once = await browser.browse(
        authorizeUrl({ client_id: webClient.client_id }, openIssuer).url,
        { consent: 'allow' },
      );
      expect(once.path.some((step) => step.endsWith('/consent'))).toBe(true);
      const twice = await browser.browse(
        authorizeUrl({ client_id: webClient.client_id }, openIssuer).url,
      );
      expect(twice.path.some((step) => step.endsWith('/consent'))).toBe(false);
      expect(twice.url.searchParams.get('code')).toEqual(expect.any(String));
    });

    it('refuses what only an operator may set, URLs it would fetch, floods, and introspection by registered apps', async () => {
      await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, open.tenant.id, {
        dynamicRegistration: true,
      });
      for (const extra of [
        { post_logout_redirect_uris: ['https://evil.example/phish'] },
        { sector_identifier_uri: 'https://127.0.0.1:1/sector' },
        { jwks_uri: 'https://127.0.0.1:1/jwks' },
        { latchkey_first_party: true },
        { contacts: Array.from({ length: 700 }, (_, i) => `c${i}@example.com`) },
      ]) {
        const res = await register({ redirect_uris: [REDIRECT], ...extra });
        expect(res.status, Object.keys(extra)[0]).toBe(400);
        expect(await json(res)).toMatchObject({ error: 'invalid_client_metadata' });
      }
      // A registered app's secret is refused at introspection: only an operator's apps
      // spend the tenant's plan there.
      const made = await json(await register({ redirect_uris: [REDIRECT] }));
      const introspection = await app.request('/api/auth/introspect', {
        method: 'POST',
        headers: {
          authorization: basic(made.client_id, made.client_secret),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'token=x',
      });
      expect(introspection.status).toBe(401);
    });

    it('refuses client credentials, an http redirect off loopback on production, and junk', async () => {
      await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, open.tenant.id, {
        dynamicRegistration: true,
      });
      const cases: [unknown, string][] = [
        [
          { redirect_uris: [REDIRECT], grant_types: ['client_credentials'], response_types: [] },
          'invalid_client_metadata',
        ],
        [{ redirect_uris: ['http://evil.example.com/cb'] }, 'invalid_redirect_uri'],
        [{ redirect_uris: ['https://rp.example.com/cb#frag'] }, 'invalid_redirect_uri'],
        [{ redirect_uris: 'https://rp.example.com/cb' }, 'invalid_redirect_uri'],
        [
          { redirect_uris: Array.from({ length: 30 }, (_, i) => `https://rp.example.com/${i}`) },
          'invalid_client_metadata',
        ],
      ];
      const before = await app.ctx.database.db
        .selectFrom('apps')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      for (const [body, error] of cases) {
        const res = await register(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(await json(res), JSON.stringify(body).slice(0, 80)).toMatchObject({ error });
      }
      const junk = await fetch(`${openIssuer}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"redirect_uris": [',
      });
      expect(junk.status).toBe(400);
      const after = await app.ctx.database.db
        .selectFrom('apps')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(Number(before.n));
    });

    it('one address registers a few apps an hour, then 429', async () => {
      let status = 201;
      for (let i = 0; i < 25 && status !== 429; i++)
        status = (await register({ redirect_uris: [REDIRECT] })).status;
      expect(status).toBe(429);
    });
  });
});
