/**
 * Self-test of the provider harness: full authorization-code flows against each fake provider,
 * done the way Latchkey does them (oauth4webapi for the OpenID Connect ones, plain fetch for
 * GitHub and Facebook), plus the 'cancel', 'down' and 'garbage' outcomes.
 */
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AppleProviderServer,
  appleClientSecret,
  DEFAULT_ACCOUNTS,
  PROVIDER_IDS,
  type ProviderId,
  type ProviderServer,
  type ProviderServers,
  startProviders,
} from './providers.js';

const redirectUriFor = (id: ProviderId) => `http://127.0.0.1:9/latchkey/callback/${id}`;
const insecure = { [oauth.allowInsecureRequests]: true } as const;

let providers: ProviderServers;

beforeAll(async () => {
  providers = await startProviders({ redirectUriFor });
});

afterAll(async () => {
  await providers?.close();
});

/** HTML entities as oidc-provider writes them. */
function unescapeHtml(value: string): string {
  return value
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&#x27;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

/** The callback parameters a browser would bring to the redirect_uri. */
async function callbackFrom(response: Response, redirectUri: string): Promise<URLSearchParams> {
  if (response.status >= 300 && response.status < 400) {
    const location = response.headers.get('location') ?? '';
    await response.arrayBuffer();
    expect(location.startsWith(`${redirectUri}?`)).toBe(true);
    return new URL(location).searchParams;
  }
  // response_mode=form_post: an auto-submitting form to the redirect_uri.
  const html = await response.text();
  expect(response.status, html).toBe(200);
  const action = /<form method="post" action="([^"]*)"/.exec(html)?.[1];
  expect(action && unescapeHtml(action)).toBe(redirectUri);
  const params = new URLSearchParams();
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)) {
    params.set(match[1] ?? '', unescapeHtml(match[2] ?? ''));
  }
  return params;
}

interface OidcStart {
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  auth: oauth.ClientAuth;
  redirectUri: string;
  state: string;
  nonce: string;
  verifier: string;
  callback: URLSearchParams;
}

/** Discovery and the authorization request, up to the callback parameters. */
async function oidcAuthorize(
  server: ProviderServer,
  options: { scope: string; formPost?: boolean },
): Promise<OidcStart> {
  const issuer = new URL(server.endpoints.issuer ?? '');
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure }),
  );
  const client: oauth.Client = { client_id: server.clientId };
  let auth = oauth.ClientSecretPost(server.clientSecret);
  if (server.id === 'apple') {
    const apple = server as AppleProviderServer;
    auth = oauth.ClientSecretPost(
      await appleClientSecret({ ...apple, clientId: apple.clientId, audience: as.issuer }),
    );
  }
  const redirectUri = redirectUriFor(server.id);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint ?? '');
  url.searchParams.set('client_id', server.clientId);
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', options.scope);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  url.searchParams.set('state', state);
  url.searchParams.set('nonce', nonce);
  if (options.formPost) url.searchParams.set('response_mode', 'form_post');
  const callback = await callbackFrom(await fetch(url, { redirect: 'manual' }), redirectUri);
  return { as, client, auth, redirectUri, state, nonce, verifier, callback };
}

async function oidcTokenRequest(start: OidcStart): Promise<Response> {
  const params = oauth.validateAuthResponse(start.as, start.client, start.callback, start.state);
  return oauth.authorizationCodeGrantRequest(
    start.as,
    start.client,
    start.auth,
    params,
    start.redirectUri,
    start.verifier,
    insecure,
  );
}

/** The whole flow, with the ID token validated against the discovered JWKS. */
async function oidcFlow(server: ProviderServer, options: { scope: string; formPost?: boolean }) {
  const start = await oidcAuthorize(server, options);
  const response = await oidcTokenRequest(start);
  const result = await oauth.processAuthorizationCodeResponse(start.as, start.client, response, {
    expectedNonce: start.nonce,
    requireIdToken: true,
  });
  await oauth.validateApplicationLevelSignature(start.as, response, insecure);
  const claims = oauth.getValidatedIdTokenClaims(result);
  if (!claims) throw new Error('no ID token');
  return { start, result, claims };
}

