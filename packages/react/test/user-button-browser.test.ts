/**
 * @latchkey/react in real Chromium, as a newcomer's app uses it: a page bundled from the built
 * packages (esbuild), on its own origin, against the real server. The UserButton's menu opens
 * under the avatar wherever the button sits (the stock Vite layout, left, centre, right; desktop
 * and phone); after a sign-in the browser goes back where it started (or to afterSignInUrl);
 * useUser() has the profile, with the name given at sign-up. Screenshots in test-artifacts/.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenant } from '../../server/src/modules/tenants/index.js';
import { HAVE_CHROMIUM, launchChromium } from '../../server/test/browser.js';
import {
  browserSignIn,
  email,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from '../../server/test/support.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = resolve(HERE, '../../../test-artifacts');
const PASSWORD = 'correct horse battery staple';
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

/** The app: a path shown from state that follows popstate (as a router does), the button, text. */
const APP = `
import { Fragment, createElement as h, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { LatchkeyProvider, SignedIn, SignedOut, UserButton, useLatchkey, useUser } from '@latchkey/react';

function usePath() {
  const read = () => location.pathname + location.search;
  const [path, setPath] = useState(read);
  useEffect(() => {
    const update = () => setPath(read());
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return path;
}

function App() {
  const path = usePath();
  const user = useUser();
  const { isLoaded, signInWith } = useLatchkey();
  return h(Fragment, null,
    h(SignedIn, null, h(UserButton)),
    h('h1', null, 'Vite + React'),
    h('p', { id: 'path' }, path),
    h('p', { id: 'hello' }, isLoaded ? (user ? 'Hello, ' + (user.name || user.email) : 'Signed out') : ''),
    h('p', null, 'Edit src/App.jsx and save to test HMR. Click on the Vite and React logos to learn more.'),
    h(SignedOut, null, h('button', {
      type: 'button',
      onClick: () => signInWith('email', { redirectUrl: location.origin + '/callback' }),
    }, 'Sign in')),
  );
}

createRoot(document.getElementById('root')).render(
  h(LatchkeyProvider, {
    publishableKey: window.TEST.pk,
    authUrl: window.TEST.authUrl,
    afterSignInUrl: sessionStorage.getItem('test:after') || undefined,
  }, h(App)),
);
`;

/** Where the button sits: #root's rules (the stock Vite template's, or a row). */
const LAYOUTS: Record<string, string> = {
  vite: `body{margin:0;display:flex;place-items:center;min-width:320px;min-height:100vh}
#root{max-width:1280px;margin:0 auto;padding:2rem;text-align:center;display:flex;flex-direction:column;align-items:center}`,
  left: '#root{display:flex;flex-wrap:wrap;align-items:flex-start;gap:16px}',
  center: '#root{display:flex;flex-direction:column;align-items:center;text-align:center}',
  right:
    '#root{display:flex;flex-wrap:wrap;align-items:flex-start;gap:16px;flex-direction:row-reverse}',
  // A footer: no room below the avatar, so the menu opens above it.
  footer:
    '#root{position:fixed;bottom:0;left:0;right:0;display:flex;flex-direction:row-reverse;align-items:flex-end;gap:16px;padding:8px}',
};

async function startSite(authUrl: string, pk: string) {
  const bundle = await build({
    stdin: { contents: APP, resolveDir: HERE, loader: 'js' },
    bundle: true,
    format: 'esm',
    write: false,
    minify: true,
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  });
  const script = bundle.outputFiles[0]?.text ?? '';
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/app.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
      return;
    }
    const css = LAYOUTS[url.searchParams.get('layout') ?? 'vite'] ?? '';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>App</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif}${css}</style>
<script>window.TEST=${JSON.stringify({ pk, authUrl })}</script>
<script type="module" src="/app.js"></script></head><body><div id="root"></div></body></html>`,
    );
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    origin: `http://localhost:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

