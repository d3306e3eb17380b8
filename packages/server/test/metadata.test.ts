import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, json, startApp, type TestApp, type TestTenant } from './support.js';

describe.each(DIALECTS)('authorization server metadata on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;

  beforeAll(async () => {
    app = await startApp(dialect);
    t = await app.tenant({ allowedOrigins: ['http://localhost:5173'] });
  });
  afterAll(() => app.dispose());

  it('serves one document at the OpenID path and the RFC 8414 path', async () => {
    const oidc = await app.request(`/t/${t.tenant.id}/.well-known/openid-configuration`);
    const rfc8414 = await app.request(`/.well-known/oauth-authorization-server/t/${t.tenant.id}`);
    for (const res of [oidc, rfc8414]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    }
    const document = await json(oidc);
    expect(await json(rfc8414)).toEqual(document);
    const issuer = `${app.url}/t/${t.tenant.id}`;
    // OpenID Connect Discovery 1.0 section 3 and RFC 8414 section 2, as docs/design.md §14 says.
    expect(document).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      userinfo_endpoint: `${issuer}/oauth/userinfo`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      end_session_endpoint: `${issuer}/oauth/end-session`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      introspection_endpoint: `${app.url}/api/auth/introspect`,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
      code_challenge_methods_supported: ['S256'],
      id_token_signing_alg_values_supported: ['RS256'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      subject_types_supported: ['public'],
      authorization_response_iss_parameter_supported: true,
    });
    expect(document.claims_supported).toEqual(
      expect.arrayContaining(['sub', 'email', 'email_verified', 'name', 'auth_time', 'amr']),
    );
    // Not the implicit flow RFC 9700 section 2.1.2 says not to use; no registration unless on.
    expect(document.response_types_supported).not.toContain('token');
    expect(document.registration_endpoint).toBeUndefined();
  });

  it("names the issuer's own URLs whatever Host or X-Forwarded-* the request came with", async () => {
    const doc = await json(
      await app.request(`/t/${t.tenant.id}/.well-known/openid-configuration`, {
        headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
      }),
    );
    const issuer = `${app.url}/t/${t.tenant.id}`;
    for (const name of [
      'authorization_endpoint',
      'token_endpoint',
      'jwks_uri',
      'end_session_endpoint',
    ])
      expect(doc[name].startsWith(`${issuer}/`), name).toBe(true);
  });

  it('names endpoints that answer: authorization, a non-empty JWKS, introspection', async () => {
    const document = await json(
      await app.request(`/.well-known/oauth-authorization-server/t/${t.tenant.id}`),
    );
    // Without a client: the provider's error page (never a redirect to an unchecked URI).
    const page = await fetch(`${document.authorization_endpoint}?response_type=code`);
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('client_id');
    const jwks = await json(await fetch(document.jwks_uri));
    expect(jwks.keys).toHaveLength(1);
    const introspection = await fetch(document.introspection_endpoint, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${t.tenant.id}:${t.secretKey}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'token=nope',
    });
    expect(await introspection.text()).toBe('{"active":false}');
  });

  it('answers 404 problem+json for a tenant that does not exist, at either path', async () => {
    for (const path of [
      '/.well-known/oauth-authorization-server/t/00000000-0000-4000-8000-000000000000',
      '/.well-known/oauth-authorization-server/t/not-a-uuid',
      '/t/00000000-0000-4000-8000-000000000000/.well-known/openid-configuration',
    ]) {
      const res = await app.request(path);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });
});
