/**
 * A tenant's OpenID Provider (docs/design.md §14, modules/oauth/provider.ts) as
 * node-oidc-provider serves it, on every database, before it is mounted in the server:
 * its discovery document, and the client-credentials grant of an m2m app: an RFC 9068
 * access token signed with the tenant's key, secrets checked against their hashes (the
 * previous one during its grace period), RFC 6749 section 5.2 errors.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { localBus } from '../src/cache/invalidation.js';
import { introspect } from '../src/modules/introspection/index.js';
import { createApp, deleteApp, rotateAppSecret } from '../src/modules/oauth/index.js';
import type { OAuthProviders } from '../src/modules/oauth/registry.js';
import { Sessions, type SigningKeys } from '../src/modules/sessions/index.js';
import type { Tenant } from '../src/modules/tenants/index.js';
import { createUserWithoutPassword } from '../src/modules/users/index.js';
import type { Database } from '../src/storage/index.js';
import { type ProviderHarness, type SigningIn, startProviderHarness } from './oauth-harness.js';
import { type Body, DIALECTS } from './support.js';

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe.each(DIALECTS)('tenant OpenID Provider on %s', (dialect) => {
  let database: Database;
  let base: string;
  let signingKeys: SigningKeys;
  let tenant: Tenant;
  let other: Tenant;
  let m2m: { id: string; secret: string };
  const bus = localBus({ cache: true });
  let providers: OAuthProviders;
  const printed = vi.fn();
  /** Who the stand-in sign-in page signs in, how and when (seconds). */
  const signingIn: SigningIn = { userId: '', amr: ['pwd'], at: 0 };

  const issuer = (t: Tenant = tenant) => `${base}/t/${t.id}`;
  const token = (body: Record<string, string>, authorization?: string, t: Tenant = tenant) =>
    fetch(`${issuer(t)}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(authorization ? { authorization } : {}),
      },
      body: new URLSearchParams(body),
    });
  const credentials = (id: string, secret: string, extra: Record<string, string> = {}) =>
    token({ grant_type: 'client_credentials', ...extra }, basic(id, secret));
  const expectError = async (res: Response, status: number, error: string) => {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as Body;
    expect(body).toMatchObject({ error, error_description: expect.any(String) });
    return body;
  };

  let harness: ProviderHarness;

  beforeAll(async () => {
    for (const method of ['info', 'warn', 'log', 'error'] as const)
      vi.spyOn(console, method).mockImplementation(printed);
    harness = await startProviderHarness(dialect, {
      tenants: [{ name: 'Acme', accessTokenTtl: 900 }, { name: 'Other' }],
      signingIn,
      bus,
    });
    ({ base, database, signingKeys, providers } = harness);
    const [acme, second] = harness.tenants;
    if (!acme || !second) throw new Error('the harness made no tenants');
    tenant = acme;
    other = second;
    const made = await createApp(database.db, tenant.id, { name: 'Worker', type: 'm2m' });
    m2m = { id: made.app.id, secret: made.clientSecret ?? '' };
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await harness?.close();
  });

  it('publishes discovery with the endpoints of §14 under the issuer', async () => {
    const res = await fetch(`${issuer()}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Body;
    expect(doc).toMatchObject({
      issuer: issuer(),
      authorization_endpoint: `${issuer()}/oauth/authorize`,
      token_endpoint: `${issuer()}/oauth/token`,
      revocation_endpoint: `${issuer()}/oauth/revoke`,
      jwks_uri: `${issuer()}/.well-known/jwks.json`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      id_token_signing_alg_values_supported: ['RS256'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      authorization_response_iss_parameter_supported: true,
    });
    expect(doc.grant_types_supported).toEqual(
      expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials']),
    );
    expect(doc.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(['client_secret_basic', 'client_secret_post', 'none']),
    );
    expect(doc.claims_supported).toEqual(
      expect.arrayContaining(['sub', 'auth_time', 'amr', 'email', 'email_verified', 'name']),
    );
    // Not built yet, so not announced: DPoP, PAR, dynamic registration.
    for (const key of [
      'dpop_signing_alg_values_supported',
      'pushed_authorization_request_endpoint',
      'registration_endpoint',
    ])
      expect(doc).not.toHaveProperty(key);
  });

  it('an m2m app gets an RFC 9068 access token for the tenant audience, signed with its key', async () => {
    const res = await credentials(m2m.id, m2m.secret);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as Body;
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(body).not.toHaveProperty('refresh_token');
    const { kid } = await signingKeys.active(tenant.id);
    expect(decodeProtectedHeader(body.access_token)).toEqual({ alg: 'RS256', typ: 'at+jwt', kid });
    const { payload } = await jwtVerify(
      body.access_token,
      createLocalJWKSet(await signingKeys.jwks(tenant.id)),
      { issuer: issuer(), audience: `${issuer()}/api`, typ: 'at+jwt' },
    );
    expect(payload).toEqual({
      iss: issuer(),
      aud: `${issuer()}/api`,
      sub: m2m.id,
      client_id: m2m.id,
      tid: tenant.id,
      scope: '',
      jti: expect.any(String),
      iat: expect.any(Number),
      exp: (payload.iat ?? 0) + 900,
    });

    // client_secret_post works too (RFC 6749 section 2.3.1).
    const posted = await token({
      grant_type: 'client_credentials',
      client_id: m2m.id,
      client_secret: m2m.secret,
    });
    expect(posted.status).toBe(200);
  });

  it('refuses a wrong secret, another tenant and an unknown client with invalid_client (401)', async () => {
    // Its last character changed: a base62 secret ends in 'x' one time in 62.
    const last = m2m.secret.endsWith('x') ? 'y' : 'x';
    const wrong = await credentials(m2m.id, `${m2m.secret.slice(0, -1)}${last}`);
    await expectError(wrong, 401, 'invalid_client');
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic /);
    const elsewhere = await token(
      { grant_type: 'client_credentials' },
      basic(m2m.id, m2m.secret),
      other,
    );
    await expectError(elsewhere, 401, 'invalid_client');
    await expectError(await credentials('app_nope', m2m.secret), 401, 'invalid_client');
  });

  it('asks for a known resource only: another is invalid_target', async () => {
    const res = await credentials(m2m.id, m2m.secret, { resource: 'https://evil.example/' });
    await expectError(res, 400, 'invalid_target');
  });

  it('client credentials are for m2m apps only: a web or spa app is unauthorized_client', async () => {
    const web = await createApp(database.db, tenant.id, {
      name: 'Site',
      type: 'web',
      redirectUris: ['https://app.example.com/callback'],
    });
    const res = await credentials(web.app.id, web.clientSecret ?? '');
    await expectError(res, 400, 'unauthorized_client');
    // A public client (no secret) is refused the same way.
    const spa = await createApp(database.db, tenant.id, {
      name: 'Browser',
      type: 'spa',
      redirectUris: ['https://app.example.com/'],
    });
    const open = await token({ grant_type: 'client_credentials', client_id: spa.app.id });
    await expectError(open, 400, 'unauthorized_client');
  });

  it('after rotation the old secret works for its grace period only; a deleted app at once stops', async () => {
    const made = await createApp(database.db, tenant.id, { name: 'Rotor', type: 'm2m' });
    const old = made.clientSecret ?? '';
    const rotated = await rotateAppSecret({ db: database.db, bus }, tenant.id, made.app.id, 60_000);
    expect((await credentials(made.app.id, rotated.clientSecret)).status).toBe(200);
    expect((await credentials(made.app.id, old)).status).toBe(200);
    await database.db
      .updateTable('apps')
      .set({ previous_secret_expires_at: Date.now() - 1 })
      .where('id', '=', made.app.id)
      .execute();
    await expectError(await credentials(made.app.id, old), 401, 'invalid_client');

    const again = await rotateAppSecret({ db: database.db, bus }, tenant.id, made.app.id, 0);
    await expectError(await credentials(made.app.id, rotated.clientSecret), 401, 'invalid_client');
    expect((await credentials(made.app.id, again.clientSecret)).status).toBe(200);

    await deleteApp({ db: database.db, bus }, tenant.id, made.app.id);
    await expectError(await credentials(made.app.id, again.clientSecret), 401, 'invalid_client');
  });

  it('keeps one provider per tenant until its signing key or its settings change', async () => {
    const [first, again] = await Promise.all([providers.get(tenant), providers.get(tenant)]);
    expect(again).toBe(first);
    const theirs = await providers.get(other);
    expect(theirs).not.toBe(first);

    await bus.publish(`signing-key:${tenant.id}/some-kid`);
    const rebuilt = await providers.get(tenant);
    expect(rebuilt).not.toBe(first);
    expect(await providers.get(other)).toBe(theirs);

    await bus.publish(`tenant:${other.id}`);
    expect(await providers.get(other)).not.toBe(theirs);
    const before = await providers.get(tenant);
    await bus.publish('*');
    expect(await providers.get(tenant)).not.toBe(before);
    // A rebuilt provider serves as before.
    expect((await credentials(m2m.id, m2m.secret)).status).toBe(200);
  });

  describe('authorization code with PKCE, for a first-party web app', () => {
    const REDIRECT = 'https://app.example.com/callback';
    let web: { id: string; secret: string };
    let userId: string;
    const jar = new Map<string, string>();
    const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
    const exchange = (body: Record<string, string>) => token(body, basic(web.id, web.secret));

    /** Follows the redirects of an authorization request to the app's redirect URI. */
    async function authorize(params: Record<string, string>): Promise<Response> {
      let url = `${issuer()}/oauth/authorize?${new URLSearchParams({
        client_id: web.id,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'openid email profile',
        ...params,
      })}`;
      for (let hop = 0; hop < 10; hop++) {
        const res = await fetch(url, {
          redirect: 'manual',
          headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
        });
        for (const cookie of res.headers.getSetCookie()) {
          const [pair = ''] = cookie.split(';');
          const at = pair.indexOf('=');
          jar.set(pair.slice(0, at), pair.slice(at + 1));
        }
        const location = res.headers.get('location');
        // Done once it leaves the provider: at the app's redirect URI.
        if (!location || !new URL(location, url).href.startsWith(base)) return res;
        url = new URL(location, url).href;
      }
      throw new Error('too many redirects');
    }

    /** A code for a fresh PKCE pair, and the verifier. */
    async function code(extra: Record<string, string> = {}) {
      const verifier = randomBytes(32).toString('base64url');
      const res = await authorize({
        state: 'st-1',
        nonce: 'n-1',
        code_challenge: s256(verifier),
        code_challenge_method: 'S256',
        ...extra,
      });
      const back = new URL(res.headers.get('location') ?? '');
      return { back, code: back.searchParams.get('code') ?? '', verifier };
    }

    /** What /api/auth/introspect answers about a token (modules/introspection). */
    const introspection = async (accessToken: string) => {
      const sessions = new Sessions({ db: database.db, signingKeys, bus, authUrl: base });
      return introspect({ signingKeys, sessions, authUrl: base }, tenant, accessToken);
    };

    const sessionRow = (id: string) =>
      database.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();

    beforeAll(async () => {
      const made = await createApp(database.db, tenant.id, {
        name: 'Dashboard',
        type: 'web',
        redirectUris: [REDIRECT],
      });
      web = { id: made.app.id, secret: made.clientSecret ?? '' };
      const user = await createUserWithoutPassword(database.db, tenant, {
        email: 'ada@example.com',
        name: 'Ada',
        emailVerified: true,
      });
      userId = user.id;
      Object.assign(signingIn, {
        userId,
        amr: ['pwd', 'otp', 'mfa'],
        at: Math.floor(Date.now() / 1000) - 5,
      });
    });

    it('gives an ID token (nonce, auth_time, amr) and our access token, bound to a Latchkey session', async () => {
      const { back, code: got, verifier } = await code();
      expect(back.origin + back.pathname).toBe(REDIRECT);
      expect(back.searchParams.get('state')).toBe('st-1');
      expect(back.searchParams.get('iss')).toBe(issuer());
      const res = await exchange({
        grant_type: 'authorization_code',
        code: got,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Body;
      expect(body).toMatchObject({
        token_type: 'Bearer',
        expires_in: 900,
        scope: 'openid email profile',
      });
      // First-party: a refresh token without offline_access.
      expect(body.refresh_token).toEqual(expect.any(String));
      const keys = createLocalJWKSet(await signingKeys.jwks(tenant.id));
      const id = await jwtVerify(body.id_token, keys, { issuer: issuer(), audience: web.id });
      expect(id.payload).toMatchObject({
        sub: userId,
        nonce: 'n-1',
        auth_time: signingIn.at,
        amr: ['pwd', 'otp', 'mfa'],
        email: 'ada@example.com',
        email_verified: true,
        name: 'Ada',
      });
      const at = await jwtVerify(body.access_token, keys, {
        issuer: issuer(),
        audience: `${issuer()}/api`,
        typ: 'at+jwt',
      });
      expect(at.payload).toMatchObject({
        sub: userId,
        client_id: web.id,
        tid: tenant.id,
        sid: expect.any(String),
        email: 'ada@example.com',
        roles: [],
        amr: ['pwd', 'otp', 'mfa'],
        auth_time: signingIn.at,
        scope: 'openid email profile',
      });
      // Introspection (RFC 7662) accepts it as it accepts the tokens of §5.
      expect(await introspection(body.access_token)).toMatchObject({
        active: true,
        sub: userId,
        client_id: web.id,
        sid: at.payload.sid,
        email: 'ada@example.com',
        tid: tenant.id,
        scope: 'openid email profile',
      });
      expect(await sessionRow(String(at.payload.sid))).toMatchObject({
        tenant_id: tenant.id,
        user_id: userId,
        channel: 'oauth',
        oauth_client_id: web.id,
        oauth_grant_id: expect.any(String),
        revoked_at: null,
        authenticated_at: signingIn.at * 1000,
      });
    });

    it('rotates refresh tokens in one session; a replay after the grace revokes the grant and the session', async () => {
      const { code: got, verifier } = await code();
      const first = (await (
        await exchange({
          grant_type: 'authorization_code',
          code: got,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
        })
      ).json()) as Body;
      const sid = (
        await jwtVerify(first.access_token, createLocalJWKSet(await signingKeys.jwks(tenant.id)))
      ).payload.sid;
      const refreshed = await exchange({
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token,
      });
      expect(refreshed.status).toBe(200);
      const second = (await refreshed.json()) as Body;
      expect(second.refresh_token).not.toBe(first.refresh_token);
      const keys = createLocalJWKSet(await signingKeys.jwks(tenant.id));
      const again = await jwtVerify(second.access_token, keys);
      expect(again.payload).toMatchObject({
        sid,
        amr: ['pwd', 'otp', 'mfa'],
        auth_time: signingIn.at,
      });

      // The first token was used over the grace period ago: presenting it again is theft.
      await database.db
        .updateTable('oauth_artifacts')
        .set({ consumed_at: Date.now() - 60_000 })
        .where('model', '=', 'RefreshToken')
        .where('consumed_at', 'is not', null)
        .execute();
      await expectError(
        await exchange({ grant_type: 'refresh_token', refresh_token: first.refresh_token }),
        400,
        'invalid_grant',
      );
      await expectError(
        await exchange({ grant_type: 'refresh_token', refresh_token: second.refresh_token }),
        400,
        'invalid_grant',
      );
      expect(await sessionRow(String(sid))).toMatchObject({
        revoked_at: expect.any(Number),
        revoked_reason: 'oauth_grant_revoked',
      });
      // Its access tokens, never stored, stop at introspection with their session.
      expect(await introspection(second.access_token)).toEqual({ active: false });
    });

    it('a code used twice is refused and revokes what the first use gave', async () => {
      const { code: got, verifier } = await code();
      const params = {
        grant_type: 'authorization_code',
        code: got,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      };
      const first = (await (await exchange(params)).json()) as Body;
      await expectError(await exchange(params), 400, 'invalid_grant');
      await expectError(
        await exchange({ grant_type: 'refresh_token', refresh_token: first.refresh_token }),
        400,
        'invalid_grant',
      );
      const { sid } = (
        await jwtVerify(first.access_token, createLocalJWKSet(await signingKeys.jwks(tenant.id)))
      ).payload;
      expect((await sessionRow(String(sid)))?.revoked_reason).toBe('oauth_grant_revoked');
    });

    it('a refresh token stops when its Latchkey session is revoked (signed out everywhere)', async () => {
      const { code: got, verifier } = await code();
      const first = (await (
        await exchange({
          grant_type: 'authorization_code',
          code: got,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
        })
      ).json()) as Body;
      const keys = createLocalJWKSet(await signingKeys.jwks(tenant.id));
      const { sid } = (await jwtVerify(first.access_token, keys)).payload;
      await database.db
        .updateTable('sessions')
        .set({ revoked_at: Date.now(), revoked_reason: 'signed_out' })
        .where('id', '=', String(sid))
        .execute();
      await expectError(
        await exchange({ grant_type: 'refresh_token', refresh_token: first.refresh_token }),
        400,
        'invalid_grant',
      );
    });

    /** Tokens for the web app, through a code. */
    async function tokens(): Promise<Body> {
      const { code: got, verifier } = await code();
      const res = await exchange({
        grant_type: 'authorization_code',
        code: got,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      });
      expect(res.status).toBe(200);
      return (await res.json()) as Body;
    }

    it('a refresh token presented twice within the grace period rotates both times (two tabs)', async () => {
      const got = await tokens();
      const refresh = () =>
        exchange({ grant_type: 'refresh_token', refresh_token: got.refresh_token });
      const [one, two] = [await refresh(), await refresh()];
      expect([one.status, two.status]).toEqual([200, 200]);
      const [a, b] = [(await one.json()) as Body, (await two.json()) as Body];
      expect(a.refresh_token).not.toBe(b.refresh_token);
      const keys = createLocalJWKSet(await signingKeys.jwks(tenant.id));
      const sids = await Promise.all(
        [got, a, b].map(async (t) => (await jwtVerify(t.access_token, keys)).payload.sid),
      );
      expect(new Set(sids).size).toBe(1);
      expect(await introspection(b.access_token)).toMatchObject({ active: true });
    });

    it('revoking a refresh token (RFC 7009) ends its grant and Latchkey session', async () => {
      const got = await tokens();
      const keys = createLocalJWKSet(await signingKeys.jwks(tenant.id));
      const { sid } = (await jwtVerify(got.access_token, keys)).payload;
      const revoke = (value: string) =>
        fetch(`${issuer()}/oauth/revoke`, {
          method: 'POST',
          headers: {
            authorization: basic(web.id, web.secret),
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams({ token: value }),
        });
      // An access token is a JWT that is not stored: RFC 7009 section 2.2.1 lets the server
      // refuse it; signing out (ending its session) is what stops it.
      const refused = await revoke(got.access_token);
      expect(refused.status).toBe(400);
      expect((await refused.json()) as Body).toMatchObject({ error: 'unsupported_token_type' });
      const res = await revoke(got.refresh_token);
      expect(res.status).toBe(200);
      await expectError(
        await exchange({ grant_type: 'refresh_token', refresh_token: got.refresh_token }),
        400,
        'invalid_grant',
      );
      expect((await sessionRow(String(sid)))?.revoked_reason).toBe('oauth_grant_revoked');
      expect(await introspection(got.access_token)).toEqual({ active: false });
    });

    it('a spa app (public, no secret) signs in with PKCE from its own origin only (CORS)', async () => {
      const SPA = 'https://spa.example.com/callback';
      const made = await createApp(database.db, tenant.id, {
        name: 'Single page',
        type: 'spa',
        redirectUris: [SPA],
      });
      const verifier = randomBytes(32).toString('base64url');
      const res = await authorize({
        client_id: made.app.id,
        redirect_uri: SPA,
        code_challenge: s256(verifier),
        code_challenge_method: 'S256',
      });
      const back = new URL(res.headers.get('location') ?? '');
      expect(back.origin + back.pathname).toBe(SPA);
      const exchangeFrom = (origin: string, got: string) =>
        fetch(`${issuer()}/oauth/token`, {
          method: 'POST',
          headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            client_id: made.app.id,
            code: got,
            redirect_uri: SPA,
            code_verifier: verifier,
          }),
        });
      const elsewhere = await exchangeFrom(
        'https://evil.example',
        back.searchParams.get('code') ?? '',
      );
      expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
      expect(elsewhere.status).toBeGreaterThanOrEqual(400);
      const again = await authorize({
        client_id: made.app.id,
        redirect_uri: SPA,
        code_challenge: s256(verifier),
        code_challenge_method: 'S256',
      });
      const code2 = new URL(again.headers.get('location') ?? '').searchParams.get('code') ?? '';
      const ok = await exchangeFrom('https://spa.example.com', code2);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('access-control-allow-origin')).toBe('https://spa.example.com');
      expect((await ok.json()) as Body).toMatchObject({ token_type: 'Bearer' });
    });

    it('prompt=none without a provider session answers login_required to the app', async () => {
      jar.clear();
      const res = await authorize({
        prompt: 'none',
        state: 'st-3',
        code_challenge: s256('v'.repeat(43)),
        code_challenge_method: 'S256',
      });
      const back = new URL(res.headers.get('location') ?? '');
      expect(back.origin + back.pathname).toBe(REDIRECT);
      expect(back.searchParams.get('error')).toBe('login_required');
      expect(back.searchParams.get('state')).toBe('st-3');
    });

    it('requires PKCE S256 and the right verifier', async () => {
      const bare = await authorize({ state: 'st-2' });
      const back = new URL(bare.headers.get('location') ?? '');
      expect(back.searchParams.get('error')).toBe('invalid_request');
      expect(back.searchParams.get('state')).toBe('st-2');
      expect(back.searchParams.has('code')).toBe(false);

      const plain = await authorize({
        code_challenge: 'x'.repeat(43),
        code_challenge_method: 'plain',
      });
      expect(new URL(plain.headers.get('location') ?? '').searchParams.get('error')).toBe(
        'invalid_request',
      );

      const { code: got } = await code();
      await expectError(
        await exchange({
          grant_type: 'authorization_code',
          code: got,
          redirect_uri: REDIRECT,
          code_verifier: randomBytes(32).toString('base64url'),
        }),
        400,
        'invalid_grant',
      );
    });

    it('sends nothing to a redirect URI that is not registered exactly', async () => {
      for (const redirect_uri of [
        `${REDIRECT}/`,
        `${REDIRECT}?x=1`,
        'https://evil.example/callback',
      ]) {
        const res = await authorize({
          redirect_uri,
          code_challenge: s256('v'.repeat(43)),
          code_challenge_method: 'S256',
        });
        expect(res.status, redirect_uri).toBe(400);
        expect(res.headers.get('location')).toBeNull();
        expect(await res.text()).toMatch(/^invalid_redirect_uri: /);
      }
    });
  });

  it('printed nothing: every default that node-oidc-provider announces is set', () => {
    expect(printed).not.toHaveBeenCalled();
  });
});
