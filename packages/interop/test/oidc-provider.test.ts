/**
 * docs/design.md §14: relying-party libraries (openid-client, oauth4webapi) against a
 * tenant's OpenID Provider, on every database: discovery, authorization code with PKCE,
 * ID token validation, refresh rotation, client credentials and revocation. The provider
 * runs on its own (server test/oauth-harness.ts), with a stand-in for the hosted sign-in
 * page, until it is mounted in the server.
 */
import { randomBytes } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localBus } from '../../server/src/cache/invalidation.js';
import { createApp } from '../../server/src/modules/oauth/index.js';
import type { Tenant } from '../../server/src/modules/tenants/index.js';
import { createUserWithoutPassword } from '../../server/src/modules/users/index.js';
import {
  type ProviderHarness,
  type SigningIn,
  startProviderHarness,
} from '../../server/test/oauth-harness.js';
import { DIALECTS } from '../../server/test/support.js';

const REDIRECT = 'https://rp.example.com/callback';

describe.each(DIALECTS)('relying parties against a tenant OpenID Provider on %s', (dialect) => {
  const bus = localBus({ cache: true });
  const signingIn: SigningIn = { userId: '', amr: ['pwd'], at: 0 };
  let harness: ProviderHarness;
  let tenant: Tenant;
  let issuer: string;
  let web: { id: string; secret: string };
  let m2m: { id: string; secret: string };

  /** The browser: follows the provider's redirects to the app's callback, with its cookies. */
  async function browse(start: URL): Promise<URL> {
    const jar = new Map<string, string>();
    let url = start.href;
    for (let hop = 0; hop < 10; hop++) {
      const res = await fetch(url, {
        redirect: 'manual',
        headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
      });
      for (const cookie of res.headers.getSetCookie()) {
        const [pair = ''] = cookie.split(';');
        jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
      }
      const location = res.headers.get('location');
      if (!location) throw new Error(`no redirect from ${url}: ${res.status}`);
      url = new URL(location, url).href;
      if (!url.startsWith(harness.base)) return new URL(url);
    }
    throw new Error('too many redirects');
  }

  beforeAll(async () => {
    harness = await startProviderHarness(dialect, {
      tenants: [{ name: 'Acme' }],
      signingIn,
      bus,
    });
    const [acme] = harness.tenants;
    if (!acme) throw new Error('no tenant');
    tenant = acme;
    issuer = `${harness.base}/t/${tenant.id}`;
    const db = harness.database.db;
    const site = await createApp(db, tenant.id, {
      name: 'Site',
      type: 'web',
      redirectUris: [REDIRECT],
    });
    web = { id: site.app.id, secret: site.clientSecret ?? '' };
    const worker = await createApp(db, tenant.id, { name: 'Worker', type: 'm2m' });
    m2m = { id: worker.app.id, secret: worker.clientSecret ?? '' };
    const user = await createUserWithoutPassword(db, tenant, {
      email: 'grace@example.com',
      name: 'Grace',
      emailVerified: true,
    });
    Object.assign(signingIn, { userId: user.id, at: Math.floor(Date.now() / 1000) - 3 });
  });
  afterAll(() => harness?.close());

  describe('openid-client', () => {
    const insecure = { execute: [client.allowInsecureRequests] };

    it('discovers the provider, signs in with code + PKCE, validates the ID token, refreshes', async () => {
      const config = await client.discovery(
        new URL(issuer),
        web.id,
        web.secret,
        undefined,
        insecure,
      );
      expect(config.serverMetadata()).toMatchObject({
        issuer,
        token_endpoint: `${issuer}/oauth/token`,
        code_challenge_methods_supported: ['S256'],
      });
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const start = client.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT,
        scope: 'openid email profile',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      const callback = await browse(start);
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
        idTokenExpected: true,
      });
      expect(tokens.claims()).toMatchObject({
        iss: issuer,
        aud: web.id,
        sub: signingIn.userId,
        nonce,
        auth_time: signingIn.at,
        amr: ['pwd'],
        email: 'grace@example.com',
        name: 'Grace',
      });
      expect(tokens.refresh_token).toEqual(expect.any(String));

      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token ?? '');
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      expect(refreshed.access_token).not.toBe(tokens.access_token);

      // A wrong state in the callback is refused by the library (the provider echoes it).
      const other = await browse(
        client.buildAuthorizationUrl(config, {
          redirect_uri: REDIRECT,
          scope: 'openid',
          code_challenge: await client.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state: 'one',
        }),
      );
      await expect(
        client.authorizationCodeGrant(config, other, {
          pkceCodeVerifier: verifier,
          expectedState: 'another',
        }),
      ).rejects.toMatchObject({ cause: { message: expect.stringMatching(/"state"/) } });
    });

    it('gets an m2m token with client credentials, and revokes a refresh token', async () => {
      const config = await client.discovery(
        new URL(issuer),
        m2m.id,
        m2m.secret,
        undefined,
        insecure,
      );
      const tokens = await client.clientCredentialsGrant(config);
      expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 600 });

      const site = await client.discovery(new URL(issuer), web.id, web.secret, undefined, insecure);
      const verifier = client.randomPKCECodeVerifier();
      const callback = await browse(
        client.buildAuthorizationUrl(site, {
          redirect_uri: REDIRECT,
          scope: 'openid',
          code_challenge: await client.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state: 's',
        }),
      );
      const got = await client.authorizationCodeGrant(site, callback, {
        pkceCodeVerifier: verifier,
        expectedState: 's',
      });
      await client.tokenRevocation(site, got.refresh_token ?? '');
      await expect(client.refreshTokenGrant(site, got.refresh_token ?? '')).rejects.toMatchObject({
        error: 'invalid_grant',
      });
    });
  });

  describe('oauth4webapi', () => {
    const options = { [oauth.allowInsecureRequests]: true };

    it('discovers at the OpenID path, validates the response iss and the ID token', async () => {
      const as = await oauth.processDiscoveryResponse(
        new URL(issuer),
        await oauth.discoveryRequest(new URL(issuer), { algorithm: 'oidc', ...options }),
      );
      expect(as.authorization_response_iss_parameter_supported).toBe(true);
      const c: oauth.Client = { client_id: web.id };
      const auth = oauth.ClientSecretBasic(web.secret);
      const verifier = oauth.generateRandomCodeVerifier();
      const nonce = oauth.generateRandomNonce();
      const start = new URL(as.authorization_endpoint ?? '');
      for (const [k, v] of Object.entries({
        client_id: web.id,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'openid email',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        nonce,
      }))
        start.searchParams.set(k, v);
      const callback = await browse(start);
      const params = oauth.validateAuthResponse(as, c, callback);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        c,
        auth,
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
      const claims = oauth.getValidatedIdTokenClaims(result);
      expect(claims).toMatchObject({ sub: signingIn.userId, email: 'grace@example.com' });

      // The same code again: refused (RFC 6749 section 4.1.2).
      const again = await oauth.authorizationCodeGrantRequest(
        as,
        c,
        auth,
        params,
        REDIRECT,
        verifier,
        options,
      );
      await expect(oauth.processAuthorizationCodeResponse(as, c, again)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
      // Its JWT access token validates as RFC 9068 against the tenant's keys.
      const access = await oauth.validateJwtAccessToken(
        as,
        new Request('https://api.example.com/', {
          headers: { authorization: `Bearer ${result.access_token}` },
        }),
        `${issuer}/api`,
        options,
      );
      expect(access).toMatchObject({ client_id: web.id, sub: signingIn.userId, tid: tenant.id });
    });

    it('a callback from a sign-in started elsewhere (another state) is refused', async () => {
      const as = await oauth.processDiscoveryResponse(
        new URL(issuer),
        await oauth.discoveryRequest(new URL(issuer), { algorithm: 'oidc', ...options }),
      );
      const c: oauth.Client = { client_id: web.id };
      const start = new URL(as.authorization_endpoint ?? '');
      for (const [k, v] of Object.entries({
        client_id: web.id,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'openid',
        code_challenge: await oauth.calculatePKCECodeChallenge(
          randomBytes(32).toString('base64url'),
        ),
        code_challenge_method: 'S256',
        state: 'mine',
      }))
        start.searchParams.set(k, v);
      const callback = await browse(start);
      expect(() => oauth.validateAuthResponse(as, c, callback, 'theirs')).toThrow(/state/);
    });
  });
});
