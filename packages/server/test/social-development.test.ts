/**
 * Development mode of social sign-in (docs/design.md §20): on a development tenant a
 * provider is on without credentials, and Latchkey's own page stands in for it. The typed
 * answer takes the real callback's path: linking policy, identities, session, redirect.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LatchkeyError } from '../src/errors/index.js';
import {
  DEVELOPMENT_ISSUER,
  developmentSubject,
  listProviderSettings,
  setProvider,
} from '../src/modules/social/index.js';
import { signedInAdmin } from './admin-support.js';
import {
  DIALECTS,
  email,
  json,
  postJson,
  SECRET,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const ORIGIN = 'http://localhost:5173';
const PROD_ORIGIN = 'https://app.example';
const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../dist/latchkey.mjs', import.meta.url));

describe.each(DIALECTS)('social sign-in in development mode on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;

  beforeAll(async () => {
    app = await startApp(dialect);
    t = await app.tenant({ allowedOrigins: [ORIGIN] });
    await setProvider(app.ctx.database.db, app.ctx.box, t.tenant.id, 'google', {
      mode: 'development',
    });
  }, 60_000);
  afterAll(() => app?.dispose());

  const db = () => app.ctx.database.db;
  const hostedQuery = (tenant: TestTenant, extra: Record<string, string> = {}) =>
    new URLSearchParams({
      pk: tenant.publishableKey,
      redirect_url: `${tenant.tenant.allowedOrigins.includes(PROD_ORIGIN) ? PROD_ORIGIN : ORIGIN}/callback`,
      state: 'st',
      ...extra,
    }).toString();

  /** A browser: a cookie jar, redirects followed by hand. */
  function browser() {
    const jar = new Map<string, string>();
    const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const keep = (res: Response) => {
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const at = (pair as string).indexOf('=');
        const [k, v] = [(pair as string).slice(0, at), (pair as string).slice(at + 1)];
        if (/max-age=0|expires=thu, 01 jan 1970/i.test(c)) jar.delete(k);
        else jar.set(k, v);
      }
      return res;
    };
    return {
      jar,
      get: async (path: string) =>
        keep(await app.request(path, { redirect: 'manual', headers: { cookie: cookie() } })),
      post: async (path: string, fields: Record<string, string>) =>
        keep(
          await app.request(path, {
            method: 'POST',
            redirect: 'manual',
            headers: {
              'content-type': 'application/x-www-form-urlencoded',
              cookie: cookie(),
              origin: 'null',
              'sec-fetch-site': 'same-origin',
            },
            body: new URLSearchParams(fields).toString(),
          }),
        ),
    };
  }

  const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)?.[1] as string;
  const stateOf = (page: string) => /name="state" value="([^"]+)"/.exec(page)?.[1] as string;
  const fragmentOf = (res: Response) =>
    new URLSearchParams(new URL(res.headers.get('location') as string).hash.slice(1));

  /** Starts a Google sign-in and opens the development page. */
  async function openDevelopmentPage(tenant = t, b = browser()) {
    const start = await b.get(`/oauth/google/start?q=${encodeURIComponent(hostedQuery(tenant))}`);
    expect(start.status).toBe(303);
    const location = new URL(start.headers.get('location') as string);
    expect(location.origin).toBe(app.url);
    expect(location.pathname).toBe('/oauth/google/development');
    const page = await b.get(location.pathname + location.search);
    const html = await page.text();
    return { b, page, html, csrf: csrfOf(html), state: stateOf(html) };
  }

  /** Signs in through the development page with what "Google" returns. */
  async function devSignIn(
    typed: { email: string; name?: string; verified?: boolean },
    tenant = t,
  ) {
    const { b, csrf, state } = await openDevelopmentPage(tenant);
    const res = await b.post('/oauth/google/development', {
      _csrf: csrf,
      state,
      email: typed.email,
      name: typed.name ?? '',
      ...(typed.verified === false ? {} : { emailVerified: 'on' }),
    });
    return { res, html: res.status === 303 ? '' : await res.text() };
  }

  /** The user a development sign-in signed in; like any social sign-in, with amr ["fed"]. */
  const subjectOf = async (res: Response) => {
    const claims = await json(
      await postJson(app, '/api/auth/introspect', t.secretKey, {
        token: fragmentOf(res).get('access_token'),
      }),
    );
    expect(claims).toMatchObject({ active: true, amr: ['fed'], auth_time: expect.any(Number) });
    return claims.sub as string;
  };

  const identitiesOf = (userId: string) =>
    db().selectFrom('identities').selectAll().where('user_id', '=', userId).execute();

  it('is on without credentials, and the hosted page, /public/config and the CLI show the mode', async () => {
    const [google] = await listProviderSettings(db(), t.tenant.id);
    expect(google).toMatchObject({
      provider: 'google',
      enabled: true,
      mode: 'development',
      hasSecret: false,
    });
    const config = await json(await app.request(`/public/config?pk=${t.publishableKey}`));
    expect(config.providers).toEqual([{ id: 'google', name: 'Google', mode: 'development' }]);
    const signIn = await (await app.request(`/sign-in?${hostedQuery(t)}`)).text();
    // The button carries Google's mark (inline SVG, the library's paths) and the dev mark.
    expect(signIn).toMatch(
      /<a class="provider" href="\/oauth\/google\/start[^"]*"><svg viewBox="0 0 48 48" aria-hidden="true" focusable="false"><path fill="#EA4335"/,
    );
    expect(signIn).toContain('<span aria-hidden="true">dev</span>');
    expect(signIn).toContain('(development mode)');
    // Apple and Microsoft need none of their extra settings either.
    for (const id of ['apple', 'microsoft'] as const) {
      const view = await setProvider(db(), app.ctx.box, t.tenant.id, id, { mode: 'development' });
      expect(view).toMatchObject({ mode: 'development', hasSecret: false });
      await setProvider(db(), app.ctx.box, t.tenant.id, id, { mode: 'off' });
    }
    const list = await run(process.execPath, [MAIN, 'provider', 'list', '--tenant', t.tenant.id], {
      env: { ...process.env, DATABASE_URL: app.ctx.config.databaseUrl, LATCHKEY_SECRET: SECRET },
    });
    expect(list.stdout).toMatch(/^google\s+development\s/m);
  });

  it('the development page is a real form, clearly marked, and a new user signs in through it', async () => {
    const { page, html, csrf, state } = await openDevelopmentPage();
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(html).toContain(
      '<strong>Development mode:</strong> no request goes to Google; type what Google would return.',
    );
    expect(csrf).toBeTruthy();
    expect(state).toBeTruthy();
    expect(html).toContain('action="/oauth/google/development"');
    const address = email('dev');
    const { res, html: body } = await devSignIn({ email: address, name: 'Ada Lovelace' });
    expect(res.status, body).toBe(303);
    const location = new URL(res.headers.get('location') as string);
    expect(location.origin + location.pathname).toBe(`${ORIGIN}/callback`);
    expect(fragmentOf(res).get('state')).toBe('st');
    const userId = await subjectOf(res);
    const user = await db()
      .selectFrom('users')
      .selectAll()
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();
    expect(user).toMatchObject({ email: address, name: 'Ada Lovelace' });
    expect(user.email_verified_at).not.toBeNull();
    const identities = await identitiesOf(userId);
    expect(identities).toHaveLength(1);
    expect(identities[0]).toMatchObject({
      provider: 'google',
      issuer: DEVELOPMENT_ISSUER,
      subject: developmentSubject('google', address),
      email_verified: 1,
    });
    const events = await db()
      .selectFrom('audit_events')
      .select('kind')
      .where('user_id', '=', userId)
      .execute();
    expect(events.map((e) => e.kind)).toEqual(['identity_created']);
  });

  it('a second sign-in with the same address (any case) finds the same identity', async () => {
    const address = email('again');
    const first = await devSignIn({ email: address });
    expect(first.res.status, first.html).toBe(303);
    const userId = await subjectOf(first.res);
    const second = await devSignIn({ email: address.toUpperCase() });
    expect(second.res.status, second.html).toBe(303);
    expect(await subjectOf(second.res)).toBe(userId);
    expect(await identitiesOf(userId)).toHaveLength(1);
  });

  it('a bad address or name shows the form again with the error; nothing changes, and the same attempt goes on', async () => {
    const { b, csrf, state } = await openDevelopmentPage();
    const users = async () =>
      (await db().selectFrom('users').select('id').where('tenant_id', '=', t.tenant.id).execute())
        .length;
    const before = await users();
    const bad = await b.post('/oauth/google/development', {
      _csrf: csrf,
      state,
      email: 'not-an-address',
      name: 'Typo',
      emailVerified: 'on',
    });
    expect(bad.status).toBe(422);
    const html = await bad.text();
    expect(html).toContain('Type the e-mail address Google would return');
    expect(html).toContain('value="not-an-address"');
    expect(html).toMatch(/id="email"[^>]*aria-invalid="true"/);
    const badName = await b.post('/oauth/google/development', {
      _csrf: csrfOf(html),
      state,
      email: email('named'),
      name: 'x'.repeat(201),
      emailVerified: 'on',
    });
    expect(badName.status).toBe(422);
    const named = await badName.text();
    expect(named).toContain('The name must be 1 to 200 printable characters');
    expect(await users()).toBe(before);
    const flow = await db()
      .selectFrom('oauth_flows')
      .select('used_at')
      .where('state', '=', state)
      .executeTakeFirstOrThrow();
    expect(flow.used_at).toBeNull();
    // Corrected, the same attempt signs in.
    const good = await b.post('/oauth/google/development', {
      _csrf: csrfOf(named),
      state,
      email: email('fixed'),
      emailVerified: 'on',
    });
    expect(good.status).toBe(303);
    expect(await users()).toBe(before + 1);
  });

  it('without the CSRF token, from another browser, or twice, nothing happens', async () => {
    const { b, csrf, state } = await openDevelopmentPage();
    const address = email('csrf');
    const noToken = await b.post('/oauth/google/development', { state, email: address });
    expect(noToken.status).toBe(403);
    // Another browser (no state cookie) may not even see the page, nor answer it.
    const other = browser();
    const page = await other.get(`/oauth/google/development?state=${state}`);
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('started in another browser');
    const otherPage = await openDevelopmentPage();
    const stolen = await otherPage.b.post('/oauth/google/development', {
      _csrf: otherPage.csrf,
      state,
      email: address,
      emailVerified: 'on',
    });
    expect(stolen.status).toBe(400);
    expect(await stolen.text()).toContain('started in another browser');
    const once = await b.post('/oauth/google/development', {
      _csrf: csrf,
      state,
      email: address,
      emailVerified: 'on',
    });
    expect(once.status).toBe(303);
    const twice = await b.post('/oauth/google/development', {
      _csrf: csrf,
      state,
      email: address,
      emailVerified: 'on',
    });
    expect(twice.status).toBe(400);
    expect(await twice.text()).toContain('used already');
  });

  it('an attempt that took too long says so on its page, with the way back to sign-in', async () => {
    const { b, state } = await openDevelopmentPage();
    await db()
      .updateTable('oauth_flows')
      .set({ expires_at: Date.now() - 1 })
      .where('state', '=', state)
      .execute();
    const late = await b.get(`/oauth/google/development?state=${state}`);
    expect(late.status).toBe(400);
    const text = await late.text();
    expect(text).toContain('took too long');
    expect(text).toMatch(/<a href="\/sign-in\?[^"]+">/);
  });

  it('links to an existing password account by the same rules as a real provider', async () => {
    const signUp = async () => {
      const address = email('pw');
      const { userId } = await json(
        await postJson(app, '/v1/auth/sign-up', t.secretKey, {
          email: address,
          password: 'correct horse battery',
        }),
      );
      return { address, userId: userId as string };
    };
    // An unverified account is never joined (pre-hijacking): refused, nothing created.
    const unverified = await signUp();
    const refused = await devSignIn({ email: unverified.address });
    expect(refused.res.status).toBe(400);
    expect(refused.html).toContain('cannot be joined to Google sign-in');
    expect(await identitiesOf(unverified.userId)).toHaveLength(0);
    // A verified account is joined when "Google" vouches for the address...
    const verified = await signUp();
    await db()
      .updateTable('users')
      .set({ email_verified_at: Date.now() })
      .where('id', '=', verified.userId)
      .execute();
    const notVouched = await devSignIn({ email: verified.address, verified: false });
    expect(notVouched.res.status).toBe(400);
    expect(notVouched.html).toContain('cannot be joined to Google sign-in');
    const linked = await devSignIn({ email: verified.address.toUpperCase() });
    expect(linked.res.status, linked.html).toBe(303);
    expect(await subjectOf(linked.res)).toBe(verified.userId);
    expect(await identitiesOf(verified.userId)).toHaveLength(1);
    const events = await db()
      .selectFrom('audit_events')
      .select('kind')
      .where('user_id', '=', verified.userId)
      .execute();
    expect(events.map((e) => e.kind)).toEqual(['identity_linked']);
    // A new account without a vouched address, where the tenant needs a verified one: refused.
    const strict = await app.tenant({ allowedOrigins: [ORIGIN], requireEmailVerification: true });
    await setProvider(db(), app.ctx.box, strict.tenant.id, 'google', { mode: 'development' });
    const strictRefused = await devSignIn({ email: email('strict'), verified: false }, strict);
    expect(strictRefused.res.status).toBe(400);
    expect(strictRefused.html).toContain('needs a verified e-mail address');
  });

  it('a PKCE start takes one click on our page, then yields a code the app redeems', async () => {
    const b = browser();
    const q = hostedQuery(t, {
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const button = await b.get(`/oauth/google/start?q=${encodeURIComponent(q)}`);
    expect(button.status).toBe(200);
    const clickPage = await button.text();
    const start = await b.post(`/oauth/google/start?q=${encodeURIComponent(q)}`, {
      _csrf: csrfOf(clickPage),
    });
    expect(start.status).toBe(303);
    const location = new URL(start.headers.get('location') as string);
    const page = await (await b.get(location.pathname + location.search)).text();
    const res = await b.post('/oauth/google/development', {
      _csrf: csrfOf(page),
      state: stateOf(page),
      email: email('pkce'),
      emailVerified: 'on',
    });
    expect(res.status).toBe(303);
    const code = fragmentOf(res).get('code') as string;
    expect(code).toBeTruthy();
    const token = await app.request('/v1/client/token', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-latchkey-publishable-key': t.publishableKey,
        origin: ORIGIN,
      },
      body: JSON.stringify({
        grant_type: 'authorization_code',
        code,
        code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
      }),
    });
    expect(token.status).toBe(200);
    expect((await json(token)).refreshToken).toBeTruthy();
  });

  it('is refused on a production tenant: enabling, and the page even when a row says so', async () => {
    const prod = await app.tenant({ environment: 'production', allowedOrigins: [PROD_ORIGIN] });
    const refused = await setProvider(db(), app.ctx.box, prod.tenant.id, 'github', {
      mode: 'development',
    }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LatchkeyError);
    expect((refused as LatchkeyError).code).toBe('validation_failed');
    expect((refused as LatchkeyError).errors?.map((e) => e.code)).toEqual([
      'development_mode_refused',
    ]);
    expect(await listProviderSettings(db(), prod.tenant.id)).toEqual([]);
    // The CLI says the same.
    const cli = await run(
      process.execPath,
      [MAIN, 'provider', 'set', '--tenant', prod.tenant.id, 'github', '--mode', 'development'],
      {
        env: { ...process.env, DATABASE_URL: app.ctx.config.databaseUrl, LATCHKEY_SECRET: SECRET },
      },
    ).catch((e: { stderr: string; code: number }) => e);
    expect((cli as { code: number }).code).not.toBe(0);
    expect((cli as { stderr: string }).stderr).toContain('only for development tenants');
    // A row that says so anyway (written by hand): no button, no config entry, no page.
    await db()
      .insertInto('provider_settings')
      .values({
        tenant_id: prod.tenant.id,
        provider: 'google',
        enabled: 1,
        development: 1,
        client_id: '',
        secret_jwe: null,
        team_id: null,
        key_id: null,
        audience: null,
        updated_at: Date.now(),
      })
      .execute();
    const config = await json(await app.request(`/public/config?pk=${prod.publishableKey}`));
    expect(config.providers).toEqual([]);
    const signIn = await (await app.request(`/sign-in?${hostedQuery(prod)}`)).text();
    expect(signIn).not.toContain('/oauth/google/start');
    const b = browser();
    const start = await b.get(`/oauth/google/start?q=${encodeURIComponent(hostedQuery(prod))}`);
    expect(start.status).toBe(400);
    expect(await start.text()).toContain('turned off');
    // A flow started while the tenant was a development one: once it is production, the
    // page and its answer are refused, and nobody is signed in.
    const dev = await app.tenant({ allowedOrigins: [PROD_ORIGIN] });
    await setProvider(db(), app.ctx.box, dev.tenant.id, 'google', { mode: 'development' });
    const opened = await openDevelopmentPage(dev);
    await db()
      .updateTable('tenants')
      .set({ environment: 'production' })
      .where('id', '=', dev.tenant.id)
      .execute();
    await app.ctx.bus.publish(`tenant:${dev.tenant.id}`);
    const page = await opened.b.get(`/oauth/google/development?state=${opened.state}`);
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('development mode is only for development tenants');
    const answer = await opened.b.post('/oauth/google/development', {
      _csrf: opened.csrf,
      state: opened.state,
      email: email('prod'),
      emailVerified: 'on',
    });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('location')).toBeNull();
    expect(
      await db().selectFrom('users').select('id').where('tenant_id', '=', dev.tenant.id).execute(),
    ).toEqual([]);
  });

  it('`latchkey provider set --mode development` needs no credentials; `--mode live` then needs them', async () => {
    const tenant = await app.tenant();
    const env = {
      ...process.env,
      DATABASE_URL: app.ctx.config.databaseUrl,
      LATCHKEY_SECRET: SECRET,
    };
    const set = await run(
      process.execPath,
      [MAIN, 'provider', 'set', '--tenant', tenant.tenant.id, 'github', '--mode', 'development'],
      { env },
    );
    expect(set.stdout).toContain('GitHub: enabled in development mode');
    const live = await run(
      process.execPath,
      [MAIN, 'provider', 'set', '--tenant', tenant.tenant.id, 'github', '--mode', 'live'],
      { env },
    ).catch((e: { stderr: string }) => e);
    expect((live as { stderr: string }).stderr).toContain('client_id_invalid');
    const [github] = await listProviderSettings(db(), tenant.tenant.id);
    expect(github?.mode).toBe('development');
  });

  it("Social Login's mode choice: development on a development tenant, refused on a production one; its Test sign-in opens the development page and creates nothing", async () => {
    const dev = await app.tenant({ allowedOrigins: [ORIGIN] });
    const prod = await app.tenant({ environment: 'production', allowedOrigins: [PROD_ORIGIN] });
    const root = await signedInAdmin(app, email('root'), { superuser: true });
    const social = (tenant: TestTenant) => `/admin/tenants/${tenant.tenant.id}/social`;
    // Production: the choice is there but disabled, and a post of it is refused.
    const prodPage = await root.get(social(prod));
    expect(prodPage.html).toMatch(
      /id="github-mode-development" name="mode" value="development" disabled/,
    );
    expect(prodPage.html).toContain('Only for development tenants: this is a production tenant.');
    const refused = await root.post(`${social(prod)}/github`, {
      mode: 'development',
      clientId: '',
    });
    expect(refused.status).toBe(422);
    expect(refused.html).toContain('development mode is only for development tenants');
    expect(await listProviderSettings(db(), prod.tenant.id)).toEqual([]);
    // Development: saved without credentials, and marked.
    await root.get(social(dev));
    const saved = await root.post(`${social(dev)}/github`, { mode: 'development', clientId: '' });
    expect(saved.status).toBe(303);
    const page = await root.get(social(dev));
    const panel = page.html.slice(
      page.html.indexOf('id="h-github"'),
      page.html.indexOf('id="h-apple"'),
    );
    expect(panel).toContain('GitHub <span class="badge">dev</span>');
    expect(panel).toMatch(/value="development" checked/);
    expect(panel).toContain("opens Latchkey's development page");
    expect(await listProviderSettings(db(), dev.tenant.id)).toMatchObject([
      { provider: 'github', mode: 'development' },
    ]);
    const audit = await db()
      .selectFrom('audit_events')
      .select('detail')
      .where('tenant_id', '=', dev.tenant.id)
      .where('kind', '=', 'provider_updated')
      .execute();
    expect(audit.map((a) => a.detail).join()).toContain('"mode":"development"');
    // Test sign-in: our own page, then the result, and nobody is created.
    const start = await root.post(`${social(dev)}/github/test`, {});
    expect(start.status).toBe(303);
    const location = new URL(start.location as string);
    expect(location.pathname).toBe('/oauth/github/development');
    const devPage = await root.get(location.pathname + location.search);
    expect(devPage.status).toBe(200);
    expect(devPage.html).toContain('no request goes to GitHub');
    const address = email('tested');
    const finished = await root.post('/oauth/github/development', {
      state: stateOf(devPage.html),
      email: address,
      emailVerified: 'on',
    });
    expect(finished.status).toBe(200);
    const next = /id="next" href="([^"]+)"/.exec(finished.html)?.[1] as string;
    const result = await root.get(next);
    expect(result.status).toBe(200);
    expect(result.html).toContain(
      'Development mode: no request went to GitHub; this is the profile you typed.',
    );
    expect(result.html).toContain(address);
    expect(result.html).toContain('Would create a new account');
    expect(
      await db().selectFrom('users').select('id').where('tenant_id', '=', dev.tenant.id).execute(),
    ).toEqual([]);
  });
});
