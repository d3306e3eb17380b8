/**
 * The first hour, as a newcomer lives it: `latchkey serve` runs, and a fresh app outside
 * this repository installs @latchkey/react and @latchkey/node from it (docs/design.md §10.1)
 * with plain `npm install`, @latchkey/js coming along from the same server; the app is
 * bundled with esbuild, signs a user in through the hosted page in Chromium, and checks the
 * token with the installed @latchkey/node.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_CHROMIUM, launchChromium } from './browser.js';
import { latchkey, startServe } from './cli-run.js';
import { email, SECRET } from './support.js';

const run = promisify(execFile);
const PASSWORD = 'correct horse battery staple';

/**
 * This process's environment without what `npm test` adds for its scripts (npm_config_prefix,
 * npm_config_local_prefix, npm_package_*: they would point the app's npm at this repository),
 * keeping the user's own npm settings (cache, registry, .npmrc).
 */
const npmEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => !/^npm_/i.test(name) || /^npm_config_(cache|registry|userconfig)$/i.test(name),
  ),
);

/** A free loopback port: the server's PUBLIC_URL must name it before it starts. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

/** The app's own site: index.html and the bundle esbuild wrote. */
async function startSite(dir: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split(/[?#]/)[0];
    if (path === '/app.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(readFileSync(join(dir, 'public/app.js')));
      return;
    }
    res.writeHead(path === '/' ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>My app</title></head><body><div id="root"></div><script src="/app.js"></script></body></html>',
    );
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, origin: `http://localhost:${(server.address() as AddressInfo).port}` };
}

/** What a newcomer writes: the provider, the buttons, the signed-in user and the user menu. */
const MAIN = `import { LatchkeyProvider, SignedIn, SignedOut, SignIn, UserButton, useAuth, useUser } from '@latchkey/react';
import { useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';

function Me() {
  const user = useUser();
  const { getToken } = useAuth();
  const [token, setToken] = useState('');
  useEffect(() => { getToken().then(setToken); }, [getToken]);
  return <p>Signed in as <b>{user.email}</b><output data-token={token} /></p>;
}

createRoot(document.getElementById('root')).render(
  <LatchkeyProvider publishableKey={PUBLISHABLE_KEY} authUrl={AUTH_URL}>
    <SignedOut><SignIn redirectUrl={location.origin + '/'} /></SignedOut>
    <SignedIn><Me /><UserButton /></SignedIn>
  </LatchkeyProvider>,
);
`;

/** The app's server side: the token checked locally against the tenant's keys. */
const VERIFY = `import { createLatchkey } from '@latchkey/node';
const [token, tenantId, url] = process.argv.slice(2);
const claims = await createLatchkey({ tenantId, apiUrl: url }).verifyToken(token);
process.stdout.write(JSON.stringify({ sub: claims.sub, email: claims.email }));
`;

describe.skipIf(!HAVE_CHROMIUM)('a new app installs the packages from the running server', () => {
  const data = mkdtempSync(join(tmpdir(), 'latchkey-install-data-'));
  // Outside the repository: no workspace, no node_modules above it to fall back on.
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-first-app-'));
  let env: Record<string, string>;
  let serve: Awaited<ReturnType<typeof startServe>>;
  let site: Awaited<ReturnType<typeof startSite>>;
  let browser: Browser;
  let url: string;

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    env = {
      DATABASE_URL: `sqlite:${join(data, 'latchkey.db')}`,
      LATCHKEY_SECRET: SECRET,
      PUBLIC_URL: url,
    };
    [serve, site, browser] = await Promise.all([
      startServe({ ...env, PORT: String(port) }, '/readyz'),
      startSite(dir),
      launchChromium(),
    ]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    site?.server.closeAllConnections();
    site?.server.close();
    serve?.child.kill('SIGTERM');
    await serve?.exited;
    rmSync(dir, { recursive: true, force: true });
    rmSync(data, { recursive: true, force: true });
  });

  it('npm install from the server, bundle, sign in in Chromium, verify with @latchkey/node', async () => {
    // A development tenant that allows the app's origin, and a user, as the README says.
    const created = await latchkey(
      ['tenant', 'create', '--name', 'First app', '--origin', site.origin, '--json'],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    const { tenant, secretKey, publishableKey } = JSON.parse(created.stdout) as {
      tenant: { id: string };
      secretKey: string;
      publishableKey: string;
    };
    const address = email('first');
    const signUp = await fetch(`${url}/v1/auth/sign-up`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: address, password: PASSWORD }),
    });
    expect(signUp.status).toBe(201);

    // npm install, as the README says; the registry only for react, react-dom and esbuild.
    writeFileSync(join(dir, 'package.json'), '{ "name": "first-app", "private": true }\n');
    const started = performance.now();
    await run(
      'npm',
      [
        'install',
        `${url}/sdk/npm/latchkey-react.tgz`,
        `${url}/sdk/npm/latchkey-node.tgz`,
        'react@19.3.1',
        'react-dom@19.3.1',
        'esbuild@0.28.2',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
      ],
      { cwd: dir, env: npmEnv, timeout: 60_000 },
    );
    const installMs = Math.round(performance.now() - started);
    console.info(`npm install of the app took ${installMs} ms`);
    const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string; resolved?: string }>;
    };
    expect(lock.packages['node_modules/@latchkey/react']?.resolved).toBe(
      `${url}/sdk/npm/latchkey-react.tgz`,
    );
    // @latchkey/js from the server, once: react's dependency, not a registry package.
    expect(lock.packages['node_modules/@latchkey/js']?.resolved).toBe(
      `${url}/sdk/npm/latchkey-js.tgz`,
    );
    expect(Object.keys(lock.packages).filter((p) => p.endsWith('/@latchkey/js'))).toEqual([
      'node_modules/@latchkey/js',
    ]);

    // The app, bundled by the esbuild it installed.
    writeFileSync(join(dir, 'main.jsx'), MAIN);
    writeFileSync(join(dir, 'verify.mjs'), VERIFY);
    // node_modules/.bin/esbuild: npm links the CLI (esbuild's install step may replace it
    // with the native binary), as `npx esbuild` would run it.
    await run(
      join(dir, 'node_modules/.bin/esbuild'),
      [
        'main.jsx',
        '--bundle',
        '--jsx=automatic',
        '--outfile=public/app.js',
        `--define:PUBLISHABLE_KEY=${JSON.stringify(publishableKey)}`,
        `--define:AUTH_URL=${JSON.stringify(url)}`,
        '--define:process.env.NODE_ENV="production"',
        '--log-level=warning',
      ],
      { cwd: dir, timeout: 30_000 },
    );

    // Signed out: the tenant's buttons; "Continue with e-mail" opens the hosted page.
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${site.origin}/`);
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/sign-in'),
      page.getByRole('button', { name: 'Continue with e-mail' }).click(),
    ]);
    await page.fill('#email', address);
    await page.fill('#password', PASSWORD);
    await Promise.all([
      page.waitForURL((u) => u.href.startsWith(`${site.origin}/`)),
      page.click('button[type=submit]'),
    ]);
    // Back in the app, signed in: the user's address and the user menu.
    await page.getByText(`Signed in as ${address}`).waitFor();
    await page.getByRole('button', { name: new RegExp(`account: ${address}`) }).waitFor();
    const token = await page.locator('output[data-token^="ey"]').getAttribute('data-token');
    await context.close();

    // The app's server checks that token with the @latchkey/node it installed.
    const { stdout } = await run(process.execPath, ['verify.mjs', token ?? '', tenant.id, url], {
      cwd: dir,
      timeout: 20_000,
    });
    expect(JSON.parse(stdout)).toEqual({ sub: expect.any(String), email: address });
  }, 90_000);
});
