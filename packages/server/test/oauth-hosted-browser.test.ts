/**
 * docs/design.md §14 in a real Chromium: the OpenID Provider's sign-in on the hosted pages
 * with a passkey (the DevTools protocol's virtual authenticator, as passkeys-browser.test.ts),
 * and the provider's own pages (sign-in within an interaction, consent, RP-initiated
 * logout, an error) in the tenant's look at desktop and phone widths, each clicked through
 * to the app, since Chrome applies the page's CSP form-action to the redirects after a POST.
 *
 * The server's PUBLIC_URL is `http://localhost:<port>` (WebAuthn refuses an IP address as
 * RP id); the app's redirect URI is a loopback page on another origin. SQLite only: the
 * flows' rules run on both databases in oauth-server.test.ts and oauth-hosted-paths.test.ts.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/modules/oauth/index.js';
import { updateTenant } from '../src/modules/tenants/index.js';
import { type CallerApp, HAVE_CHROMIUM, launchChromium, pkce, startCallerApp } from './browser.js';
import {
  type Body,
  email,
  reservePort,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SHOTS = process.env.LATCHKEY_SHOTS_DIR ?? join(ROOT, 'test-artifacts', 'oauth-pages');
const PASSWORD = 'correct horse battery staple';
const NAME = 'AcmeCorporationInternalToolsInspector';

declare const document: { documentElement: { scrollWidth: number } };

describe.skipIf(!HAVE_CHROMIUM)('the OpenID Provider on the hosted pages in Chromium', () => {
  let app: TestApp;
  let base: string;
  let caller: CallerApp;
  let browser: Browser;
  let t: TestTenant;
  let web: { id: string; secret: string };

  const callback = () => `${caller.origin}/callback`;
  const hosted = (path: string) =>
    `${base}${path}?${new URLSearchParams({ pk: t.publishableKey, redirect_url: callback() })}`;

  function authorizeUrl(tenant: TestTenant, clientId: string, redirectUri: string) {
    const { verifier, challenge } = pkce();
    const url = new URL(`${base}/t/${tenant.tenant.id}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: redirectUri,
      scope: 'openid email profile',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'st',
      nonce: 'n1',
    }))
      url.searchParams.set(k, v);
    return { url: url.href, verifier };
  }

  async function exchange(
    tenant: TestTenant,
    page: Page,
    redirectUri: string,
    verifier: string,
    client: { id: string; secret?: string },
  ): Promise<Body> {
    const at = new URL(page.url());
    expect(at.origin + at.pathname).toBe(redirectUri);
    expect(at.searchParams.get('state')).toBe('st');
    const res = await app.request(`/t/${tenant.tenant.id}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(client.secret
          ? {
              authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
            }
          : {}),
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: at.searchParams.get('code') ?? '',
        redirect_uri: redirectUri,
        code_verifier: verifier,
        ...(client.secret ? {} : { client_id: client.id }),
      }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Body;
  }

  beforeAll(async () => {
    [caller, browser] = await Promise.all([startCallerApp(), launchChromium()]);
    const socket = reservePort();
    base = `http://localhost:${socket.address().port}`;
    app = await startApp('sqlite', { socket, env: { PUBLIC_URL: base } });
    t = await app.tenant({ allowedOrigins: [caller.origin] });
    const made = await createApp(app.ctx.database.db, t.tenant.id, {
      name: 'Site',
      type: 'web',
      redirectUris: [callback()],
    });
    web = { id: made.app.id, secret: made.clientSecret ?? '' };
  });

  afterAll(async () => {
    await browser?.close();
    await app?.dispose();
    await caller?.close();
  });

  /** A page in a new context with a virtual platform authenticator (ctap2, internal). */
  async function withAuthenticator<T>(use: (page: Page, c: BrowserContext) => Promise<T>) {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable', { enableUI: false });
      await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });
      return await use(page, context);
    } finally {
      await context.close();
    }
  }

  it('a user with a passkey signs in to the app with "Sign in with a passkey": a code, amr hwk, user, mfa', async () => {
    await withAuthenticator(async (page) => {
      // The user signs up, adds a passkey on /account and signs out.
      await page.goto(hosted('/sign-up'));
      await page.fill('#email', email('op-passkey'));
      await page.fill('#password', PASSWORD);
      await Promise.all([page.waitForURL(`${callback()}#*`), page.click('button[type=submit]')]);
      await page.goto(hosted('/account'));
      await Promise.all([
        page.waitForURL(/done=passkey-added/),
        page.click('button:has-text("Add a passkey")'),
      ]);
      await page.goto(hosted('/sign-out'));
      await Promise.all([page.waitForURL(`${callback()}*`), page.click('button[type=submit]')]);

      // No autofill: the virtual authenticator would answer a conditional request at once.
      await page.addInitScript(() => {
        (
          globalThis as unknown as {
            PublicKeyCredential: { isConditionalMediationAvailable: () => Promise<boolean> };
          }
        ).PublicKeyCredential.isConditionalMediationAvailable = async () => false;
      });
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.location().url.endsWith('/favicon.ico')) return;
        if (m.type() === 'error' || m.type() === 'warning')
          problems.push(`${m.text()} (${m.location().url})`);
      });
      const { url, verifier } = authorizeUrl(t, web.id, callback());
      const signIn = await page.goto(url);
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      expect(new URL(page.url()).searchParams.get('interaction')).toBeTruthy();
      const csp = (await signIn?.headerValue('content-security-policy')) ?? '';
      expect(csp).toMatch(/script-src 'nonce-[^']+'; connect-src 'self';/);
      expect(csp).toContain(`form-action 'self' ${base} ${caller.origin}`);
      await Promise.all([
        page.waitForURL(`${callback()}?*`),
        page.click('button:has-text("Sign in with a passkey")'),
      ]);
      const tokens = await exchange(t, page, callback(), verifier, web);
      const id = decodeJwt(tokens.id_token);
      expect(id.nonce).toBe('n1');
      expect(id.amr).toEqual(['hwk', 'user', 'mfa']);
      expect(decodeJwt(tokens.access_token).amr).toEqual(['hwk', 'user', 'mfa']);
      expect(problems).toEqual([]);
    });
  }, 20_000);

  it('sign-in, consent, logout and error pages: clicked through to the app, at 1280 and 390 wide', async () => {
    mkdirSync(SHOTS, { recursive: true });
    // A tenant with a colour, and a public client registered by itself (RFC 7591), whose
    // name (its own choice) and the user's address are long words that must fit a phone.
    const open = await app.tenant();
    await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, open.tenant.id, {
      dynamicRegistration: true,
      primaryColor: '#7b2ff7',
    });
    const loopback = `http://127.0.0.1:${new URL(caller.origin).port}/callback`;
    const registered = await app.request(`/t/${open.tenant.id}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: NAME,
        redirect_uris: [loopback],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      }),
    });
    expect(registered.status).toBe(201);
    const client = (await registered.json()) as Body;
    const address = `ada.lovelace.analytical.engine.${email('op')}`;
    const up = await app.request('/v1/auth/sign-up', {
      method: 'POST',
      headers: { authorization: `Bearer ${open.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: address, password: PASSWORD }),
    });
    expect(up.status).toBe(201);

    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      const context = await browser.newContext({ viewport });
      try {
        const page = await context.newPage();
        const shot = async (name: string) => {
          await page.screenshot({
            path: join(SHOTS, `${name}-${viewport.width}.png`),
            fullPage: true,
          });
          expect(
            await page.evaluate(() => document.documentElement.scrollWidth),
            `${name} fits ${viewport.width}`,
          ).toBeLessThanOrEqual(viewport.width);
        };
        const { url, verifier } = authorizeUrl(open, client.client_id, loopback);
        await page.goto(url);
        expect(await page.textContent('h1')).toBe('Sign in');
        await shot('sign-in');
        await page.fill('#email', address);
        await page.fill('#password', PASSWORD);
        await Promise.all([
          page.waitForURL(/\/interaction\//),
          page.click('form button[type=submit]'),
        ]);
        expect(await page.textContent('h1')).toBe(`Allow ${NAME}?`);
        await shot('consent');
        // Allow is a POST whose redirects end at the app's loopback redirect URI.
        await Promise.all([
          page.waitForURL(`${loopback}?*`),
          page.click('button:has-text("Allow")'),
        ]);
        const tokens = await exchange(open, page, loopback, verifier, { id: client.client_id });

        const end = `${base}/t/${open.tenant.id}/oauth/end-session?id_token_hint=${tokens.id_token}`;
        await page.goto(end);
        expect(await page.textContent('h1')).toBe('Sign out');
        await shot('logout');
        await Promise.all([
          page.waitForResponse((r) => r.url().includes('/oauth/end-session/confirm')),
          page.click('button:has-text("Sign out")'),
        ]);
        await page.waitForSelector('h1:has-text("Signed out")');
        await shot('logged-out');

        await page.goto(
          `${base}/t/${open.tenant.id}/oauth/authorize?client_id=unknown&response_type=code`,
        );
        expect(await page.textContent('h1')).toBe('This sign-in cannot go on');
        await shot('error');
      } finally {
        await context.close();
      }
    }
  }, 60_000);
});
