/**
 * docs/design.md §14: Auth.js (`@auth/core`), configured with Latchkey as a generic OpenID
 * Connect provider by its documented settings only (issuer URL, client id, client secret),
 * signs a user in through the hosted sign-in page in a real Chromium. Auth.js's own
 * `Auth(request, config)` handler is served from a small node:http app on another origin
 * (`localhost`, so the two sites are distinct for the browser's cookies).
 On every database (about two seconds each).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Auth, type AuthConfig } from '@auth/core';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../server/src/modules/oauth/index.js';
import { HAVE_CHROMIUM, launchChromium } from '../../server/test/browser.js';
import { DIALECTS, email, postJson, startApp, type TestApp } from '../../server/test/support.js';

const PASSWORD = 'correct horse battery staple';

/** A Web Request for Auth.js from node:http's request. */
async function webRequest(req: IncomingMessage, origin: string): Promise<Request> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers))
    for (const one of [value ?? []].flat()) headers.append(name, one);
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(new URL(req.url ?? '/', origin), {
    method: req.method,
    headers,
    body: hasBody ? Buffer.concat(chunks) : undefined,
  });
}

/** Auth.js's Web Response written to node:http (each Set-Cookie its own header). */
async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  for (const [name, value] of response.headers)
    if (name !== 'set-cookie') res.setHeader(name, value);
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** A relying party: Auth.js under /auth, and a home page. */
function relyingParty(config: () => AuthConfig): Server {
  return createServer((req, res) => {
    const origin = `http://${req.headers.host}`;
    if (!req.url?.startsWith('/auth/')) {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end('<!doctype html><title>Home</title><h1>Home of the app</h1>');
      return;
    }
    webRequest(req, origin)
      .then((request) => Auth(request, config()))
      .then((response) => writeResponse(res, response))
      .catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
  });
}

/** The README's Auth.js provider (snippets/authjs.ts), read with these settings in the environment. */
async function readmeProvider(issuer: string, clientId: string, clientSecret: string) {
  Object.assign(process.env, {
    LATCHKEY_ISSUER: issuer,
    LATCHKEY_CLIENT_ID: clientId,
    LATCHKEY_CLIENT_SECRET: clientSecret,
  });
  vi.resetModules();
  const { latchkey } = await import('../snippets/authjs.js');
  return latchkey;
}

it('the README quotes snippets/authjs.ts verbatim', async () => {
  const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Use Latchkey as your OpenID Provider'));
  const snippet = await readFile(new URL('../snippets/authjs.ts', import.meta.url), 'utf8');
  expect(section).toContain(`\`\`\`ts\n${snippet}\`\`\``);
});

