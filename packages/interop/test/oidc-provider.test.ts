/**
 * docs/design.md §14: relying-party libraries that are not ours (openid-client,
 * oauth4webapi) against a tenant's OpenID Provider in the real server, on every database.
 * Users sign up with a password and sign in through the real hosted form (OAuthBrowser);
 * each library is given only what its documentation asks for: the issuer URL, the client
 * id and the client secret.
 */
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/src/modules/oauth/index.js';
import { OAuthBrowser } from '../../server/test/oauth-browser.js';
import {
  DIALECTS,
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from '../../server/test/support.js';

const REDIRECT = 'https://rp.example.com/callback';
const LOGGED_OUT = 'https://rp.example.com/logged-out';
const PASSWORD = 'correct horse battery staple';
const insecure = { execute: [client.allowInsecureRequests] };
const options = { [oauth.allowInsecureRequests]: true };

describe.each(DIALECTS)('relying parties against a tenant OpenID Provider on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;
  let issuer: string;
  let web: { id: string; secret: string };
  let m2m: { id: string; secret: string };
  let elsewhere: { id: string; secret: string };
  let spa: string;
  const user = { id: '', email: '' };

  beforeAll(async () => {
    app = await startApp(dialect);
    t = await app.tenant({ allowedOrigins: [new URL(REDIRECT).origin] });
    issuer = `${app.url}/t/${t.tenant.id}`;
    const db = app.ctx.database.db;
    const site = await createApp(db, t.tenant.id, {
      name: 'Site',
      type: 'web',
      redirectUris: [REDIRECT],
      postLogoutRedirectUris: [LOGGED_OUT],
    });
    web = { id: site.app.id, secret: site.clientSecret ?? '' };
    const browserApp = await createApp(db, t.tenant.id, {
      name: 'Browser app',
      type: 'spa',
      redirectUris: [REDIRECT],
    });
    spa = browserApp.app.id;
    const worker = await createApp(db, t.tenant.id, { name: 'Worker', type: 'm2m' });
    m2m = { id: worker.app.id, secret: worker.clientSecret ?? '' };
    // Another tenant's app, with the very same redirect URI.
    const other = await app.tenant();
    const theirs = await createApp(db, other.tenant.id, {
      name: 'Theirs',
      type: 'web',
      redirectUris: [REDIRECT],
    });
    elsewhere = { id: theirs.app.id, secret: theirs.clientSecret ?? '' };
    user.email = email();
    const up = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
      email: user.email,
      password: PASSWORD,
    });
    expect(up.status).toBe(201);
    user.id = (await json(up)).userId;
  });
  afterAll(() => app?.dispose());

  const discover = (id = web.id, secret = web.secret) =>
    client.discovery(new URL(issuer), id, secret, undefined, insecure);

  /** An authorization request as openid-client builds it, with its PKCE verifier. */
  async function authorization(config: client.Configuration, extra: Record<string, string> = {}) {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      ...extra,
    });
    return { url, verifier, state, nonce };
  }

  /** A browser that signs in on the hosted form and comes back with a code. */
  async function signIn(config: client.Configuration, browser = new OAuthBrowser(app.url)) {
    const request = await authorization(config);
    const visit = await browser.browse(request.url, { email: user.email, password: PASSWORD });
    expect(visit.path).toContain('POST /sign-in');
    const checks = {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
    };
    return { ...request, callback: visit.url, browser, checks };
  }

  describe('openid-client', () => {
    it('discovers, signs in with code + PKCE + nonce + state on the hosted form, validates the ID token, reads userinfo', async () => {
      const config = await discover();
      expect(config.serverMetadata()).toMatchObject({
        issuer,
        authorization_endpoint: `${issuer}/oauth/authorize`,
        token_endpoint: `${issuer}/oauth/token`,
        userinfo_endpoint: `${issuer}/oauth/userinfo`,
        revocation_endpoint: `${issuer}/oauth/revoke`,
        end_session_endpoint: `${issuer}/oauth/end-session`,
        code_challenge_methods_supported: ['S256'],
      });
      const before = Math.floor(Date.now() / 1_000);
      const { callback, verifier, state, nonce, browser } = await signIn(config);
      const after = Math.ceil(Date.now() / 1_000);
      expect(callback.href.startsWith(`${REDIRECT}?`)).toBe(true);
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      expect(claims).toMatchObject({
        iss: issuer,
        aud: web.id,
        sub: user.id,
        nonce,
        amr: ['pwd'],
        email: user.email,
      });
      expect(claims?.auth_time).toBeGreaterThanOrEqual(before);
      expect(claims?.auth_time).toBeLessThanOrEqual(after);
      expect(tokens.token_type).toBe('bearer');

      const info = await client.fetchUserInfo(config, tokens.access_token, user.id);
      expect(info).toEqual({ sub: user.id, email: user.email, email_verified: false });

      // The same browser again: its hosted session signs it in without the form.
      const again = await browser.browse((await authorization(config)).url);
      expect(again.path).not.toContain('/sign-in');
      expect(again.url.searchParams.get('code')).toEqual(expect.any(String));
    });

    it('refresh rotates the refresh token; the old one is served within the 5 s grace, replayed after it revokes the grant', async () => {
      const config = await discover();
      const { callback, checks } = await signIn(config);
      const first = await client.authorizationCodeGrant(config, callback, checks);
      const old = first.refresh_token ?? '';
      const second = await client.refreshTokenGrant(config, old);
      expect(second.refresh_token).toEqual(expect.any(String));
      expect(second.refresh_token).not.toBe(old);
      expect(second.access_token).not.toBe(first.access_token);
      // A second tab refreshing with the same token at once still rotates (the grace).
      const tab = await client.refreshTokenGrant(config, old);
      expect(tab.refresh_token).not.toBe(second.refresh_token);

      // Six seconds later, as far as the database knows: the replay is a stolen token's.
      await app.ctx.database.db
        .updateTable('oauth_artifacts')
        .set((eb) => ({ consumed_at: eb('consumed_at', '-', 6_000) }))
        .where('tenant_id', '=', t.tenant.id)
        .where('model', '=', 'RefreshToken')
        .where('id', '=', old)
        .execute();
      await expect(client.refreshTokenGrant(config, old)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
      // The whole grant is gone: the newest refresh token and the access tokens too.
      await expect(client.refreshTokenGrant(config, tab.refresh_token ?? '')).rejects.toMatchObject(
        { error: 'invalid_grant' },
      );
      await expect(
        client.fetchUserInfo(config, second.access_token, user.id),
      ).rejects.toMatchObject({ status: 401 });
    });

    it('gets an m2m token with client credentials, and revokes a refresh token (RFC 7009)', async () => {
      const worker = await discover(m2m.id, m2m.secret);
      const machine = await client.clientCredentialsGrant(worker);
      expect(machine).toMatchObject({ token_type: 'bearer', expires_in: expect.any(Number) });
      const as = await asOf('oidc');
      const claims = await oauth.validateJwtAccessToken(
        as,
        bearer(machine.access_token),
        `${issuer}/api`,
        options,
      );
      expect(claims).toMatchObject({ sub: m2m.id, client_id: m2m.id, tid: t.tenant.id });
      // A user-facing app may not use client credentials (RFC 6749 section 5.2).
      await expect(client.clientCredentialsGrant(await discover())).rejects.toMatchObject({
        error: 'unauthorized_client',
      });

      const config = await discover();
      const { callback, checks } = await signIn(config);
      const got = await client.authorizationCodeGrant(config, callback, checks);
      await client.tokenRevocation(config, got.refresh_token ?? '');
      await expect(client.refreshTokenGrant(config, got.refresh_token ?? '')).rejects.toMatchObject(
        { error: 'invalid_grant' },
      );
      // Its grant's Latchkey session ended with it: the access token no longer reads userinfo.
      await expect(client.fetchUserInfo(config, got.access_token, user.id)).rejects.toMatchObject({
        status: 401,
      });
    });

    it('end-session: the logout page confirmed sends the browser to the post-logout URI; the next authorize needs the form again', async () => {
      const config = await discover();
      const { callback, checks, browser } = await signIn(config);
      const tokens = await client.authorizationCodeGrant(config, callback, checks);
      const end = client.buildEndSessionUrl(config, {
        id_token_hint: tokens.id_token ?? '',
        post_logout_redirect_uri: LOGGED_OUT,
        state: 'bye',
      });
      const page = await browser.request(end.href);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('Site asks to sign you out');
      const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1] ?? '';
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
      expect(new URL(action, end).href).toBe(`${issuer}/oauth/end-session/confirm`);
      const confirmed = await browser.request(new URL(action, end).href, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: new URL(app.url).origin,
        },
        body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
      });
      expect(confirmed.status).toBe(303);
      const back = new URL(confirmed.headers.get('location') ?? '');
      expect(`${back.origin}${back.pathname}`).toBe(LOGGED_OUT);
      expect(back.searchParams.get('state')).toBe('bye');

      // Signed out of the provider and of the hosted pages: the form comes back.
      await expect(browser.browse((await authorization(config)).url)).rejects.toThrow(
        /reached the sign-in form/,
      );
      const again = await browser.browse((await authorization(config)).url, {
        email: user.email,
        password: PASSWORD,
      });
      expect(again.path).toContain('POST /sign-in');
      expect(again.url.searchParams.get('code')).toEqual(expect.any(String));
    });
  });

  /** The logout page's form, answered `yes` (sign out) or with "Stay signed in". */
  async function answerLogout(browser: OAuthBrowser, end: URL, signOut: boolean) {
    const page = await browser.request(end.href);
    expect(page.status).toBe(200);
    const html = await page.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1] ?? '';
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    return browser.request(new URL(action, end).href, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: new URL(app.url).origin,
      },
      body: new URLSearchParams({ xsrf, ...(signOut ? { logout: 'yes' } : {}) }).toString(),
    });
  }

  describe('end-session, other answers', () => {
    it('"Stay signed in" goes back to the app and keeps the browser signed in', async () => {
      const config = await discover();
      const { callback, checks, browser } = await signIn(config);
      const tokens = await client.authorizationCodeGrant(config, callback, checks);
      const end = client.buildEndSessionUrl(config, {
        id_token_hint: tokens.id_token ?? '',
        post_logout_redirect_uri: LOGGED_OUT,
      });
      const stayed = await answerLogout(browser, end, false);
      expect(stayed.status).toBe(303);
      expect(new URL(stayed.headers.get('location') ?? '').pathname).toBe('/logged-out');
      const again = await browser.browse((await authorization(config)).url);
      expect(again.path).not.toContain('/sign-in');
    });

    it('without a post-logout URI the browser lands on the signed-out page', async () => {
      const config = await discover();
      const { browser } = await signIn(config);
      const end = client.buildEndSessionUrl(config, { client_id: web.id });
      const done = await answerLogout(browser, end, true);
      expect(done.status).toBe(303);
      const page = await browser.request(new URL(done.headers.get('location') ?? '', end).href);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('You are signed out of');
      await expect(browser.browse((await authorization(config)).url)).rejects.toThrow(
        /reached the sign-in form/,
      );
    });

    it('an unregistered post-logout URI is an error page, never a redirect', async () => {
      const config = await discover();
      const { callback, checks, browser } = await signIn(config);
      const tokens = await client.authorizationCodeGrant(config, callback, checks);
      const end = client.buildEndSessionUrl(config, {
        id_token_hint: tokens.id_token ?? '',
        post_logout_redirect_uri: 'https://evil.example.com/',
      });
      // What a browser asks for (without it, node-oidc-provider answers JSON).
      const res = await browser.request(end.href, { headers: { accept: 'text/html' } });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.text()).toContain('post_logout_redirect_uri not registered');
    });
  });

  /** The provider's metadata, read and checked by oauth4webapi at one of its two paths. */
  async function asOf(algorithm: 'oidc' | 'oauth2') {
    const response = await oauth.discoveryRequest(new URL(issuer), { algorithm, ...options });
    expect(response.url).toBe(
      algorithm === 'oidc'
        ? `${issuer}/.well-known/openid-configuration`
        : `${app.url}/.well-known/oauth-authorization-server/t/${t.tenant.id}`,
    );
    return oauth.processDiscoveryResponse(new URL(issuer), response);
  }

  const bearer = (token: string) =>
    new Request('https://api.example.com/', { headers: { authorization: `Bearer ${token}` } });

  describe('oauth4webapi', () => {
    it('validates the discovery document strictly at the OpenID and the RFC 8414 paths', async () => {
      const oidc = await asOf('oidc');
      const rfc8414 = await asOf('oauth2');
      expect(rfc8414).toEqual(oidc);
      expect(oidc).toMatchObject({
        issuer,
        jwks_uri: `${issuer}/.well-known/jwks.json`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        grant_types_supported: expect.arrayContaining([
          'authorization_code',
          'refresh_token',
          'client_credentials',
        ]),
        scopes_supported: expect.arrayContaining(['openid', 'profile', 'email', 'offline_access']),
        token_endpoint_auth_methods_supported: expect.arrayContaining([
          'client_secret_basic',
          'client_secret_post',
          'none',
        ]),
        authorization_response_iss_parameter_supported: true,
      });
    });

    it('validates the ID token and the RFC 9068 access token', async () => {
      const as = await asOf('oidc');
      const c: oauth.Client = { client_id: web.id };
      const verifier = oauth.generateRandomCodeVerifier();
      const nonce = oauth.generateRandomNonce();
      const state = oauth.generateRandomState();
      const start = new URL(as.authorization_endpoint ?? '');
      for (const [k, v] of Object.entries({
        client_id: web.id,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'openid email',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      }))
        start.searchParams.set(k, v);
      const visit = await new OAuthBrowser(app.url).browse(start, {
        email: user.email,
        password: PASSWORD,
      });
      const params = oauth.validateAuthResponse(as, c, visit.url, state);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        c,
        oauth.ClientSecretBasic(web.secret),
        params,
        REDIRECT,
        verifier,
        options,
      );
      const result = await oauth.processAuthorizationCodeResponse(as, c, response, {
        expectedNonce: nonce,
        requireIdToken: true,
        maxAge: 3_600,
      });
      expect(oauth.getValidatedIdTokenClaims(result)).toMatchObject({
        iss: issuer,
        aud: web.id,
        sub: user.id,
        nonce,
        amr: ['pwd'],
        email: user.email,
      });
      const access = await oauth.validateJwtAccessToken(
        as,
        bearer(result.access_token),
        `${issuer}/api`,
        options,
      );
      expect(access).toMatchObject({
        iss: issuer,
        aud: `${issuer}/api`,
        client_id: web.id,
        sub: user.id,
        tid: t.tenant.id,
        scope: 'openid email',
      });
    });
  });

  describe('what else a relying party relies on', () => {
    it('a public (spa) app signs in with PKCE and no secret (token_endpoint_auth_method none)', async () => {
      const config = await client.discovery(
        new URL(issuer),
        spa,
        undefined,
        client.None(),
        insecure,
      );
      const { callback, checks } = await signIn(config);
      const tokens = await client.authorizationCodeGrant(config, callback, checks);
      expect(tokens.claims()).toMatchObject({ iss: issuer, aud: spa, sub: user.id });
      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token ?? '');
      expect(refreshed.access_token).toEqual(expect.any(String));
      // A browser app calls the token endpoint from the origin of its redirect URI, no other.
      const preflight = (origin: string) =>
        fetch(`${issuer}/oauth/token`, {
          method: 'OPTIONS',
          headers: {
            origin,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'content-type',
          },
        });
      const mine = await preflight(new URL(REDIRECT).origin);
      expect(mine.headers.get('access-control-allow-origin')).toBe(new URL(REDIRECT).origin);
      const code = (await signIn(config)).callback.searchParams.get('code') ?? '';
      const theirs = await fetch(`${issuer}/oauth/token`, {
        method: 'POST',
        headers: {
          origin: 'https://evil.example.com',
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: spa }),
      });
      expect(theirs.headers.get('access-control-allow-origin')).toBeNull();
    });

    it.each([
      ['prompt=login', { prompt: 'login' }],
      ['max_age=0', { max_age: '0' }],
    ])(
      '%s asks a signed-in browser for a new sign-in, and auth_time says when',
      async (_name, extra) => {
        const config = await discover();
        const { browser } = await signIn(config);
        // That sign-in was a minute ago (a sign-in within seconds of the request counts as
        // the new one: interaction-pages.ts allows clocks 5 s apart).
        await app.ctx.database.db
          .updateTable('hosted_sessions')
          .set((eb) => ({ created_at: eb('created_at', '-', 60_000) }))
          .where('tenant_id', '=', t.tenant.id)
          .where('user_id', '=', user.id)
          .execute();
        const request = await authorization(config, extra);
        await expect(browser.browse(request.url)).rejects.toThrow(/reached the sign-in form/);
        const before = Math.floor(Date.now() / 1_000);
        const visit = await browser.browse(request.url, { email: user.email, password: PASSWORD });
        expect(visit.path).toContain('POST /sign-in');
        const tokens = await client.authorizationCodeGrant(config, visit.url, {
          pkceCodeVerifier: request.verifier,
          expectedState: request.state,
          expectedNonce: request.nonce,
          ...('max_age' in extra ? { maxAge: 0 } : {}),
        });
        expect(tokens.claims()?.auth_time).toBeGreaterThanOrEqual(before);
      },
    );

    /** A browser signed in to the app through the provider, then signed out on the hosted pages. */
    async function signedOutOnHostedPages(config: client.Configuration) {
      const { browser } = await signIn(config);
      const query = new URLSearchParams({
        pk: t.publishableKey,
        redirect_url: `${new URL(REDIRECT).origin}/`,
      });
      const ask = await browser.request(`/sign-out?${query}`);
      expect(ask.status).toBe(200);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await ask.text())?.[1] ?? '';
      const out = await browser.request(`/sign-out?${query}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: new URL(app.url).origin,
        },
        body: new URLSearchParams({ _csrf: csrf }).toString(),
      });
      expect(out.status).toBe(303);
      return browser;
    }

    it("signing out on the hosted pages ends the provider's session too", async () => {
      const config = await discover();
      const browser = await signedOutOnHostedPages(config);
      await expect(browser.browse((await authorization(config)).url)).rejects.toThrow(
        /reached the sign-in form/,
      );
    });

    // KNOWN BUG, flip to `it` once fixed: the provider's extra login check `hosted_session`
    // (modules/oauth/provider.ts, loginPolicy) is made without an error, so node-oidc-provider
    // answers prompt=none with its fallback `interaction_required`, where OpenID Connect Core
    // section 3.1.2.6 says `login_required` (the user must sign in). Passing 'login_required'
    // as the Check's third argument fixes it.
    it.fails('prompt=none after a hosted sign-out answers login_required', async () => {
      const config = await discover();
      const browser = await signedOutOnHostedPages(config);
      const { url, state } = await authorization(config, { prompt: 'none' });
      const silent = await browser.browse(url);
      expect(Object.fromEntries(silent.url.searchParams)).toMatchObject({
        error: 'login_required',
        state,
      });
    });

    // NOT BUILT YET, flip to `it` once it is (docs/design.md §14 lists "app credentials at
    // introspection" as still to build): the metadata names /api/auth/introspect with
    // client_secret_basic and client_secret_post, but it takes only the tenant id and a
    // secret key as client credentials, so an app following discovery gets a 401.
    it.fails("the introspection endpoint of the metadata takes the app's own credentials (RFC 7662)", async () => {
      const config = await discover();
      const { callback, checks } = await signIn(config);
      const tokens = await client.authorizationCodeGrant(config, callback, checks);
      const active = await client.tokenIntrospection(config, tokens.access_token);
      expect(active).toMatchObject({ active: true, sub: user.id, client_id: web.id });
    });

    it('another resource than the tenant audience is invalid_target (RFC 8707)', async () => {
      const config = await discover();
      const { url, state } = await authorization(config, {
        resource: 'https://other.example.com/api',
      });
      const visit = await new OAuthBrowser(app.url).browse(url, {
        email: user.email,
        password: PASSWORD,
      });
      expect(`${visit.url.origin}${visit.url.pathname}`).toBe(REDIRECT);
      expect(Object.fromEntries(visit.url.searchParams)).toMatchObject({
        error: 'invalid_target',
        state,
      });
    });
  });

  describe('refused as the RFCs say', () => {
    it('a redirect URI the app did not register: an error page, never a redirect', async () => {
      const config = await discover();
      const { url } = await authorization(config, {
        redirect_uri: 'https://evil.example.com/callback',
      });
      const res = await new OAuthBrowser(app.url).request(url.href);
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const page = await res.text();
      expect(page).toContain('This sign-in cannot go on');
      expect(page).toContain('redirect_uri did not match any of the client&#39;s registered');
    });

    it('a missing or a wrong PKCE verifier is invalid_grant, and the right one still works', async () => {
      const config = await discover();
      const { callback, checks } = await signIn(config);
      const { pkceCodeVerifier, ...rest } = checks;
      await expect(client.authorizationCodeGrant(config, callback, rest)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
      await expect(
        client.authorizationCodeGrant(config, callback, {
          ...rest,
          pkceCodeVerifier: client.randomPKCECodeVerifier(),
        }),
      ).rejects.toMatchObject({ error: 'invalid_grant' });
      const tokens = await client.authorizationCodeGrant(config, callback, checks);
      expect(tokens.claims()?.sub).toBe(user.id);
    });

    it('a code used twice is invalid_grant, and what the first use issued is revoked (RFC 6749 section 4.1.2)', async () => {
      const config = await discover();
      const { callback, checks } = await signIn(config);
      const first = await client.authorizationCodeGrant(config, callback, checks);
      await expect(client.authorizationCodeGrant(config, callback, checks)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
      await expect(
        client.refreshTokenGrant(config, first.refresh_token ?? ''),
      ).rejects.toMatchObject({ error: 'invalid_grant' });
      await expect(client.fetchUserInfo(config, first.access_token, user.id)).rejects.toMatchObject(
        { status: 401 },
      );
    });

    it('an ID token with another nonce is refused by the library', async () => {
      const config = await discover();
      const { callback, checks } = await signIn(config);
      await expect(
        client.authorizationCodeGrant(config, callback, {
          ...checks,
          expectedNonce: client.randomNonce(),
        }),
      ).rejects.toMatchObject({ code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' });
    });

    it("another tenant's app: an error page at authorize, invalid_client at the token endpoint", async () => {
      const theirs = await discover(elsewhere.id, elsewhere.secret);
      const { url } = await authorization(theirs);
      const res = await new OAuthBrowser(app.url).request(url.href);
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      const page = await res.text();
      expect(page).toContain('This sign-in cannot go on');
      expect(page).toContain('client is invalid');
      await expect(client.clientCredentialsGrant(theirs)).rejects.toMatchObject({
        status: 401,
        error: 'invalid_client',
      });
    });

    it('an expired code is invalid_grant', async () => {
      const config = await discover();
      const { callback, checks } = await signIn(config);
      await app.ctx.database.db
        .updateTable('oauth_artifacts')
        .set({ expires_at: Date.now() - 1_000 })
        .where('tenant_id', '=', t.tenant.id)
        .where('model', '=', 'AuthorizationCode')
        .where('id', '=', callback.searchParams.get('code') ?? '')
        .execute();
      await expect(client.authorizationCodeGrant(config, callback, checks)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
    });

    it('prompt=none without a session answers login_required to the redirect URI', async () => {
      const config = await discover();
      const { url, state } = await authorization(config, { prompt: 'none' });
      const visit = await new OAuthBrowser(app.url).browse(url);
      expect(`${visit.url.origin}${visit.url.pathname}`).toBe(REDIRECT);
      expect(Object.fromEntries(visit.url.searchParams)).toMatchObject({
        error: 'login_required',
        state,
        iss: issuer,
      });
      await expect(
        client.authorizationCodeGrant(config, visit.url, { expectedState: state }),
      ).rejects.toMatchObject({ error: 'login_required' });
    });
  });
});
