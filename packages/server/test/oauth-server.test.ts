/**
 * docs/design.md §14 on the real server, every database: a tenant's OpenID Provider mounted
 * under its issuer, sign-in on the hosted pages, tokens, userinfo, logout.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/modules/oauth/index.js';
import { OAuthBrowser } from './oauth-browser.js';
import {
  type Body,
  DIALECTS,
  email,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const REDIRECT = 'https://rp.example.com/callback';
const PASSWORD = 'correct horse battery staple';

describe.each(DIALECTS)('OpenID Provider in the server on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;
  let issuer: string;
  let web: { id: string; secret: string };
  let address: string;

  beforeAll(async () => {
    app = await startApp(dialect);
    t = await app.tenant();
    issuer = `${app.url}/t/${t.tenant.id}`;
    const made = await createApp(app.ctx.database.db, t.tenant.id, {
      name: 'Site',
      type: 'web',
      redirectUris: [REDIRECT],
    });
    web = { id: made.app.id, secret: made.clientSecret ?? '' };
    address = email();
    const up = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
      email: address,
      password: PASSWORD,
    });
    expect(up.status).toBe(201);
  });
  afterAll(() => app?.dispose());

  const authorizeUrl = (extra: Record<string, string> = {}) => {
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(`${issuer}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      client_id: web.id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid email profile',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state: 'st',
      nonce: 'n1',
      ...extra,
    }))
      url.searchParams.set(k, v);
    return { url, verifier };
  };

  it('smoke: discovery, sign-in, code, tokens, userinfo', async () => {
    const meta = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Body;
    console.log(JSON.stringify(meta, null, 1));
    const browser = new OAuthBrowser(app.url);
    const { url, verifier } = authorizeUrl();
    const visit = await browser.browse(url, { email: address, password: PASSWORD });
    console.log(visit.path.join('\n'), visit.url.href);
    const code = visit.url.searchParams.get('code') ?? '';
    const res = await fetch(`${issuer}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${web.id}:${web.secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      }),
    });
    const tokens = (await res.json()) as Body;
    console.log(res.status, tokens);
    const jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`));
    const id = await jwtVerify(tokens.id_token, jwks, { issuer, audience: web.id });
    console.log(id.payload);
    const info = await fetch(`${issuer}/oauth/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    console.log(info.status, await info.text());
    const intro = await fetch(`${app.url}/v1/introspect`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ token: tokens.access_token }),
    });
    console.log(await intro.text());
    // returning browser: straight through
    const again = await browser.browse(authorizeUrl().url);
    console.log(again.path.join('\n'), again.url.href);
    // end-session
    const end = await browser.request(
      `${issuer}/oauth/end-session?id_token_hint=${tokens.id_token}`,
    );
    console.log(
      end.status,
      (await end.text()).slice(0, 1500),
      end.headers.get('content-security-policy'),
    );
  });
});
