/**
 * docs/design.md §15 in a real browser: Chromium against an Express app with
 * `latchkeySession()` and the real server. A signed-out visit to a protected page goes to the
 * hosted form and back; the cookie is HttpOnly and out of the page's reach; sign-out ends
 * the session at the provider too, so the next visit asks for the password again.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_CHROMIUM, launchChromium } from '../../server/test/browser.js';
import { latchkeySession, type Session } from '../src/index.js';
import { type Provider, startProvider } from './session-support.js';

describe.skipIf(!HAVE_CHROMIUM)('cookie session in Chromium (Express)', () => {
  let provider: Provider;
  let server: Server;
  let base: string;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    provider = await startProvider('sqlite');
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = await provider.register(base);
    const sessions = latchkeySession(provider.config(client, base));
    const app = express();
    app.use(sessions.express());
    const auth = (req: unknown) => (req as { auth?: Session | null }).auth;
    app.get('/', (req, res) => {
      res.type('html').send(`<h1>Home</h1><p>${auth(req) ? 'signed in' : 'signed out'}</p>`);
    });
    app.get('/dashboard', sessions.requireSession.express(), (req, res) => {
      res
        .type('html')
        .send(
          `<h1>Signed in as ${auth(req)?.email}</h1><form method="post" action="/api/latchkey/sign-out"><button id="sign-out">Sign out</button></form>`,
        );
    });
    server.on('request', app);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await provider?.dispose();
  });

  it('signs in through the hosted form, keeps the cookie from scripts, signs out at the provider', async () => {
    const user = await provider.newUser();
    const context = await browser.newContext();
    const page = await context.newPage();

    await page.goto(`${base}/dashboard?tab=1`);
    expect(new URL(page.url()).origin).toBe(provider.app.url);
    await page.fill('#email', user.email);
    await page.fill('#password', user.password);
    await Promise.all([
      page.waitForURL(`${base}/dashboard?tab=1`),
      page.click('button[type=submit]'),
    ]);
    expect(await page.textContent('h1')).toBe(`Signed in as ${user.email}`);

    const cookies = await context.cookies(base);
    const session = cookies.find((c) => c.name === 'latchkey_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/', secure: false });
    expect(cookies.filter((c) => c.name.includes('_tx_'))).toEqual([]);
    expect(await page.evaluate('document.cookie')).not.toContain('latchkey_session');

    // Sign out: the provider asks to confirm (its page), then comes back to APP_BASE_URL.
    await Promise.all([
      page.waitForURL((url) => url.origin === provider.app.url),
      page.click('#sign-out'),
    ]);
    expect((await context.cookies(base)).map((c) => c.name)).not.toContain('latchkey_session');
    await Promise.all([
      page.waitForURL(`${base}/`),
      page.click('button[type=submit][value=yes], button[type=submit]'),
    ]);
    expect(await page.textContent('p')).toBe('signed out');

    // The hosted session ended too: the protected page asks for the password again.
    await page.goto(`${base}/dashboard`);
    expect(await page.locator('#password').count()).toBe(1);
    await context.close();
  });
});
