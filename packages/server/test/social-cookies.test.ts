/**
 * Under https the social flow cookie is `__Host-` prefixed, which browsers accept (and
 * so let be cleared) only with Secure: the callback's clearing must carry it too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, startApp, type TestApp } from './support.js';

describe.each(DIALECTS)('social flow cookie under https on %s', (dialect) => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startApp(dialect, { env: { PUBLIC_URL: 'https://auth.example.com' } });
  });
  afterAll(() => app?.dispose());

  it.each(['github', 'apple'])('clears the %s flow cookie with Secure', async (provider) => {
    const name = `__Host-latchkey_oauth_${provider}`;
    const res = await app.request(`/oauth/${provider}/callback?state=unknown`, {
      headers: { cookie: `${name}=unknown` },
    });
    expect(res.status).toBe(400);
    const cleared = res.headers.getSetCookie().find((c) => c.startsWith(`${name}=;`));
    expect(cleared).toBeDefined();
    expect(cleared).toMatch(/; Secure/i);
    expect(cleared).toMatch(/; Path=\//i);
  });
});
