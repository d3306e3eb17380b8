/**
 * docs/design.md §14: relying-party libraries that are not ours (openid-client,
 * oauth4webapi) against a tenant's OpenID Provider in the real server, on every database.
 * Users sign up with a password and sign in through the real hosted form (OAuthBrowser);
 * each library is given only what its documentation asks for: the issuer URL, the client
 * id and the client secret. The refusals are in oidc-provider-refusals.test.ts.
 */
import { createHash } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { describe, expect, it } from 'vitest';
import { updateTenant } from '../../server/src/modules/tenants/index.js';
import { OAuthBrowser } from '../../server/test/oauth-browser.js';
import { DIALECTS, email, postJson } from '../../server/test/support.js';
import {
  bearer,
  insecure,
  LOGGED_OUT,
  options,
  PASSWORD,
  REDIRECT,
  TenantProvider,
} from './oidc-provider.js';

describe.each(DIALECTS)('relying parties against a tenant OpenID Provider on %s', (dialect) => {
  const p = TenantProvider.use(dialect);

  describe('openid-client', () => {
    it('discovers, signs in with code + PKCE + nonce + state on the hosted form, validates the ID token, reads userinfo', async () => {
      const config = await p.discover();
      expect(config.serverMetadata()).toMatchObject({
        issuer: p.issuer,
        authorization_endpoint: `${p.issuer}/oauth/authorize`,
        token_endpoint: `${p.issuer}/oauth/token`,
        userinfo_endpoint: `${p.issuer}/oauth/userinfo`,
        revocation_endpoint: `${p.issuer}/oauth/revoke`,
        end_session_endpoint: `${p.issuer}/oauth/end-session`,
        code_challenge_methods_supported: ['S256'],
      });
      const before = Math.floor(Date.now() / 1_000);
      const { callback, verifier, state, nonce, browser } = await p.signIn(config);
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
        iss: p.issuer,
        aud: p.web.id,
        sub: p.user.id,
        nonce,
        amr: ['pwd'],
        email: p.user.email,
      });
      expect(claims?.auth_time).toBeGreaterThanOrEqual(before);
      expect(claims?.auth_time).toBeLessThanOrEqual(after);
      expect(tokens.token_type).toBe('bearer');

      const info = await client.fetchUserInfo(config, tokens.access_token, p.user.id);
      expect(info).toEqual({ sub: p.user.id, email: p.user.email, email_verified: false });

      // The same browser again: its hosted session signs it in without the form.
      const again = await browser.browse((await p.authorization(config)).url);
      expect(again.path).not.toContain('/sign-in');
      expect(again.url.searchParams.get('code')).toEqual(expect.any(String));
    });

    it('refresh rotates the refresh token; the old one is served within the 5 s grace, replayed after it revokes the grant', async () => {
      const config = await p.discover();
      const { callback, checks } = await p.signIn(config);
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
      await p.app.ctx.database.db
        .updateTable('oauth_artifacts')
        .set((eb) => ({ consumed_at: eb('consumed_at', '-', 6_000) }))
        .where('tenant_id', '=', p.t.tenant.id)
        .where('model', '=', 'RefreshToken')
        // Refresh tokens are kept by their SHA-256 (docs/design.md §14).
        .where('id', '=', createHash('sha256').update(old).digest('hex'))
        .execute();
      await expect(client.refreshTokenGrant(config, old)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
      // The whole grant is gone: the newest refresh token and the access tokens too.
      await expect(client.refreshTokenGrant(config, tab.refresh_token ?? '')).rejects.toMatchObject(
        { error: 'invalid_grant' },
      );
      await expect(
        client.fetchUserInfo(config, second.access_token, p.user.id),
      ).rejects.toMatchObject({ status: 401 });
    });

    it('gets an m2m token with client credentials, and revokes a refresh token (RFC 7009)', async () => {
      const worker = await p.discover(p.m2m.id, p.m2m.secret);
      const machine = await client.clientCredentialsGrant(worker);
      expect(machine).toMatchObject({ token_type: 'bearer', expires_in: expect.any(Number) });
      const as = await p.asOf('oidc');
      const claims = await oauth.validateJwtAccessToken(
        as,
        bearer(machine.access_token),
        `${p.issuer}/api`,
        options,
      );
      expect(claims).toMatchObject({ sub: p.m2m.id, client_id: p.m2m.id, tid: p.t.tenant.id });
      // A user-facing app may not use client credentials (RFC 6749 section 5.2).
      await expect(client.clientCredentialsGrant(await p.discover())).rejects.toMatchObject({
        error: 'unauthorized_client',
      });

      const config = await p.discover();
      const { callback, checks } = await p.signIn(config);
      const got = await client.authorizationCodeGrant(config, callback, checks);
      await client.tokenRevocation(config, got.refresh_token ?? '');
      await expect(client.refreshTokenGrant(config, got.refresh_token ?? '')).rejects.toMatchObject(
        { error: 'invalid_grant' },
      );
      // Its grant's Latchkey session ended with it: the access token no longer reads userinfo.
      await expect(client.fetchUserInfo(config, got.access_token, p.user.id)).rejects.toMatchObject(
        {
          status: 401,
        },
      );
    });

    it('end-session: the logout page confirmed sends the browser to the post-logout URI; the next authorize needs the form again', async () => {
      const config = await p.discover();
      const { callback, checks, browser } = await p.signIn(config);
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
      expect(new URL(action, end).href).toBe(`${p.issuer}/oauth/end-session/confirm`);
      const confirmed = await browser.request(new URL(action, end).href, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: new URL(p.app.url).origin,
        },
        body: new URLSearchParams({ xsrf, logout: 'yes', latchkey_sign_out: 'hosted' }).toString(),
      });
      expect(confirmed.status).toBe(303);
      const back = new URL(confirmed.headers.get('location') ?? '');
      expect(`${back.origin}${back.pathname}`).toBe(LOGGED_OUT);
      expect(back.searchParams.get('state')).toBe('bye');

      // Signed out of the provider and of the hosted pages: the form comes back.
      await expect(browser.browse((await p.authorization(config)).url)).rejects.toThrow(
        /reached the sign-in form/,
      );
      const again = await browser.browse((await p.authorization(config)).url, {
        email: p.user.email,
        password: PASSWORD,
      });
      expect(again.path).toContain('POST /sign-in');
      expect(again.url.searchParams.get('code')).toEqual(expect.any(String));
    });
  });

  describe('end-session, other answers', () => {
    it('"Stay signed in" goes back to the app and keeps the browser signed in', async () => {
      const config = await p.discover();
      const { callback, checks, browser } = await p.signIn(config);
      const tokens = await client.authorizationCodeGrant(config, callback, checks);
      const end = client.buildEndSessionUrl(config, {
        id_token_hint: tokens.id_token ?? '',
        post_logout_redirect_uri: LOGGED_OUT,
      });
      const stayed = await p.answerLogout(browser, end, false);
      expect(stayed.status).toBe(303);
      expect(new URL(stayed.headers.get('location') ?? '').pathname).toBe('/logged-out');
      const again = await browser.browse((await p.authorization(config)).url);
      expect(again.path).not.toContain('/sign-in');
    });

    it('without a post-logout URI the browser lands on the signed-out page', async () => {
      const config = await p.discover();
      const { browser } = await p.signIn(config);
      const end = client.buildEndSessionUrl(config, { client_id: p.web.id });
      const done = await p.answerLogout(browser, end, true);
      expect(done.status).toBe(303);
      const page = await browser.request(new URL(done.headers.get('location') ?? '', end).href);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('You are signed out of');
      await expect(browser.browse((await p.authorization(config)).url)).rejects.toThrow(
        /reached the sign-in form/,
      );
    });

    it('an unregistered post-logout URI is an error page, never a redirect', async () => {
      const config = await p.discover();
      const { callback, checks, browser } = await p.signIn(config);
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

  describe('oauth4webapi', () => {
    it('validates the discovery document strictly at the OpenID and the RFC 8414 paths', async () => {
      const oidc = await p.asOf('oidc');
      const rfc8414 = await p.asOf('oauth2');
      expect(rfc8414).toEqual(oidc);
      expect(oidc).toMatchObject({
        issuer: p.issuer,
        jwks_uri: `${p.issuer}/.well-known/jwks.json`,
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
      const as = await p.asOf('oidc');
      const c: oauth.Client = { client_id: p.web.id };
      const verifier = oauth.generateRandomCodeVerifier();
      const nonce = oauth.generateRandomNonce();
      const state = oauth.generateRandomState();
      const start = new URL(as.authorization_endpoint ?? '');
      for (const [k, v] of Object.entries({
        client_id: p.web.id,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'openid email',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      }))
        start.searchParams.set(k, v);
      const visit = await new OAuthBrowser(p.app.url).browse(start, {
        email: p.user.email,
        password: PASSWORD,
      });
      const params = oauth.validateAuthResponse(as, c, visit.url, state);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        c,
        oauth.ClientSecretBasic(p.web.secret),
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
        iss: p.issuer,
        aud: p.web.id,
        sub: p.user.id,
        nonce,
        amr: ['pwd'],
        email: p.user.email,
      });
      const access = await oauth.validateJwtAccessToken(
        as,
        bearer(result.access_token),
        `${p.issuer}/api`,
        options,
      );
      expect(access).toMatchObject({
        iss: p.issuer,
        aud: `${p.issuer}/api`,
        client_id: p.web.id,
        sub: p.user.id,
        tid: p.t.tenant.id,
        scope: 'openid email',
      });
    });
  });

  describe('what else a relying party relies on', () => {
    it('a public (spa) app signs in with PKCE and no secret (token_endpoint_auth_method none)', async () => {
      const config = await client.discovery(
        new URL(p.issuer),
        p.spa,
        undefined,
        client.None(),
        insecure,
      );
      const { callback, checks } = await p.signIn(config);
      const tokens = await client.authorizationCodeGrant(config, callback, checks);
      expect(tokens.claims()).toMatchObject({ iss: p.issuer, aud: p.spa, sub: p.user.id });
      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token ?? '');
      expect(refreshed.access_token).toEqual(expect.any(String));
      // A browser app calls the token endpoint from the origin of its redirect URI, no other.
      const preflight = (origin: string) =>
        fetch(`${p.issuer}/oauth/token`, {
          method: 'OPTIONS',
          headers: {
            origin,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'content-type',
          },
        });
      const mine = await preflight(new URL(REDIRECT).origin);
      expect(mine.headers.get('access-control-allow-origin')).toBe(new URL(REDIRECT).origin);
      const code = (await p.signIn(config)).callback.searchParams.get('code') ?? '';
      const theirs = await fetch(`${p.issuer}/oauth/token`, {
        method: 'POST',
        headers: {
          origin: 'https://evil.example.com',
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: p.spa }),
      });
      expect(theirs.headers.get('access-control-allow-origin')).toBeNull();
    });

    it.each([
      ['prompt=login', { prompt: 'login' }],
      ['max_age=0', { max_age: '0' }],
    ])(
      '%s asks a signed-in browser for a new sign-in, and auth_time says when',
      async (_name, extra) => {
        const config = await p.discover();
        const { browser } = await p.signIn(config);
        const request = await p.authorization(config, extra);
        await expect(browser.browse(request.url)).rejects.toThrow(/reached the sign-in form/);
        const before = Math.floor(Date.now() / 1_000);
        const visit = await browser.browse(request.url, {
          email: p.user.email,
          password: PASSWORD,
        });
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

    it("signing out on the hosted pages ends the provider's session too", async () => {
      const config = await p.discover();
      const browser = await p.signedOutOnHostedPages(config);
      await expect(browser.browse((await p.authorization(config)).url)).rejects.toThrow(
        /reached the sign-in form/,
      );
    });

    it("login_hint fills in the hosted form's e-mail address", async () => {
      const config = await p.discover();
      const { url } = await p.authorization(config, { login_hint: p.user.email });
      const browser = new OAuthBrowser(p.app.url);
      const reached = await browser.browse(url).catch((error: Error) => error.message);
      const form = /reached the sign-in form: (\S+)/.exec(String(reached))?.[1] ?? '';
      expect(new URL(form).searchParams.get('login_hint')).toBe(p.user.email);
      const page = await (await browser.request(form)).text();
      expect(page).toMatch(
        new RegExp(`id="email"[^>]*value="${p.user.email}"|value="${p.user.email}"[^>]*id="email"`),
      );
    });

    it("the introspection endpoint of the metadata takes the app's own credentials (RFC 7662)", async () => {
      const config = await p.discover();
      const { callback, checks } = await p.signIn(config);
      const tokens = await client.authorizationCodeGrant(config, callback, checks);
      const active = await client.tokenIntrospection(config, tokens.access_token);
      expect(active).toMatchObject({ active: true, sub: p.user.id, client_id: p.web.id });
    });

    it('openid-client registers an app dynamically (RFC 7591) where the tenant allows it; its user consents on the hosted page', async () => {
      const open = await p.app.tenant();
      await updateTenant({ db: p.app.ctx.database.db, bus: p.app.ctx.bus }, open.tenant.id, {
        dynamicRegistration: true,
      });
      const person = { email: email(), password: PASSWORD };
      expect((await postJson(p.app, '/v1/auth/sign-up', open.secretKey, person)).status).toBe(201);
      const loopback = 'http://127.0.0.1:33418/callback';
      const config = await client.dynamicClientRegistration(
        new URL(`${p.app.url}/t/${open.tenant.id}`),
        {
          client_name: 'A desktop tool',
          redirect_uris: [loopback],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        },
        client.None(),
        insecure,
      );
      expect(config.clientMetadata().client_id).toMatch(/^app_/);
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: loopback,
        scope: 'openid email',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      });
      const visit = await new OAuthBrowser(p.app.url).browse(url, { ...person, consent: 'allow' });
      expect(visit.path.some((step) => step.endsWith('/consent'))).toBe(true);
      const tokens = await client.authorizationCodeGrant(config, visit.url, {
        pkceCodeVerifier: verifier,
        expectedState: state,
      });
      expect(tokens.claims()).toMatchObject({ email: person.email });
    });

    it('another resource than the tenant audience is invalid_target (RFC 8707)', async () => {
      const config = await p.discover();
      const { url, state } = await p.authorization(config, {
        resource: 'https://other.example.com/api',
      });
      const visit = await new OAuthBrowser(p.app.url).browse(url, {
        email: p.user.email,
        password: PASSWORD,
      });
      expect(`${visit.url.origin}${visit.url.pathname}`).toBe(REDIRECT);
      expect(Object.fromEntries(visit.url.searchParams)).toMatchObject({
        error: 'invalid_target',
        state,
      });
    });
  });
});
