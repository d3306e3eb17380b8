/**
 * The middleware's decisions for requests without a session (no call to Latchkey is needed
 * for these): who is sent to sign in and how, what API calls get, where it stops sending a
 * browser that keeps coming back signed out, and what it leaves alone. The signed-in paths
 * (refresh, revocation) run against the real server in example-browser.test.ts.
 */
import { NextRequest } from 'next/server';
import { beforeAll, describe, expect, it } from 'vitest';

const APP = 'http://localhost:3000';

beforeAll(() => {
  Object.assign(process.env, {
    LATCHKEY_ISSUER: 'http://127.0.0.1:1/t/tenant',
    LATCHKEY_CLIENT_ID: 'app_test',
    LATCHKEY_CLIENT_SECRET: 'secret',
    LATCHKEY_COOKIE_SECRET: 'a-cookie-secret-of-at-least-32-characters!',
    APP_BASE_URL: APP,
  });
});

const { latchkeyMiddleware } = await import('../src/index.js');

const page = (path: string, headers: Record<string, string> = {}) =>
  new NextRequest(`${APP}${path}`, {
    headers: { accept: 'text/html', 'sec-fetch-mode': 'navigate', ...headers },
  });

describe('latchkeyMiddleware, signed out', () => {
  const middleware = latchkeyMiddleware({ protect: ['/dashboard', /^\/admin\b/] });

  it('sends a page of a protected route to sign in, coming back to its path and query', async () => {
    const res = await middleware(page('/dashboard/settings?tab=2'));
    expect(res.status).toBe(307);
    expect(res.headers.get('location')).toBe(
      `${APP}/api/latchkey/sign-in?returnTo=%2Fdashboard%2Fsettings%3Ftab%3D2`,
    );
    expect((await middleware(page('/admin'))).status).toBe(307);
  });

  it('answers an API call to a protected route 401 problem+json, not a redirect', async () => {
    const res = await middleware(
      new NextRequest(`${APP}/dashboard/data`, { headers: { accept: 'application/json' } }),
    );
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(await res.json()).toMatchObject({ status: 401, title: 'Unauthorized' });
    const post = await middleware(new NextRequest(`${APP}/dashboard`, { method: 'POST' }));
    expect(post.status).toBe(401);
  });

  it('stops after three redirects in a minute (cookies refused): an explanation, no loop', async () => {
    const first = await middleware(page('/dashboard'));
    expect(first.headers.getSetCookie().join()).toMatch(/latchkey_redirects=1;.*Max-Age=60/i);
    const third = await middleware(page('/dashboard', { cookie: 'latchkey_redirects=2' }));
    expect(third.status).toBe(307);
    const fourth = await middleware(page('/dashboard', { cookie: 'latchkey_redirects=3' }));
    expect(fourth.status).toBe(401);
    expect((await fourth.json()).detail).toMatch(/did not keep the session cookie/);
  });

  it('lets public routes, look-alike paths and its own routes through', async () => {
    for (const path of ['/', '/dashboards', '/administrator', '/api/latchkey/callback?code=x']) {
      const res = await middleware(page(path));
      expect(res.status, path).toBe(200);
      expect(res.headers.get('x-middleware-next'), path).toBe('1');
    }
  });

  it('lets a server action through to check auth() itself (actions are endpoints of their own)', async () => {
    const res = await middleware(
      new NextRequest(`${APP}/dashboard`, { method: 'POST', headers: { 'next-action': 'abc' } }),
    );
    expect(res.headers.get('x-middleware-next')).toBe('1');
  });

  it('without `protect`, protects nothing', async () => {
    const res = await latchkeyMiddleware()(page('/dashboard'));
    expect(res.headers.get('x-middleware-next')).toBe('1');
  });
});
