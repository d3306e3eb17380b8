/**
 * The libraries teams already run, unmodified, against the real server: openid-client,
 * oauth4webapi and jose. Each must discover the tenant, introspect with its own default
 * client authentication, and verify access tokens with issuer, audience and typ.
 */
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../../server/src/modules/tenants/index.js';
import type { TestApp, TestTenant } from '../../server/test/support.js';
import { audienceOf, issuerOf, signIn, startLatchkey, type Tokens } from './latchkey.js';

let app: TestApp;
let t: TestTenant;
let other: TestTenant;
let ada: Tokens;
let theirs: Tokens;

beforeAll(async () => {
  app = await startLatchkey();
  [t, other] = await Promise.all([app.tenant(), app.tenant()]);
  [ada, theirs] = await Promise.all([signIn(app, t), signIn(app, other)]);
});
afterAll(() => app.dispose());

describe('openid-client', () => {
  // The server under test listens on plain http on loopback.
  const insecure = { execute: [client.allowInsecureRequests] };

  it('discovers the tenant and introspects with its default client authentication', async () => {
    const config = await client.discovery(
      new URL(issuerOf(app, t)),
      t.tenant.id,
      t.secretKey,
      undefined,
      insecure,
    );
    expect(config.serverMetadata()).toMatchObject({
      issuer: issuerOf(app, t),
      introspection_endpoint: `${app.url}/api/auth/introspect`,
    });
    const active = await client.tokenIntrospection(config, ada.accessToken);
    expect(active).toMatchObject({
      active: true,
      sub: ada.user.id,
      aud: audienceOf(app, t),
      client_id: t.tenant.id,
    });
    expect(await client.tokenIntrospection(config, theirs.accessToken)).toEqual({
      active: false,
    });
  });

  it('introspects with client_secret_basic too, and fails on a wrong secret', async () => {
    const basic = await client.discovery(
      new URL(issuerOf(app, t)),
      t.tenant.id,
      undefined,
      client.ClientSecretBasic(t.secretKey),
      insecure,
    );
    expect((await client.tokenIntrospection(basic, ada.accessToken)).active).toBe(true);
    const wrong = await client.discovery(
      new URL(issuerOf(app, t)),
      t.tenant.id,
      undefined,
      client.ClientSecretBasic(other.secretKey),
      insecure,
    );
    await expect(client.tokenIntrospection(wrong, ada.accessToken)).rejects.toMatchObject({
      status: 401,
    });
  });
});

describe('oauth4webapi', () => {
  const options = { [oauth.allowInsecureRequests]: true };

  async function discover(tenant: TestTenant) {
    const issuer = new URL(issuerOf(app, tenant));
    // RFC 8414 section 3: /.well-known/oauth-authorization-server/t/{tenant_id}
    const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...options });
    expect(response.url).toBe(
      `${app.url}/.well-known/oauth-authorization-server/t/${tenant.tenant.id}`,
    );
    return oauth.processDiscoveryResponse(issuer, response);
  }

  it('discovers the tenant at the RFC 8414 path and introspects (client_secret_post and basic)', async () => {
    const as = await discover(t);
    expect(as.introspection_endpoint_auth_methods_supported).toEqual([
      'client_secret_basic',
      'client_secret_post',
    ]);
    const c: oauth.Client = { client_id: t.tenant.id };
    for (const auth of [
      oauth.ClientSecretPost(t.secretKey),
      oauth.ClientSecretBasic(t.secretKey),
    ]) {
      const response = await oauth.introspectionRequest(as, c, auth, ada.accessToken, options);
      const result = await oauth.processIntrospectionResponse(as, c, response);
      expect(result).toMatchObject({
        active: true,
        client_id: t.tenant.id,
        aud: audienceOf(app, t),
      });
    }
  });

  it("validates the tenant's access tokens as RFC 9068 JWTs, and refuses the others", async () => {
    const as = await discover(t);
    const request = (token: string) =>
      new Request(`${app.url}/api/me`, { headers: { authorization: `Bearer ${token}` } });
    const claims = await oauth.validateJwtAccessToken(
      as,
      request(ada.accessToken),
      audienceOf(app, t),
      options,
    );
    expect(claims).toMatchObject({ sub: ada.user.id, client_id: t.tenant.id, tid: t.tenant.id });
    await expect(
      oauth.validateJwtAccessToken(
        as,
        request(ada.accessToken),
        'https://billing.example',
        options,
      ),
    ).rejects.toThrow(/aud/);
    await expect(
      oauth.validateJwtAccessToken(as, request(theirs.accessToken), audienceOf(app, t), options),
    ).rejects.toThrow();
  });
});

describe('jose', () => {
  it('verifies with the remote key set, issuer, audience and typ', async () => {
    const keys = createRemoteJWKSet(new URL(`${issuerOf(app, t)}/.well-known/jwks.json`));
    const verify = (token: string, audience = audienceOf(app, t)) =>
      jwtVerify(token, keys, {
        issuer: issuerOf(app, t),
        audience,
        typ: 'at+jwt',
        algorithms: ['RS256'],
      });
    expect((await verify(ada.accessToken)).payload).toMatchObject({
      sub: ada.user.id,
      client_id: t.tenant.id,
    });
    await expect(verify(ada.accessToken, 'https://billing.example')).rejects.toThrow(/aud/);
    await expect(verify(theirs.accessToken)).rejects.toThrow();
  });

  it("follows the tenant's own audience once it sets one", async () => {
    const api = await app.tenant();
    await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, api.tenant.id, {
      audience: 'https://api.example.com',
    });
    const token = (await signIn(app, api)).accessToken;
    const keys = createRemoteJWKSet(new URL(`${issuerOf(app, api)}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(token, keys, {
      issuer: issuerOf(app, api),
      audience: 'https://api.example.com',
      typ: 'at+jwt',
    });
    expect(payload.aud).toBe('https://api.example.com');
  });

  it("loads a new tenant's key set before any token exists", async () => {
    const fresh = await app.tenant();
    const keys = createRemoteJWKSet(new URL(`${issuerOf(app, fresh)}/.well-known/jwks.json`));
    await keys.reload();
    expect(keys.jwks()?.keys).toHaveLength(1);
  });
});
