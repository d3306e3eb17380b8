/**
 * The page side of the @latchkey/js Chromium suites: the caller's site on another origin
 * (an app page and a callback page under a strict CSP), and what the tests call in it.
 * `page.evaluate` runs outside the page's CSP, as devtools do; the library itself does not.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';

/** What the tests call in the page (evaluate runs outside the page's CSP, as devtools do). */
export interface PageClient {
  mount(target: string, options: { redirectUrl: string }): () => void;
  handleRedirectCallback(): Promise<{ user: { email: string }; accessToken: string } | null>;
  isSignedIn(): boolean;
  getUser(): { email: string; sid: string } | null;
  getToken(): Promise<string | null>;
  signOut(): Promise<void>;
  addListener(listener: (state: { isSignedIn: boolean }) => void): () => void;
}
export interface PageGlobals {
  Latchkey(options: { publishableKey: string }): PageClient;
  localStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };
  location: { href: string; hash: string; origin: string };
  document: { querySelector(selector: string): PageNode | null };
  axe: { run(context: unknown): Promise<{ violations: { id: string; help: string }[] }> };
  cspViolations: string[];
  states: boolean[];
}
interface PageNode {
  shadowRoot: {
    querySelector(s: string): PageNode | null;
    querySelectorAll(s: string): ArrayLike<unknown>;
  };
  textContent: string | null;
}
declare const window: PageGlobals;

/** The caller's site: an app page and a callback page, both loading the script under a strict CSP. */
export async function startSite(authUrl: string) {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/app.css') {
      // The host page's own rules, aimed at everything: none may reach the shadow root.
      res.writeHead(200, { 'content-type': 'text/css' });
      res.end('button{background:rgb(255,0,0)!important;font-size:40px}h2{color:rgb(0,0,255)}');
      return;
    }
    if (path === '/logo.svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      res.end(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40"><circle cx="20" cy="20" r="18" fill="#6639ba"/><path d="M20 8l6 16h-12z" fill="#fff"/></svg>',
      );
      return;
    }
    if (path !== '/' && path !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; script-src ${authUrl}; connect-src ${authUrl}; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'`,
    });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>App</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/app.css"><script src="${authUrl}/sdk/latchkey.js"></script></head>
<body><main><h1>App</h1><button id="host-button">The page's own button</button><div id="sign-in"></div></main></body></html>`);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://localhost:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

export type Site = Awaited<ReturnType<typeof startSite>>;

/** A fresh browser context that records every CSP violation of its pages. */
export async function withContext<T>(
  browser: Browser,
  use: (context: BrowserContext) => Promise<T>,
  options: Parameters<Browser['newContext']>[0] = {},
): Promise<T> {
  const context = await browser.newContext(options);
  await context.addInitScript(() => {
    window.cspViolations = [];
    (
      window as unknown as { addEventListener(t: string, l: (e: never) => void): void }
    ).addEventListener(
      'securitypolicyviolation',
      (e: { violatedDirective: string; blockedURI: string }) =>
        window.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`),
    );
  });
  try {
    return await use(context);
  } finally {
    await context.close();
  }
}

/** Opens the app page and mounts the buttons; resolves once they are drawn. */
export async function mountButtons(page: Page, site: Site, publishableKey: string): Promise<void> {
  const response = await page.goto(`${site.origin}/`);
  if (response?.status() !== 200) throw new Error(`the app page answered ${response?.status()}`);
  await page.evaluate(
    ({ pk, redirectUrl }) => {
      window.Latchkey({ publishableKey: pk }).mount('#sign-in', { redirectUrl });
    },
    { pk: publishableKey, redirectUrl: `${site.origin}/callback` },
  );
  await page
    .getByRole('button', { name: /^Continue with/ })
    .first()
    .waitFor();
}

export const buttons = (page: Page) =>
  page.getByRole('button', { name: /^Continue with/ }).allTextContents();
export const cspViolations = (page: Page) => page.evaluate(() => window.cspViolations);

/** The client of `pk` in a page, as the tests drive it. */
export function pageClient(pk: string) {
  return {
    /** handleRedirectCallback(): the session's e-mail and token, or the error's code. */
    handleCallback: (page: Page) =>
      page.evaluate(async (key) => {
        try {
          const session = await window.Latchkey({ publishableKey: key }).handleRedirectCallback();
          return { email: session?.user.email, token: session?.accessToken };
        } catch (error) {
          return { error: (error as { code: string }).code };
        }
      }, pk),
    signedIn: (page: Page) =>
      page.evaluate((key) => window.Latchkey({ publishableKey: key }).isSignedIn(), pk),
    user: (page: Page) =>
      page.evaluate((key) => window.Latchkey({ publishableKey: key }).getUser(), pk),
    token: (page: Page) =>
      page.evaluate((key) => window.Latchkey({ publishableKey: key }).getToken(), pk),
    signOut: (page: Page) =>
      page.evaluate((key) => window.Latchkey({ publishableKey: key }).signOut(), pk),
    stored: (page: Page) =>
      page.evaluate((key) => window.localStorage.getItem(`latchkey:${key}`), pk),
    /** Moves the stored access token's expiry into the past, as time passing would. */
    expire: (page: Page) =>
      page.evaluate((key) => {
        const name = `latchkey:${key}`;
        const tokens = JSON.parse(window.localStorage.getItem(name) as string);
        tokens.expiresAt = Date.now() - 1000;
        window.localStorage.setItem(name, JSON.stringify(tokens));
      }, pk),
  };
}
