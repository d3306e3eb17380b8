/**
 * docs/design.md §14: what a tenant's OpenID Provider refuses, each with the error its RFC
 * names, as relying-party libraries that are not ours (openid-client) see it, on every
 * database.
 */
import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import { describe, expect, it } from 'vitest';
import { createApp, deleteApp, rotateAppSecret } from '../../server/src/modules/oauth/index.js';
import { OAuthBrowser } from '../../server/test/oauth-browser.js';
import { DIALECTS } from '../../server/test/support.js';
import { insecure, REDIRECT, TenantProvider } from './oidc-provider.js';

describe.each(DIALECTS)('a tenant OpenID Provider refuses, on %s', (dialect) => {
  const p = TenantProvider.use(dialect);

  describe('refused as the RFCs say', () => {
    it('a redirect URI the app did not register: an error page, never a redirect', async () => {
      const config = await p.discover();
      const { url } = await p.authorization(config, {
        redirect_uri: 'https://evil.example.com/callback',
      });
      const res = await new OAuthBrowser(p.app.url).request(url.href);
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const page = await res.text();
      expect(page).toContain('This sign-in cannot go on');
      expect(page).toContain('redirect_uri did not match any of the client&#39;s registered');
    });

    it('a missing or a wrong PKCE verifier is invalid_grant, and the right one still works', async () => {
      const config = await p.discover();
      const { callback, checks } = await p.signIn(config);
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
      expect(tokens.claims()?.sub).toBe(p.user.id);
    });

    it('a code used twice is invalid_grant, and what the first use issued is revoked (RFC 6749 section 4.1.2)', async () => {
      const config = await p.discover();
      const { callback, checks } = await p.signIn(config);
      const first = await client.authorizationCodeGrant(config, callback, checks);
      await expect(client.authorizationCodeGrant(config, callback, checks)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
      await expect(
        client.refreshTokenGrant(config, first.refresh_token ?? ''),
      ).rejects.toMatchObject({ error: 'invalid_grant' });
      await expect(
        client.fetchUserInfo(config, first.access_token, p.user.id),
      ).rejects.toMatchObject({ status: 401 });
    });

    it('an ID token with another nonce is refused by the library', async () => {
      const config = await p.discover();
      const { callback, checks } = await p.signIn(config);
      await expect(
        client.authorizationCodeGrant(config, callback, {
          ...checks,
          expectedNonce: client.randomNonce(),
        }),
      ).rejects.toMatchObject({ code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' });
    });

    it("another tenant's app: an error page at authorize, invalid_client at the token endpoint", async () => {
      const theirs = await p.discover(p.elsewhere.id, p.elsewhere.secret);
      const { url } = await p.authorization(theirs);
      const res = await new OAuthBrowser(p.app.url).request(url.href);
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
      const config = await p.discover();
      const { callback, checks } = await p.signIn(config);
      await p.app.ctx.database.db
        .updateTable('oauth_artifacts')
        .set({ expires_at: Date.now() - 1_000 })
        .where('tenant_id', '=', p.t.tenant.id)
        .where('model', '=', 'AuthorizationCode')
        // Codes are kept by their SHA-256 (docs/design.md §14).
        .where(
          'id',
          '=',
          createHash('sha256')
            .update(callback.searchParams.get('code') ?? '')
            .digest('hex'),
        )
        .execute();
      await expect(client.authorizationCodeGrant(config, callback, checks)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
    });

    it('prompt=none without a session answers login_required to the redirect URI', async () => {
      const config = await p.discover();
      const { url, state } = await p.authorization(config, { prompt: 'none' });
      const visit = await new OAuthBrowser(p.app.url).browse(url);
      expect(`${visit.url.origin}${visit.url.pathname}`).toBe(REDIRECT);
      expect(Object.fromEntries(visit.url.searchParams)).toMatchObject({
        error: 'login_required',
        state,
        iss: p.issuer,
      });
      await expect(
        client.authorizationCodeGrant(config, visit.url, { expectedState: state }),
      ).rejects.toMatchObject({ error: 'login_required' });
    });

    it('prompt=none after a hosted sign-out answers login_required', async () => {
      const config = await p.discover();
      const browser = await p.signedOutOnHostedPages(config);
      const { url, state } = await p.authorization(config, { prompt: 'none' });
      const silent = await browser.browse(url);
      expect(Object.fromEntries(silent.url.searchParams)).toMatchObject({
        error: 'login_required',
        state,
      });
    });
  });

  describe("an app's credentials", () => {
    it('a rotated secret: the old one works during its grace, is invalid_client after; a deleted app is invalid_client', async () => {
      const deps = { db: p.app.ctx.database.db, bus: p.app.ctx.bus };
      const made = await createApp(deps.db, p.t.tenant.id, { name: 'Rotating', type: 'm2m' });
      const old = made.clientSecret ?? '';
      const withSecret = (secret: string) => p.discover(made.app.id, secret);
      const rotated = await rotateAppSecret(deps, p.t.tenant.id, made.app.id, 60_000);
      const fresh = rotated.clientSecret;
      await expect(client.clientCredentialsGrant(await withSecret(old))).resolves.toMatchObject({
        token_type: 'bearer',
      });
      await expect(client.clientCredentialsGrant(await withSecret(fresh))).resolves.toMatchObject({
        token_type: 'bearer',
      });
      await rotateAppSecret(deps, p.t.tenant.id, made.app.id, 0);
      await expect(client.clientCredentialsGrant(await withSecret(old))).rejects.toMatchObject({
        status: 401,
        error: 'invalid_client',
      });
      const latest = await client.discovery(
        new URL(p.issuer),
        made.app.id,
        undefined,
        client.ClientSecretBasic('not-the-secret'),
        insecure,
      );
      // With HTTP Basic, the 401 carries the challenge of RFC 6749 section 5.2.
      await expect(client.clientCredentialsGrant(latest)).rejects.toMatchObject({
        status: 401,
        cause: [{ scheme: 'basic', parameters: { error: 'invalid_client' } }],
      });
      await deleteApp(deps, p.t.tenant.id, made.app.id);
      await expect(client.clientCredentialsGrant(await withSecret(fresh))).rejects.toMatchObject({
        status: 401,
        error: 'invalid_client',
      });
    });
  });
});