/** GitHub and Facebook: authorization request up to the callback parameters. */
async function plainAuthorize(server: ProviderServer, scope: string) {
  const redirectUri = redirectUriFor(server.id);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(server.endpoints.authorizationEndpoint ?? '');
  url.searchParams.set('client_id', server.clientId);
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', scope);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  const response = await fetch(url, { redirect: 'manual' });
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get('location') ?? '');
  expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
  return { redirectUri, verifier, state, callback: location.searchParams };
}

async function plainToken(
  server: ProviderServer,
  start: { redirectUri: string; verifier: string; callback: URLSearchParams },
  overrides: Record<string, string> = {},
): Promise<Response> {
  return fetch(server.endpoints.tokenEndpoint ?? '', {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_id: server.clientId,
      client_secret: server.clientSecret,
      code: start.callback.get('code') ?? '',
      redirect_uri: start.redirectUri,
      code_verifier: start.verifier,
      ...overrides,
    }),
  });
}

const OIDC_SCOPES: Record<'google' | 'microsoft' | 'apple', { scope: string; formPost?: boolean }> =
  {
    google: { scope: 'openid email profile' },
    microsoft: { scope: 'openid email profile' },
    apple: { scope: 'openid email name', formPost: true },
  };
const PLAIN_SCOPES = { github: 'read:user user:email', facebook: 'email public_profile' };

