/**
 * The tenant OpenID Provider the relying-party suites sign in to (docs/design.md §14): the
 * real server on one database, a tenant with a `web`, a `spa` and an `m2m` app, another
 * tenant's app with the same redirect URI, and a user who signed up with a password; and
 * what a relying party does through openid-client, with a browser that fills the real
 * hosted sign-in form (OAuthBrowser).
 */
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { afterAll, beforeAll, expect } from 'vitest';
import { createApp } from '../../server/src/modules/oauth/index.js';
import type { DialectName } from '../../server/src/storage/index.js';
import { OAuthBrowser } from '../../server/test/oauth-browser.js';
import {
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from '../../server/test/support.js';

export const REDIRECT = 'https://rp.example.com/callback';
export const LOGGED_OUT = 'https://rp.example.com/logged-out';
export const PASSWORD = 'correct horse battery staple';
/** The libraries refuse http issuers unless told; the test server is on loopback http. */
export const insecure = { execute: [client.allowInsecureRequests] };
export const options = { [oauth.allowInsecureRequests]: true };

interface Credentials {
  id: string;
  secret: string;
}

export class TenantProvider {
  app!: TestApp;
  t!: TestTenant;
  issuer = '';
  web: Credentials = { id: '', secret: '' };
  m2m: Credentials = { id: '', secret: '' };
  /** Another tenant's `web` app, registered with the same redirect URI. */
  elsewhere: Credentials = { id: '', secret: '' };
  spa = '';
  readonly user = { id: '', email: '' };

  /** Started before the suite's tests, disposed after them. */
  static use(dialect: DialectName): TenantProvider {
    const provider = new TenantProvider();
    beforeAll(() => provider.#start(dialect));
    afterAll(() => provider.app?.dispose());
    return provider;
  }

  async #start(dialect: DialectName) {
    this.app = await startApp(dialect);
    const { app } = this;
    this.t = await app.tenant({ allowedOrigins: [new URL(REDIRECT).origin] });
    const tenantId = this.t.tenant.id;
    this.issuer = `${app.url}/t/${tenantId}`;
    const db = app.ctx.database.db;
    const site = await createApp(db, tenantId, {
      name: 'Site',
      type: 'web',
      redirectUris: [REDIRECT],
      postLogoutRedirectUris: [LOGGED_OUT],
    });
    this.web = { id: site.app.id, secret: site.clientSecret ?? '' };
    const browserApp = await createApp(db, tenantId, {
      name: 'Browser app',
      type: 'spa',
      redirectUris: [REDIRECT],
    });
    this.spa = browserApp.app.id;
    const worker = await createApp(db, tenantId, { name: 'Worker', type: 'm2m' });
    this.m2m = { id: worker.app.id, secret: worker.clientSecret ?? '' };
    const other = await app.tenant();
    const theirs = await createApp(db, other.tenant.id, {
      name: 'Theirs',
      type: 'web',
      redirectUris: [REDIRECT],
    });
    this.elsewhere = { id: theirs.app.id, secret: theirs.clientSecret ?? '' };
    this.user.email = email();
    const up = await postJson(app, '/v1/auth/sign-up', this.t.secretKey, {
      email: this.user.email,
      password: PASSWORD,
    });
    expect(up.status).toBe(201);
    this.user.id = (await json(up)).userId;
  }

  /** openid-client's configuration from discovery, with the documented three settings. */
  discover(id = this.web.id, secret = this.web.secret) {
    return client.discovery(new URL(this.issuer), id, secret, undefined, insecure);
  }

  /** An authorization request as openid-client builds it, with its PKCE verifier. */
  async authorization(config: client.Configuration, extra: Record<string, string> = {}) {
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
  async signIn(config: client.Configuration, browser = new OAuthBrowser(this.app.url)) {
    const request = await this.authorization(config);
    const visit = await browser.browse(request.url, {
      email: this.user.email,
      password: PASSWORD,
    });
    expect(visit.path).toContain('POST /sign-in');
    const checks = {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
    };
    return { ...request, callback: visit.url, browser, checks };
  }

  /** Posts a form of this server's pages as the browser does (same origin). */
  postForm(browser: OAuthBrowser, url: string, form: Record<string, string>) {
    return browser.request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: new URL(this.app.url).origin,
      },
      body: new URLSearchParams(form).toString(),
    });
  }

  /** The logout page's form, answered `yes` (sign out) or with "Stay signed in". */
  async answerLogout(browser: OAuthBrowser, end: URL, signOut: boolean) {
    const page = await browser.request(end.href);
    expect(page.status).toBe(200);
    const html = await page.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1] ?? '';
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    // The hidden field the page adds to the form, as a browser sends it with "Sign out".
    const [, name = '', value = ''] =
      /<input type="hidden" form="op.logoutForm" name="([^"]+)" value="([^"]+)">/.exec(html) ?? [];
    return this.postForm(browser, new URL(action, end).href, {
      xsrf,
      ...(signOut ? { logout: 'yes', [name]: value } : {}),
    });
  }

  /** A browser signed in to the app through the provider, then signed out on the hosted pages. */
  async signedOutOnHostedPages(config: client.Configuration) {
    const { browser } = await this.signIn(config);
    const query = new URLSearchParams({
      pk: this.t.publishableKey,
      redirect_url: `${new URL(REDIRECT).origin}/`,
    });
    const ask = await browser.request(`/sign-out?${query}`);
    expect(ask.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await ask.text())?.[1] ?? '';
    const out = await this.postForm(browser, `/sign-out?${query}`, { _csrf: csrf });
    expect(out.status).toBe(303);
    return browser;
  }

  /** The provider's metadata, read and checked by oauth4webapi at one of its two paths. */
  async asOf(algorithm: 'oidc' | 'oauth2') {
    const response = await oauth.discoveryRequest(new URL(this.issuer), {
      algorithm,
      ...options,
    });
    expect(response.url).toBe(
      algorithm === 'oidc'
        ? `${this.issuer}/.well-known/openid-configuration`
        : `${this.app.url}/.well-known/oauth-authorization-server/t/${this.t.tenant.id}`,
    );
    return oauth.processDiscoveryResponse(new URL(this.issuer), response);
  }
}

/** A request to a resource server carrying the access token. */
export const bearer = (token: string) =>
  new Request('https://api.example.com/', { headers: { authorization: `Bearer ${token}` } });