describe.skipIf(!HAVE_CHROMIUM)('@latchkey/react in Chromium', () => {
  let app: TestApp;
  let t: TestTenant;
  let site: Awaited<ReturnType<typeof startSite>>;
  let browser: Browser;

  beforeAll(async () => {
    app = await startApp('sqlite');
    t = await app.tenant();
    site = await startSite(app.url, t.publishableKey);
    // The tenant's allowed origin is the site's, known once it listens.
    await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, t.tenant.id, {
      allowedOrigins: [site.origin],
    });
    browser = await launchChromium();
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await app?.dispose();
  });

  /** A user signed up by the app's server, with a name. */
  async function signUp(name: string): Promise<string> {
    const address = email('react-browser');
    const up = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
      email: address,
      password: PASSWORD,
      name,
    });
    expect(up.status).toBe(201);
    return address;
  }

  /** A context whose pages start signed in (a browser session stored as the library keeps it). */
  async function signedInContext(viewport: typeof DESKTOP, name: string): Promise<BrowserContext> {
    const address = await signUp(name);
    const s = await browserSignIn(app, t, { email: address, password: PASSWORD }, site.origin);
    const context = await browser.newContext({ viewport, isMobile: viewport === PHONE });
    const stored = JSON.stringify({
      accessToken: s.accessToken,
      refreshToken: s.refreshToken,
      expiresAt: Date.now() + s.expiresIn * 1000,
    });
    await context.addInitScript(
      ([key, value]) => {
        if (!localStorage.getItem(key as string))
          localStorage.setItem(key as string, value as string);
      },
      [`latchkey:${t.publishableKey}`, stored],
    );
    return context;
  }

  const box = (page: Page, selector: string) =>
    page.locator(selector).evaluate((el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
    });

  for (const [size, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    it(`opens the menu under the avatar, inside the viewport, in every layout (${size})`, async () => {
      const context = await signedInContext(viewport, 'Ada Lovelace');
      const page = await context.newPage();
      for (const layout of Object.keys(LAYOUTS)) {
        await page.goto(`${site.origin}/?layout=${layout}`);
        // The profile's name: initials from it, not from the e-mail.
        const avatar = page.getByRole('button', { name: /^AL, account: / });
        await avatar.waitFor();
        await avatar.click();
        const menu = page.getByRole('menu').locator('..');
        await menu.waitFor();
        const a = await box(page, '[aria-haspopup=menu]');
        const m = await menu.evaluate((el) => {
          const r = el.getBoundingClientRect();
          return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
        });
        const where = `${layout}, ${size}: avatar ${JSON.stringify(a)}, menu ${JSON.stringify(m)}`;
        // Directly below the avatar (above it in a footer), overlapping it horizontally, all
        // of it on screen.
        if (layout === 'footer') {
          expect(m.bottom, where).toBeLessThanOrEqual(a.top);
          expect(a.top - m.bottom, where).toBeLessThanOrEqual(12);
        } else {
          expect(m.top, where).toBeGreaterThanOrEqual(a.bottom);
          expect(m.top - a.bottom, where).toBeLessThanOrEqual(12);
        }
        expect(m.top, where).toBeGreaterThanOrEqual(0);
        expect(m.left < a.right && m.right > a.left, where).toBe(true);
        expect(m.left, where).toBeGreaterThanOrEqual(0);
        expect(m.right, where).toBeLessThanOrEqual(viewport.width);
        expect(m.bottom, where).toBeLessThanOrEqual(viewport.height);
        await page.screenshot({ path: join(ARTIFACTS, `react-user-button-${layout}-${size}.png`) });
        await page.keyboard.press('Escape');
        await expect.poll(() => page.getByRole('menu').count()).toBe(0);
      }
      await context.close();
    });
  }

  /** The hosted e-mail form, from the app's "Sign in" button, and back through /callback. */
  async function signInFrom(page: Page, start: string, address: string): Promise<void> {
    await page.goto(`${site.origin}${start}`);
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/sign-in'),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    await page.fill('#email', address);
    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
  }

  it('goes back to the page where the sign-in started, signed in, with the name given at sign-up', async () => {
    const address = await signUp('Grace Brewster Hopper');
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await signInFrom(page, '/somewhere?x=1&layout=left', address);
    await expect.poll(() => page.url()).toBe(`${site.origin}/somewhere?x=1&layout=left`);
    // The document is the one loaded at /callback: no reload, the app followed the popstate.
    const loaded = await page.evaluate(
      () => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).name,
    );
    expect(new URL(loaded).pathname).toBe('/callback');
    await expect.poll(() => page.locator('#path').textContent()).toBe('/somewhere?x=1&layout=left');
    await expect
      .poll(() => page.locator('#hello').textContent())
      .toBe('Hello, Grace Brewster Hopper');
    expect(await page.getByRole('button', { name: /^GB, account: / }).count()).toBe(1);
    // The fragment (tokens, code) left the address bar and the history entry.
    expect(await page.evaluate(() => location.hash)).toBe('');
    await page.screenshot({ path: join(ARTIFACTS, 'react-after-sign-in.png') });
    await context.close();
  });

  it('goes to afterSignInUrl when the provider has one', async () => {
    const address = await signUp('Katherine Johnson');
    const context = await browser.newContext({ viewport: PHONE, isMobile: true });
    const page = await context.newPage();
    await page.goto(`${site.origin}/`);
    await page.evaluate(() => sessionStorage.setItem('test:after', '/welcome?tour=1'));
    await signInFrom(page, '/somewhere?x=1', address);
    await expect.poll(() => page.url()).toBe(`${site.origin}/welcome?tour=1`);
    await expect.poll(() => page.locator('#path').textContent()).toBe('/welcome?tour=1');
    await expect.poll(() => page.locator('#hello').textContent()).toBe('Hello, Katherine Johnson');
    await page.screenshot({ path: join(ARTIFACTS, 'react-after-sign-in-url-phone.png') });
    await context.close();
  });
});