describe.skipIf(!HAVE_CHROMIUM).each(DIALECTS)(
  'Auth.js with Latchkey as its OpenID Provider, in Chromium, on %s',
  (dialect) => {
    let app: TestApp;
    let browser: Browser;
    let rp: Server;
    let rpUrl: string;
    let settings: AuthConfig;
    let issuerPath: string;
    let clientId: string;
    const address = email();

    beforeAll(async () => {
      [app, browser] = await Promise.all([startApp(dialect), launchChromium()]);
      const t = await app.tenant();
      issuerPath = `/t/${t.tenant.id}`;
      rp = relyingParty(() => settings);
      await new Promise<void>((done) => rp.listen(0, '127.0.0.1', done));
      rpUrl = `http://localhost:${(rp.address() as AddressInfo).port}`;
      // The redirect URI Auth.js documents for a provider with id `latchkey`.
      const made = await createApp(app.ctx.database.db, t.tenant.id, {
        name: 'Auth.js app',
        type: 'web',
        redirectUris: [`${rpUrl}/auth/callback/latchkey`],
        postLogoutRedirectUris: [`${rpUrl}/`],
      });
      clientId = made.app.id;
      settings = {
        basePath: '/auth',
        trustHost: true,
        secret: randomBytes(32).toString('base64url'),
        // The README's set-up, as written (snippets/authjs.ts), with what it tells to set.
        providers: [
          await readmeProvider(`${app.url}/t/${t.tenant.id}`, made.app.id, made.clientSecret ?? ''),
        ],
      };
      const up = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
        email: address,
        password: PASSWORD,
      });
      expect(up.status).toBe(201);
    });
    afterAll(async () => {
      await browser?.close();
      await new Promise((done) => rp?.close(done));
      await app?.dispose();
    });

    it("signs in on Latchkey's hosted page, comes back signed in, and signs out through end-session", async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (m) => {
        // Latchkey's pages only (Auth.js's own page loads its provider icons from authjs.dev),
        // less the browser's own favicon request.
        const from = m.location().url;
        if (!from.startsWith(`${app.url}/`) || from.endsWith('/favicon.ico')) return;
        if (m.type() === 'error' || m.type() === 'warning')
          problems.push(`${m.text()} (${m.location().url})`);
      });
      const visited: string[] = [];
      page.on('request', (r) => {
        if (!r.isNavigationRequest()) return;
        const url = new URL(r.url());
        visited.push(
          `${r.method()} ${url.origin === app.url ? 'latchkey' : 'app'} ${url.pathname}`,
        );
      });
      await page.goto(`${rpUrl}/auth/signin`);
      await Promise.all([
        page.waitForURL((url) => url.origin === app.url && url.pathname === '/sign-in'),
        page.click('button:has-text("Sign in with Latchkey")'),
      ]);
      await page.fill('#email', address);
      await page.fill('#password', PASSWORD);
      await Promise.all([
        page.waitForURL((url) => url.origin === rpUrl && !url.pathname.startsWith('/auth/')),
        page.click('button[type=submit]'),
      ]);
      await page.goto(`${rpUrl}/auth/session`);
      const session = JSON.parse((await page.textContent('body')) ?? '') as {
        user?: { email?: string };
      };
      expect(session.user?.email).toBe(address);
      // The whole way: Auth.js, the provider, the hosted sign-in form, and back.
      const interaction = expect.stringMatching(
        new RegExp(`^GET latchkey ${issuerPath}/interaction/`),
      );
      expect(visited).toEqual([
        'GET app /auth/signin',
        'POST app /auth/signin/latchkey',
        `GET latchkey ${issuerPath}/oauth/authorize`,
        interaction,
        'GET latchkey /sign-in',
        'POST latchkey /sign-in',
        interaction,
        expect.stringMatching(new RegExp(`^GET latchkey ${issuerPath}/oauth/authorize/`)),
        'GET app /auth/callback/latchkey',
        'GET app /',
        'GET app /auth/session',
      ]);
      expect(problems).toEqual([]);

      // Signed out of the app only: Latchkey's cookies (another site) still sign the browser
      // in, with no form, when Auth.js asks again.
      await context.clearCookies({ domain: 'localhost' });
      visited.length = 0;
      await page.goto(`${rpUrl}/auth/signin`);
      await Promise.all([
        page.waitForURL((url) => url.origin === rpUrl && !url.pathname.startsWith('/auth/')),
        page.click('button:has-text("Sign in with Latchkey")'),
      ]);
      expect(visited).not.toContain('GET latchkey /sign-in');
      await page.goto(`${rpUrl}/auth/session`);
      expect(JSON.parse((await page.textContent('body')) ?? '')).toMatchObject({
        user: { email: address },
      });

      // RP-initiated logout (Auth.js has none of its own): the logout page's "Sign out"
      // goes back to the app's post-logout URI, and the next sign-in needs the form again.
      const end = new URL(`${app.url}${issuerPath}/oauth/end-session`);
      end.searchParams.set('client_id', clientId);
      end.searchParams.set('post_logout_redirect_uri', `${rpUrl}/`);
      end.searchParams.set('state', 'bye');
      await page.goto(end.href);
      await Promise.all([
        page.waitForURL((url) => url.origin === rpUrl && url.pathname === '/'),
        page.click('button:has-text("Sign out")'),
      ]);
      expect(new URL(page.url()).searchParams.get('state')).toBe('bye');
      await context.clearCookies({ domain: 'localhost' });
      await page.goto(`${rpUrl}/auth/signin`);
      await Promise.all([
        page.waitForURL((url) => url.origin === app.url && url.pathname === '/sign-in'),
        page.click('button:has-text("Sign in with Latchkey")'),
      ]);
      expect(await page.inputValue('#password')).toBe('');
      expect(problems).toEqual([]);
      await context.close();
    });
  },
);
