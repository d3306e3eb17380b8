/**
 * docs/design.md §14: "sign-in happens on the hosted pages" for the OpenID Provider, in the
 * real server on every database. Each way the hosted pages sign a browser in (a social
 * provider, with or without a second factor; sign-up, with or without a required
 * verification of the address) leads back to the provider's interaction and on to the
 * app's redirect URI with a code; the interaction's pages wear the tenant's branding.
 * The providers are the loopback servers of the social tests (test/providers.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOutbox } from '../src/modules/email/index.js';
import { createApp } from '../src/modules/oauth/index.js';
import { setProvider } from '../src/modules/social/index.js';
import { updateTenant } from '../src/modules/tenants/index.js';
import { OAuthBrowser } from './oauth-browser.js';
import { DEFAULT_ACCOUNTS, type ProviderServers, startProviders } from './providers.js';
import {
  type Body,
  DIALECTS,
  email,
  eventually,
  json,
  reservePort,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const REDIRECT = 'https://rp.example.com/callback';
const PASSWORD = 'correct horse battery staple';

/** The first link of a page whose text is `text` (entities of its href decoded). */
const linkOf = (html: string, text: string) => {
  const href = new RegExp(`<a[^>]*href="([^"]+)"[^>]*>(?:<[^>]+>)*${text}`).exec(html)?.[1];
  if (!href) throw new Error(`no link "${text}" in ${html.slice(0, 400)}`);
  return href.replaceAll('&amp;', '&');
};
const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