describe('provider harness', () => {
  it('gives LATCHKEY_PROVIDER_ENDPOINTS for all five', () => {
    const endpoints = JSON.parse(providers.endpointsJson()) as Record<
      string,
      Record<string, string>
    >;
    expect(Object.keys(endpoints).sort()).toEqual([...PROVIDER_IDS].sort());
    expect(endpoints.google?.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(endpoints.microsoft?.issuer).toBe(
      `${new URL(endpoints.microsoft?.issuer ?? '').origin}/${providers.microsoft.tenantId}/v2.0`,
    );
    expect(endpoints.github).toEqual({
      authorizationEndpoint: expect.stringMatching(/\/login\/oauth\/authorize$/),
      tokenEndpoint: expect.stringMatching(/\/login\/oauth\/access_token$/),
      apiBase: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/api$/),
    });
    expect(Object.keys(endpoints.facebook ?? {}).sort()).toEqual([
      'apiBase',
      'authorizationEndpoint',
      'tokenEndpoint',
    ]);
  });

  it('Google: code + PKCE + nonce, ID token with a boolean email_verified', async () => {
    const google = providers.google;
    google.next({ sub: 'g-1', email: 'grace@example.com', emailVerified: true, name: 'Grace H' });
    const { claims, start } = await oidcFlow(google, OIDC_SCOPES.google);
    expect(claims).toMatchObject({
      iss: google.endpoints.issuer,
      aud: google.clientId,
      sub: 'g-1',
      email: 'grace@example.com',
      email_verified: true,
      name: 'Grace H',
      nonce: start.nonce,
    });
    expect(google.requests.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining(['GET /.well-known/openid-configuration', 'GET /auth', 'POST /token']),
    );

    // The account sticks; an unverified address is said so.
    google.next({ sub: 'g-2', email: 'eve@example.com', emailVerified: false });
    const second = await oidcFlow(google, OIDC_SCOPES.google);
    expect(second.claims).toMatchObject({ sub: 'g-2', email_verified: false });
    expect((await oidcFlow(google, OIDC_SCOPES.google)).claims.sub).toBe('g-2');
  });

  it('Google: codes are single-use and bound to the redirect_uri; PKCE is required', async () => {
    const google = providers.google;
    const start = await oidcAuthorize(google, OIDC_SCOPES.google);
    const first = await oidcTokenRequest(start);
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    const again = await oidcTokenRequest(start);
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: 'invalid_grant' });

    const other = await oidcAuthorize(google, OIDC_SCOPES.google);
    const wrongRedirect = await oauth.authorizationCodeGrantRequest(
      other.as,
      other.client,
      other.auth,
      oauth.validateAuthResponse(other.as, other.client, other.callback, other.state),
      'http://127.0.0.1:9/elsewhere',
      other.verifier,
      insecure,
    );
    expect(await wrongRedirect.json()).toMatchObject({ error: 'invalid_grant' });

    const noPkce = new URL(other.as.authorization_endpoint ?? '');
    noPkce.search = new URLSearchParams({
      client_id: google.clientId,
      redirect_uri: redirectUriFor('google'),
      response_type: 'code',
      scope: 'openid',
      state: 'x',
    }).toString();
    const denied = new URL(
      (await fetch(noPkce, { redirect: 'manual' })).headers.get('location') ?? '',
    );
    expect(denied.searchParams.get('error')).toBe('invalid_request');
  });

  it('Microsoft: issuer and ID token carry the directory id; email is not asserted', async () => {
    const microsoft = providers.microsoft;
    microsoft.next({ sub: 'pairwise-sub-1', email: 'ada@contoso.example', name: 'Ada' });
    const { claims } = await oidcFlow(microsoft, OIDC_SCOPES.microsoft);
    expect(claims.iss).toBe(`${new URL(claims.iss).origin}/${microsoft.tenantId}/v2.0`);
    expect(claims).toMatchObject({
      sub: 'pairwise-sub-1',
      tid: microsoft.tenantId,
      oid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: 'ada@contoso.example',
      preferred_username: 'ada@contoso.example',
      name: 'Ada',
    });
    expect(claims).not.toHaveProperty('email_verified');
    expect(microsoft.requests.map((r) => r.path)).toContain(
      `/${microsoft.tenantId}/v2.0/.well-known/openid-configuration`,
    );
  });

  it('Apple: form_post with `user` on the first sign-in only; string booleans', async () => {
    const apple = providers.apple;
    apple.next({
      sub: '000111.apple.1',
      email: 'x7k2@privaterelay.appleid.com',
      name: 'Tim Apple Jr',
    });
    const first = await oidcFlow(apple, OIDC_SCOPES.apple);
    expect(JSON.parse(first.start.callback.get('user') ?? '')).toEqual({
      name: { firstName: 'Tim', lastName: 'Apple Jr' },
      email: 'x7k2@privaterelay.appleid.com',
    });
    expect(first.claims).toMatchObject({
      sub: '000111.apple.1',
      email: 'x7k2@privaterelay.appleid.com',
      email_verified: 'true',
      is_private_email: 'true',
    });
    const second = await oidcFlow(apple, OIDC_SCOPES.apple);
    expect(second.start.callback.has('user')).toBe(false);
    expect(second.start.callback.has('code')).toBe(true);

    // Scopes without form_post are refused, as Apple does.
    const query = new URL(second.start.as.authorization_endpoint ?? '');
    query.search = new URLSearchParams({
      client_id: apple.clientId,
      redirect_uri: redirectUriFor('apple'),
      response_type: 'code',
      scope: 'openid email',
      state: 's',
    }).toString();
    expect((await fetch(query, { redirect: 'manual' })).status).toBe(400);
  });

  it('Apple: the token endpoint takes only an ES256 client secret JWT from the team key', async () => {
    const apple = providers.apple;
    const bad = async (secret: string) => {
      const start = await oidcAuthorize(apple, OIDC_SCOPES.apple);
      start.auth = oauth.ClientSecretPost(secret);
      const response = await oidcTokenRequest(start);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: 'invalid_client' });
    };
    const mint = (overrides: Partial<Parameters<typeof appleClientSecret>[0]>) =>
      appleClientSecret({
        ...apple,
        clientId: apple.clientId,
        audience: apple.endpoints.issuer ?? '',
        ...overrides,
      });
    await bad('not-a-jwt');
    await bad(await mint({ keyId: 'WRONGKEY' }));
    await bad(await mint({ teamId: 'OTHERTEAM' }));
    await bad(await mint({ audience: 'https://appleid.apple.com' }));
    await bad(await mint({ expiresInSeconds: -60 }));
    const otherKey = (await import('node:crypto')).generateKeyPairSync('ec', {
      namedCurve: 'P-256',
    });
    await bad(
      await mint({
        privateKeyPem: otherKey.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      }),
    );
    // The ready-made clientSecret works as is.
    const start = await oidcAuthorize(apple, OIDC_SCOPES.apple);
    start.auth = oauth.ClientSecretPost(apple.clientSecret);
    const ok = await oidcTokenRequest(start);
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
  });

  it('GitHub: code + PKCE, /user and /user/emails with bearer auth', async () => {
    const github = providers.github;
    github.next({ sub: '4242', email: 'linus@example.com', name: 'Linus', emailVerified: true });
    const start = await plainAuthorize(github, PLAIN_SCOPES.github);
    expect(start.callback.get('state')).toBe(start.state);
    const response = await plainToken(github, start);
    const body = (await response.json()) as { access_token: string; token_type: string };
    expect(body).toMatchObject({ token_type: 'bearer', scope: PLAIN_SCOPES.github });
    const api = github.endpoints.apiBase;
    const headers = { authorization: `Bearer ${body.access_token}`, 'user-agent': 'latchkey-test' };
    const user = await (await fetch(`${api}/user`, { headers })).json();
    expect(user).toMatchObject({ id: 4242, name: 'Linus', email: null });
    const emails = (await (await fetch(`${api}/user/emails`, { headers })).json()) as {
      email: string;
      primary: boolean;
      verified: boolean;
    }[];
    expect(emails).toContainEqual(
      expect.objectContaining({ email: 'linus@example.com', primary: true, verified: true }),
    );
    expect(emails.some((e) => !e.primary && !e.verified)).toBe(true);
    expect((await fetch(`${api}/user`, { headers: { 'user-agent': 'x' } })).status).toBe(401);

    // Single use (GitHub answers errors with 200), and PKCE is checked.
    expect(await (await plainToken(github, start)).json()).toMatchObject({
      error: 'bad_verification_code',
    });
    const other = await plainAuthorize(github, PLAIN_SCOPES.github);
    const wrongVerifier = await plainToken(github, other, {
      code_verifier: oauth.generateRandomCodeVerifier(),
    });
    expect(await wrongVerifier.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('Facebook: code + PKCE, /me with confirmed e-mail only', async () => {
    const facebook = providers.facebook;
    facebook.next({ sub: '10150000000000001', email: 'mark@example.com', name: 'Mark' });
    const start = await plainAuthorize(facebook, PLAIN_SCOPES.facebook);
    const body = (await (await plainToken(facebook, start)).json()) as { access_token: string };
    expect(body).toMatchObject({ token_type: 'bearer', expires_in: expect.any(Number) });
    const me = `${facebook.endpoints.apiBase}/me?fields=id,name,email`;
    expect(
      await (await fetch(`${me}&access_token=${encodeURIComponent(body.access_token)}`)).json(),
    ).toEqual({ id: '10150000000000001', name: 'Mark', email: 'mark@example.com' });

    facebook.next({ sub: '10150000000000002', email: 'new@example.com', emailVerified: false });
    const unconfirmed = await plainAuthorize(facebook, PLAIN_SCOPES.facebook);
    const token = (await (await plainToken(facebook, unconfirmed)).json()) as {
      access_token: string;
    };
    const profile = await (
      await fetch(me, { headers: { authorization: `Bearer ${token.access_token}` } })
    ).json();
    expect(profile).toEqual({ id: '10150000000000002' });

    const reused = await plainToken(facebook, unconfirmed);
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ error: { type: 'OAuthException' } });
  });

  describe.each(PROVIDER_IDS)('%s: outcomes', (id) => {
    const authorize = async (server: ProviderServer) =>
      id === 'github' || id === 'facebook'
        ? { kind: 'plain' as const, start: await plainAuthorize(server, PLAIN_SCOPES[id]) }
        : { kind: 'oidc' as const, start: await oidcAuthorize(server, OIDC_SCOPES[id]) };
    const tokenRequest = (server: ProviderServer, flow: Awaited<ReturnType<typeof authorize>>) =>
      flow.kind === 'plain' ? plainToken(server, flow.start) : oidcTokenRequest(flow.start);

    it('cancel: error=access_denied with the state', async () => {
      const server = providers[id];
      server.next('cancel');
      const flow = await authorize(server);
      expect(flow.start.callback.get('error')).toBe('access_denied');
      expect(flow.start.callback.get('state')).toBe(flow.start.state);
      expect(flow.start.callback.has('code')).toBe(false);
      // One-shot: the next sign-in goes through.
      expect((await authorize(server)).start.callback.has('code')).toBe(true);
    });

    it('down and garbage break the next token request only', async () => {
      const server = providers[id];
      server.next(DEFAULT_ACCOUNTS[id]);
      server.next('down');
      const down = await tokenRequest(server, await authorize(server));
      expect(down.status).toBe(503);
      await down.arrayBuffer();

      server.next('garbage');
      const garbage = await tokenRequest(server, await authorize(server));
      expect(garbage.status).toBe(200);
      const text = await garbage.text();
      expect(() => JSON.parse(text)).toThrow();

      const fine = await tokenRequest(server, await authorize(server));
      expect(fine.status).toBe(200);
      expect(await fine.json()).toHaveProperty('access_token');
    });
  });
});