describe.each(DIALECTS)('OpenID Provider sign-in on the hosted pages on %s', (dialect) => {
  let app: TestApp;
  let providers: ProviderServers;

  beforeAll(async () => {
    const socket = reservePort();
    const base = `http://127.0.0.1:${socket.address().port}`;
    providers = await startProviders({ redirectUriFor: (id) => `${base}/oauth/${id}/callback` });
    app = await startApp(dialect, {
      socket,
      env: { LATCHKEY_PROVIDER_ENDPOINTS: providers.endpointsJson() },
    });
  }, 60_000);
  afterAll(async () => {
    await app?.dispose();
    await providers?.close();
  });

  const db = () => app.ctx.database.db;
  const deps = () => ({ db: db(), bus: app.ctx.bus });

  /** A tenant with a first-party web app whose redirect URI is REDIRECT. */
  async function withApp(options: Parameters<TestApp['tenant']>[0] = {}) {
    const t = await app.tenant(options);
    const made = await createApp(db(), t.tenant.id, {
      name: 'Site',
      type: 'web',
      redirectUris: [REDIRECT],
    });
    return { t, client: { id: made.app.id, secret: made.clientSecret ?? '' } };
  }

  function authorizeUrl(t: TestTenant, clientId: string) {
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(`${app.url}/t/${t.tenant.id}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid email profile',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state: 'st',
      nonce: 'n1',
    }))
      url.searchParams.set(k, v);
    return { url, verifier };
  }

  /** The authorization request's way to the interaction's sign-in page: its URL and HTML. */
  async function signInPageOf(browser: OAuthBrowser, url: URL) {
    const start = await browser.request(url.href);
    const interaction = await browser.request(start.headers.get('location') ?? '');
    expect(interaction.status).toBe(303);
    const at = new URL(interaction.headers.get('location') ?? '', app.url);
    expect(at.pathname).toBe('/sign-in');
    expect(at.searchParams.get('interaction')).toBeTruthy();
    const page = await browser.request(at.href);
    expect(page.status).toBe(200);
    return { at, page, html: await page.text() };
  }

  async function exchange(
    t: TestTenant,
    client: { id: string; secret: string },
    at: URL,
    v: string,
  ) {
    expect(at.origin + at.pathname).toBe(REDIRECT);
    expect(at.searchParams.get('state')).toBe('st');
    const res = await fetch(`${app.url}/t/${t.tenant.id}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: at.searchParams.get('code') ?? '',
        redirect_uri: REDIRECT,
        code_verifier: v,
      }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Body;
  }

  const post = (browser: OAuthBrowser, url: string, form: Record<string, string>) =>
    browser.request(new URL(url, app.url).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.url },
      body: new URLSearchParams(form).toString(),
    });

  describe('social sign-in', () => {
    let t: TestTenant;
    let client: { id: string; secret: string };
    beforeAll(async () => {
      ({ t, client } = await withApp());
      await setProvider(db(), app.ctx.box, t.tenant.id, 'google', {
        clientId: providers.google.clientId,
        clientSecret: providers.google.clientSecret,
        enabled: true,
      });
    });

    /** The interaction's provider button, Google (the harness), our callback: where next. */
    async function viaGoogle(browser: OAuthBrowser, url: URL, account: object) {
      const { html } = await signInPageOf(browser, url);
      const start = await browser.request(linkOf(html, '<span>Continue with Google'));
      expect(start.status).toBe(303);
      providers.google.next(account as never);
      const consent = await fetch(start.headers.get('location') ?? '', { redirect: 'manual' });
      const callback = new URL(consent.headers.get('location') ?? '');
      expect(callback.origin).toBe(app.url);
      const back = await browser.request(callback.pathname + callback.search);
      expect(back.status).toBe(303);
      return new URL(back.headers.get('location') ?? '', app.url);
    }
    const account = () => ({
      ...DEFAULT_ACCOUNTS.google,
      sub: `g-${randomBytes(6).toString('hex')}`,
      email: email('google'),
      emailVerified: true,
    });

    it('the provider button, the provider, back through the interaction: a code, amr fed', async () => {
      const browser = new OAuthBrowser(app.url);
      const { url, verifier } = authorizeUrl(t, client.id);
      const who = account();
      const next = await viaGoogle(browser, url, who);
      expect(next.pathname).toMatch(new RegExp(`^/t/${t.tenant.id}/interaction/`));
      const visit = await browser.browse(next);
      const tokens = await exchange(t, client, visit.url, verifier);
      const id = decodeJwt(tokens.id_token);
      expect(id).toMatchObject({ email: who.email, email_verified: true, nonce: 'n1' });
      expect(id.amr).toEqual(['fed']);
    });

    it('a social user with an authenticator app passes the second step first (fed, otp, mfa)', async () => {
      const who = account();
      const first = new OAuthBrowser(app.url);
      const one = authorizeUrl(t, client.id);
      const firstVisit = await first.browse(await viaGoogle(first, one.url, who));
      const userId = decodeJwt((await exchange(t, client, firstVisit.url, one.verifier)).id_token)
        .sub as string;
      const call = (path: string, body: unknown) =>
        app.request(path, {
          method: 'POST',
          headers: { authorization: `Bearer ${t.secretKey}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const factor = await json(await call(`/v1/users/${userId}/factors`, { type: 'totp' }));
      const codeAt = (steps: number) =>
        generateSync({ secret: factor.secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });
      const confirm = await call(`/v1/users/${userId}/factors/${factor.id}/confirm`, {
        code: codeAt(-1),
      });
      expect(confirm.status).toBe(200);

      // A new browser: Google alone leads to the second step, not to the app.
      const browser = new OAuthBrowser(app.url);
      const { url, verifier } = authorizeUrl(t, client.id);
      const next = await viaGoogle(browser, url, who);
      expect(next.pathname).toBe('/sign-in/verify');
      expect(next.searchParams.get('interaction')).toBeTruthy();
      const visit = await browser.browse(next, { code: () => codeAt(0) });
      expect(visit.path).toContain('POST /sign-in/verify');
      const tokens = await exchange(t, client, visit.url, verifier);
      expect(decodeJwt(tokens.id_token)).toMatchObject({ sub: userId, amr: ['fed', 'otp', 'mfa'] });
      expect(decodeJwt(tokens.access_token).amr).toEqual(['fed', 'otp', 'mfa']);
    });
  });

  describe('sign-up', () => {
    /** "Create an account" on the interaction's sign-in page, and the form posted. */
    async function signUp(browser: OAuthBrowser, url: URL, address: string) {
      const { html } = await signInPageOf(browser, url);
      const href = linkOf(html, 'Create an account');
      const to = new URL(href, app.url);
      expect(to.pathname).toBe('/sign-up');
      expect(to.searchParams.get('interaction')).toBeTruthy();
      const form = await browser.request(to.href);
      expect(form.status).toBe(200);
      const page = await form.text();
      const res = await post(browser, to.href, {
        _csrf: csrfOf(page),
        email: address,
        password: PASSWORD,
      });
      return Object.assign(res, { interaction: to.searchParams.get('interaction') });
    }

    it('"Create an account" keeps the interaction: the new account goes back to the app with a code', async () => {
      const { t, client } = await withApp();
      const browser = new OAuthBrowser(app.url);
      const { url, verifier } = authorizeUrl(t, client.id);
      const address = email('new');
      const made = await signUp(browser, url, address);
      expect(made.status).toBe(303);
      const next = new URL(made.headers.get('location') ?? '', app.url);
      expect(next.pathname).toMatch(new RegExp(`^/t/${t.tenant.id}/interaction/`));
      const visit = await browser.browse(next);
      const tokens = await exchange(t, client, visit.url, verifier);
      expect(decodeJwt(tokens.id_token)).toMatchObject({ email: address, amr: ['pwd'] });
    });

    it('with required verification: the link verifies, then leads back to the same sign-in', async () => {
      const { t, client } = await withApp({ requireEmailVerification: true });
      const browser = new OAuthBrowser(app.url);
      const { url, verifier } = authorizeUrl(t, client.id);
      const address = email('verify');
      const made = await signUp(browser, url, address);
      expect(made.status).toBe(201);
      expect(await made.text()).toContain('Check your inbox');
      const mail = await eventually(async () => {
        const sent = await readOutbox(db(), { to: address });
        return sent[0];
      });
      const token = /verify-email\?token=([A-Za-z0-9_-]+)/.exec(mail.body)?.[1] ?? '';
      const ask = await browser.request(`/verify-email?token=${token}`);
      const done = await post(browser, '/verify-email', {
        _csrf: csrfOf(await ask.text()),
        token,
      });
      expect(done.status).toBe(200);
      const html = await done.text();
      expect(html).toContain('Your e-mail address is verified');
      const onward = new URL(linkOf(html, 'Continue to sign in'), app.url);
      expect(onward.pathname).toBe('/sign-in');
      expect(onward.searchParams.get('interaction')).toBe(made.interaction);
      // In another browser (the mail opened on a phone) the sign-in works, but the
      // provider's interaction is bound to the first one: the page says to start again.
      const phone = new OAuthBrowser(app.url);
      await expect(phone.browse(onward, { email: address, password: PASSWORD })).rejects.toThrow(
        /400 .*This sign-in has expired.*started in another browser/s,
      );
      // In the browser that started it: the sign-in form, then the app with a code.
      const visit = await browser.browse(onward, { email: address, password: PASSWORD });
      expect(visit.path).toEqual([
        '/sign-in',
        'POST /sign-in',
        expect.stringMatching(/\/interaction\//),
        expect.stringMatching(/\/oauth\/authorize\//),
      ]);
      const tokens = await exchange(t, client, visit.url, verifier);
      expect(decodeJwt(tokens.id_token)).toMatchObject({ email: address, email_verified: true });

      // The link again once that sign-in is over: the page says to start again at the
      // application, and leads nowhere else.
      const elsewhere = await new OAuthBrowser(app.url).request(onward.href);
      expect(elsewhere.status).toBe(400);
      expect(elsewhere.headers.get('location')).toBeNull();
      expect(await elsewhere.text()).toContain('Go back to the application and sign in again');
    });
  });

  it("the interaction's sign-in page wears the tenant's name, logo and colour", async () => {
    const { t, client } = await withApp();
    await updateTenant(deps(), t.tenant.id, {
      logoUrl: 'https://cdn.example.com/logo.png',
      primaryColor: '#7b2ff7',
    });
    const { html } = await signInPageOf(new OAuthBrowser(app.url), authorizeUrl(t, client.id).url);
    expect(html).toContain(
      `<img class="logo" src="https://cdn.example.com/logo.png" alt="${t.tenant.name}">`,
    );
    expect(html).toContain('--brand:#7b2ff7');
    expect(html).toContain(`<title>Sign in · ${t.tenant.name}</title>`);
  });
});
