/**
 * Social sign-in end to end over HTTP: the real server, and real OAuth/OIDC servers on
 * loopback playing Google, Microsoft, Apple (oidc-provider) and GitHub, Facebook.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { socialDefaults } from '../src/config/defaults.js';
import { readOutbox } from '../src/modules/email/index.js';
import { setProvider, startFlow } from '../src/modules/social/index.js';
import { createEndpoint } from '../src/modules/webhooks/index.js';
import {
  DEFAULT_ACCOUNTS,
  PROVIDER_IDS,
  type ProviderId,
  type ProviderServers,
  startProviders,
} from './providers.js';
import {
  DIALECTS,
  email,
  eventually,
  json,
  postJson,
  reservePort,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';
import { startReceiver } from './webhook-receiver.js';

const ORIGIN = 'http://localhost:5173';

describe.each(DIALECTS)('social sign-in against real provider servers on %s', (dialect) => {
  let app: TestApp;
  let providers: ProviderServers;
  let t: TestTenant;

  beforeAll(async () => {
    const socket = reservePort();
    const base = `http://127.0.0.1:${socket.address().port}`;
    providers = await startProviders({ redirectUriFor: (id) => `${base}/oauth/${id}/callback` });
    app = await startApp(dialect, {
      socket,
      env: {
        LATCHKEY_PROVIDER_ENDPOINTS: providers.endpointsJson(),
      },
    });
    t = await app.tenant({ allowedOrigins: [ORIGIN] });
    for (const id of PROVIDER_IDS) await enable(t, id);
  }, 60_000);
  afterAll(async () => {
    await app?.dispose();
    await providers?.close();
  });

  /** This suite's starts all come from one address, more than its quota of 30 allows. */
  const freshStartQuota = () =>
    app.ctx.limiter.reset('oauth-start:127.0.0.1', {
      name: 'oauth-start',
      quota: 30,
      seconds: 15 * 60,
    });

  async function enable(tenant: TestTenant, id: ProviderId) {
    const p = providers[id];
    await setProvider(app.ctx.database.db, app.ctx.box, tenant.tenant.id, id, {
      clientId: p.clientId,
      enabled: true,
      ...(id === 'apple'
        ? {
            teamId: providers.apple.teamId,
            keyId: providers.apple.keyId,
            privateKeyPem: providers.apple.privateKeyPem,
          }
        : { clientSecret: p.clientSecret }),
      ...(id === 'microsoft' ? { audience: providers.microsoft.tenantId } : {}),
    });
  }

  const hostedQuery = (tenant: TestTenant) =>
    new URLSearchParams({
      pk: tenant.publishableKey,
      redirect_url: `${ORIGIN}/callback`,
      state: 'st',
    }).toString();

  /** A browser: follows redirects by hand, keeps cookies per host, posts Apple's form. */
  async function signInWith(
    id: ProviderId,
    tenant = t,
    tamper?: (url: URL) => void,
    options: { dropCookies?: boolean } = {},
  ) {
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
    };
    let res = await app.request(`/oauth/${id}/start?q=${encodeURIComponent(hostedQuery(tenant))}`, {
      redirect: 'manual',
    });
    keep(res);
    if (res.status !== 303) return { res, html: await res.text() };
    let location = res.headers.get('location') as string;
    // The provider's side: the harness signs the chosen account in by itself.
    res = await fetch(location, { redirect: 'manual' });
    location = res.headers.get('location') ?? '';
    let callback: Response;
    if (res.status === 200) {
      // Apple: an auto-submitting form POST to our callback.
      const html = await res.text();
      const action = /action="([^"]+)"/.exec(html)?.[1]?.replaceAll('&amp;', '&') as string;
      const fields = Object.fromEntries(
        [...html.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [
          m[1],
          (m[2] as string).replaceAll('&quot;', '"').replaceAll('&amp;', '&'),
        ]),
      );
      callback = await fetch(action, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie() },
        body: new URLSearchParams(fields as Record<string, string>).toString(),
      });
    } else {
      const url = new URL(location);
      tamper?.(url);
      callback = await fetch(url, {
        redirect: 'manual',
        headers: options.dropCookies ? {} : { cookie: cookie() },
      });
    }
    keep(callback);
    return { res: callback, html: callback.status === 303 ? '' : await callback.text(), jar };
  }

  const fragmentOf = (res: Response) =>
    new URLSearchParams(new URL(res.headers.get('location') as string).hash.slice(1));

  it.each(PROVIDER_IDS)(
    '%s: signs a new user in and lands on the caller with tokens in the fragment',
    async (id) => {
      const address = id === 'microsoft' ? `ms-${Date.now()}@contoso.example` : email(id);
      providers[id].next({
        ...DEFAULT_ACCOUNTS[id],
        sub: `${id}-${Date.now()}`,
        oid: `oid-${Date.now()}`,
        email: address,
        emailVerified: true,
        name: 'Ada Lovelace',
      });
      const { res, html } = await signInWith(id);
      expect(res.status, html).toBe(303);
      const fragment = fragmentOf(res);
      expect(fragment.get('tenant_id')).toBe(t.tenant.id);
      expect(fragment.get('state')).toBe('st');
      const claims = await json(
        await postJson(app, '/api/auth/introspect', t.secretKey, {
          token: fragment.get('access_token'),
        }),
      );
      // RFC 8176 "fed": the person authenticated at a federated (social) provider.
      expect(claims).toMatchObject({
        active: true,
        email: address,
        amr: ['fed'],
        auth_time: expect.any(Number),
      });
      expect(Math.abs(claims.auth_time - Date.now() / 1000)).toBeLessThan(60);
      const identities = await app.ctx.database.db
        .selectFrom('identities')
        .selectAll()
        .where('user_id', '=', claims.sub)
        .execute();
      expect(identities).toHaveLength(1);
      expect(identities[0]).toMatchObject({
        provider: id,
        email_verified: id === 'microsoft' ? 0 : 1,
      });
      // The picture each provider gives by default (Facebook's from /me's picture.data.url);
      // Google's account here has none, Microsoft and Apple never give one.
      const pictures: Record<ProviderId, RegExp | null> = {
        google: null,
        github: /^https:\/\/avatars\.githubusercontent\.com\/u\/\d+\?v=4$/,
        facebook: /^https:\/\/platform-lookaside\.fbsbx\.com\/platform\/profilepic\/\?asid=/,
        microsoft: null,
        apple: null,
      };
      const expected = pictures[id];
      if (expected) expect(identities[0]?.picture).toMatch(expected);
      else expect(identities[0]?.picture).toBeNull();
      if (id === 'microsoft') expect(identities[0]?.issuer).toContain(providers.microsoft.tenantId);
      const events = await app.ctx.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('user_id', '=', claims.sub)
        .execute();
      expect(events.map((e) => e.kind)).toEqual(['identity_created']);
      // The same identity again: the same user.
      const again = await signInWith(id);
      expect(again.res.status).toBe(303);
      const second = await json(
        await postJson(app, '/api/auth/introspect', t.secretKey, {
          token: fragmentOf(again.res).get('access_token'),
        }),
      );
      expect(second.sub).toBe(claims.sub);
    },
  );

  it("stores each identity's picture, renews it at every sign-in, and GET /v1/client/user answers the latest", async () => {
    const address = email('picture');
    const googleSub = `google-picture-${Date.now()}`;
    const githubSub = String(Date.now() % 1_000_000_000);
    const signIn = async (id: 'google' | 'github', sub: string, picture: string) => {
      providers[id].next({ sub, email: address, emailVerified: true, name: 'Ada', picture });
      const { res, html } = await signInWith(id);
      expect(res.status, html).toBe(303);
      return fragmentOf(res).get('access_token') as string;
    };
    const stored = async (provider: string) =>
      (
        await app.ctx.database.db
          .selectFrom('identities')
          .select('picture')
          .where('tenant_id', '=', t.tenant.id)
          .where('provider', '=', provider)
          .where('email', '=', address)
          .executeTakeFirstOrThrow()
      ).picture;
    const profilePicture = async (accessToken: string) => {
      const res = await app.request('/v1/client/user', {
        headers: {
          'x-latchkey-publishable-key': t.publishableKey,
          authorization: `Bearer ${accessToken}`,
          origin: ORIGIN,
        },
      });
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body.email).toBe(address);
      return body.picture as string | null;
    };

    // A new user through Google: the ID token's picture is stored and shown.
    const first = 'https://lh3.googleusercontent.com/a/ACg8ocFirst=s96-c';
    let token = await signIn('google', googleSub, first);
    expect(await stored('google')).toBe(first);
    expect(await profilePicture(token)).toBe(first);

    // A changed picture at the next sign-in replaces it.
    const second = 'https://lh3.googleusercontent.com/a/ACg8ocSecond=s96-c';
    token = await signIn('google', googleSub, second);
    expect(await stored('google')).toBe(second);
    expect(await profilePicture(token)).toBe(second);

    // GitHub's avatar_url, on the same (linked) user: the most recently used identity wins.
    const avatar = `https://avatars.githubusercontent.com/u/${githubSub}?v=4`;
    token = await signIn('github', githubSub, avatar);
    expect(await stored('github')).toBe(avatar);
    expect(await profilePicture(token)).toBe(avatar);
    const newAvatar = `https://avatars.githubusercontent.com/u/${githubSub}?v=5`;
    token = await signIn('github', githubSub, newAvatar);
    expect(await stored('github')).toBe(newAvatar);
    expect(await profilePicture(token)).toBe(newAvatar);

    // A picture that is not https is dropped, at Google and at GitHub; the profile then shows
    // the picture of the most recently used identity that still has one.
    token = await signIn('google', googleSub, 'http://lh3.googleusercontent.com/a/plain');
    expect(await stored('google')).toBeNull();
    expect(await profilePicture(token)).toBe(newAvatar);
    token = await signIn('github', githubSub, 'javascript:alert(1)');
    expect(await stored('github')).toBeNull();
    expect(await profilePicture(token)).toBeNull();
    token = await signIn('google', googleSub, second);
    expect(await profilePicture(token)).toBe(second);
  });

  it('links a verified provider address to an existing verified account, and records it', async () => {
    const address = email('link');
    const { userId } = await json(
      await postJson(app, '/v1/auth/sign-up', t.secretKey, {
        email: address,
        password: 'correct horse battery',
      }),
    );
    await app.ctx.database.db
      .updateTable('users')
      .set({ email_verified_at: Date.now() })
      .where('id', '=', userId)
      .execute();
    providers.google.next({
      sub: `g-link-${Date.now()}`,
      email: address.toUpperCase(),
      emailVerified: true,
      name: 'Linked',
    });
    const { res } = await signInWith('google');
    expect(res.status).toBe(303);
    const claims = await json(
      await postJson(app, '/api/auth/introspect', t.secretKey, {
        token: fragmentOf(res).get('access_token'),
      }),
    );
    expect(claims.sub).toBe(userId);
    const events = await app.ctx.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('user_id', '=', userId)
      .execute();
    expect(events.map((e) => e.kind)).toEqual(['identity_linked']);
  });

  it('never merges into an unverified password account (pre-hijacking), nor on an unverified e-mail', async () => {
    const address = email('hijack');
    const { userId } = await json(
      await postJson(app, '/v1/auth/sign-up', t.secretKey, {
        email: address,
        password: 'attacker set this',
      }),
    );
    providers.google.next({ sub: `g-victim-${Date.now()}`, email: address, emailVerified: true });
    const google = await signInWith('google');
    expect(google.res.status).toBe(400);
    expect(google.html).toContain('cannot be joined');
    // Microsoft never vouches for e-mail: it may not join an existing account either.
    const verified = email('verified');
    await postJson(app, '/v1/auth/sign-up', t.secretKey, {
      email: verified,
      password: 'correct horse battery',
    });
    providers.microsoft.next({
      ...DEFAULT_ACCOUNTS.microsoft,
      sub: `ms-${Date.now()}`,
      oid: `oid-x-${Date.now()}`,
      email: verified,
    });
    const ms = await signInWith('microsoft');
    expect(ms.res.status).toBe(400);
    expect(ms.html).toContain('cannot be joined');
    const identities = await app.ctx.database.db
      .selectFrom('identities')
      .selectAll()
      .where('user_id', '=', userId)
      .execute();
    expect(identities).toHaveLength(0);
  });

  it('ends every failure on a clear page, creating nothing', async () => {
    const count = async () =>
      Number(
        (
          await app.ctx.database.db
            .selectFrom('users')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    providers.github.next('cancel');
    const cancelled = await signInWith('github');
    expect(cancelled.res.status).toBe(400);
    expect(cancelled.html).toContain('You cancelled signing in with GitHub');

    providers.facebook.next('down');
    const down = await signInWith('facebook');
    expect(down.res.status).toBe(400);
    expect(down.html).toContain('could not be reached');

    providers.google.next('garbage');
    const garbage = await signInWith('google');
    expect(garbage.res.status).toBe(400);

    // State mismatch: an answer for another attempt.
    const forged = await signInWith('github', t, (url) =>
      url.searchParams.set('state', 'forged-state'),
    );
    expect(forged.res.status).toBe(400);
    expect(forged.html).toMatch(/unknown|another browser/);

    // The answer arriving in another browser (no state cookie): refused, with a way back.
    const elsewhere = await signInWith('github', t, undefined, { dropCookies: true });
    expect(elsewhere.res.status).toBe(400);
    expect(elsewhere.html).toContain('another browser');
    expect(elsewhere.html).toContain(`/sign-in?pk=${t.publishableKey}`);

    // A code from one provider's flow at another provider's callback.
    const crossed = await signInWith('github', t, (url) => {
      url.pathname = url.pathname.replace('/oauth/github/', '/oauth/facebook/');
    });
    expect(crossed.res.status).toBe(400);

    // Facebook without an e-mail address.
    providers.facebook.next({
      ...DEFAULT_ACCOUNTS.facebook,
      sub: `fb-noemail-${Date.now()}`,
      email: undefined,
    });
    const noEmail = await signInWith('facebook');
    expect(noEmail.res.status).toBe(400);
    expect(noEmail.html).toContain('did not share an e-mail address');
    expect(await count()).toBe(before);
  });

  it('refuses a replayed answer, and a disabled provider', async () => {
    providers.github.next({
      ...DEFAULT_ACCOUNTS.github,
      sub: `gh-replay-${Date.now()}`,
      email: email('replay'),
      emailVerified: true,
    });
    let captured = '';
    const first = await signInWith('github', t, (url) => {
      captured = url.href;
    });
    expect(first.res.status).toBe(303);
    const replay = await fetch(captured, {
      redirect: 'manual',
      headers: { cookie: [...(first.jar ?? [])].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    expect(replay.status).toBe(400);

    const other = await app.tenant({ allowedOrigins: [ORIGIN] });
    const off = await signInWith('google', other);
    expect(off.res.status).toBe(400);
    expect(off.html).toContain('turned off');
  });

  it("an unverified provider address never opens the door to the real owner's account", async () => {
    const victim = email('victim');
    // The attacker claims the victim's address through Microsoft, which never vouches for it.
    providers.microsoft.next({
      ...DEFAULT_ACCOUNTS.microsoft,
      sub: `ms-att-${Date.now()}`,
      oid: `oid-att-${Date.now()}`,
      email: victim,
    });
    const attacker = await signInWith('microsoft');
    expect(attacker.res.status).toBe(303);
    const attackerSub = (
      await json(
        await postJson(app, '/api/auth/introspect', t.secretKey, {
          token: fragmentOf(attacker.res).get('access_token'),
        }),
      )
    ).sub;
    // The victim comes with Google (verified): not joined to the attacker's account.
    providers.google.next({ sub: `g-victim-${Date.now()}`, email: victim, emailVerified: true });
    const refused = await signInWith('google');
    expect(refused.res.status).toBe(400);
    expect(refused.html).toContain('cannot be joined');
    // The victim proves the mailbox with a password reset: the unproven identity goes.
    const page = await app.request(`/forgot-password?${hostedQuery(t)}`);
    const cookie = page.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] as string;
    await app.request(`/forgot-password?${hostedQuery(t)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ _csrf: csrf, email: victim }).toString(),
    });
    const mail = await eventually(
      async () => (await readOutbox(app.ctx.database.db, { to: victim }))[0],
    );
    const token = /token=([A-Za-z0-9_-]+)/.exec(mail?.body ?? '')?.[1] as string;
    const resetPage = await app.request(`/reset-password?token=${token}`);
    const resetCookie = resetPage.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const resetCsrf = /name="_csrf" value="([^"]+)"/.exec(await resetPage.text())?.[1] as string;
    const reset = await app.request('/reset-password', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: resetCookie },
      body: new URLSearchParams({
        _csrf: resetCsrf,
        token,
        password: 'the owner is back now',
      }).toString(),
    });
    expect(reset.status).toBe(200);
    const identities = await app.ctx.database.db
      .selectFrom('identities')
      .selectAll()
      .where('user_id', '=', attackerSub)
      .execute();
    expect(identities).toHaveLength(0);
    // The attacker's Microsoft sign-in no longer reaches the account.
    const again = await signInWith('microsoft');
    expect(again.res.status).toBe(400);
    // And now Google joins the owner's (verified) account.
    const owner = await signInWith('google');
    expect(owner.res.status).toBe(303);
  });

  it("refuses a Microsoft account from a directory the tenant's audience does not admit", async () => {
    const strict = await app.tenant({ allowedOrigins: [ORIGIN] });
    await enable(strict, 'microsoft');
    await setProvider(app.ctx.database.db, app.ctx.box, strict.tenant.id, 'microsoft', {
      audience: '11111111-2222-3333-4444-555555555555',
    });
    providers.microsoft.next({
      ...DEFAULT_ACCOUNTS.microsoft,
      sub: `ms-dir-${Date.now()}`,
      oid: `oid-dir-${Date.now()}`,
      email: email('dir'),
    });
    const res = await signInWith('microsoft', strict);
    expect(res.res.status).toBe(400);
    expect(res.html).toContain('directory');
  });

  it('lets an office behind one address start 100 provider sign-ins in a window', async () => {
    const office = await app.tenant({ allowedOrigins: [ORIGIN] });
    await enable(office, 'github');
    const path = `/oauth/github/start?q=${encodeURIComponent(hostedQuery(office))}`;
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++)
      statuses.push((await app.request(path, { redirect: 'manual' })).status);
    expect(statuses.filter((s) => s === 302 || s === 303)).toHaveLength(100);
  });

  it('a start that asks for a PKCE code takes one click (CSRF-protected) before going to the provider', async () => {
    const q = new URLSearchParams({
      pk: t.publishableKey,
      redirect_url: `${ORIGIN}/callback`,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }).toString();
    const path = `/oauth/google/start?q=${encodeURIComponent(q)}`;
    const ask = await app.request(path, { redirect: 'manual' });
    expect(ask.status).toBe(200);
    const html = await ask.text();
    expect(html).toContain('Continue with Google');
    expect(ask.headers.get('content-security-policy')).toContain(
      `form-action 'self' ${new URL(providers.google.endpoints.issuer as string).origin}`,
    );
    const jar = ask.headers.getSetCookie().map((c) => c.split(';')[0]);
    const forged = await app.request(path, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.join('; ') },
      body: '',
    });
    expect(forged.status).toBe(403);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] as string;
    const go = await app.request(path, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.join('; ') },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    expect(go.status).toBe(303);
    const flowCookie = go.headers.getSetCookie().map((c) => c.split(';')[0]);
    providers.google.next({
      sub: `g-pkce-${Date.now()}`,
      email: email('pkce'),
      emailVerified: true,
    });
    const atProvider = await fetch(go.headers.get('location') as string, { redirect: 'manual' });
    const back = await fetch(atProvider.headers.get('location') as string, {
      redirect: 'manual',
      headers: { cookie: [...jar, ...flowCookie].join('; ') },
    });
    expect(back.status).toBe(303);
    expect(fragmentOf(back).get('code')).toBeTruthy();

    // Another site's page (or none) still gets the click page; only the caller's own goes through.
    await freshStartQuota();
    for (const referer of ['https://evil.example/', 'not a url']) {
      const elsewhere = await app.request(path, { redirect: 'manual', headers: { referer } });
      expect(elsewhere.status).toBe(200);
    }
  });

  it("a PKCE start from the caller's own page (the browser library) goes straight to the provider", async () => {
    await freshStartQuota();
    const q = new URLSearchParams({
      pk: t.publishableKey,
      redirect_url: `${ORIGIN}/callback`,
      state: 'lib-state',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }).toString();
    const go = await app.request(`/oauth/google/start?q=${encodeURIComponent(q)}`, {
      redirect: 'manual',
      headers: { referer: `${ORIGIN}/` },
    });
    expect(go.status).toBe(303);
    const location = new URL(go.headers.get('location') as string);
    expect(location.origin).toBe(new URL(providers.google.endpoints.issuer as string).origin);
    providers.google.next({ sub: `g-lib-${Date.now()}`, email: email('lib'), emailVerified: true });
    const atProvider = await fetch(location, { redirect: 'manual' });
    const back = await fetch(atProvider.headers.get('location') as string, {
      redirect: 'manual',
      headers: {
        cookie: go.headers
          .getSetCookie()
          .map((c) => c.split(';')[0])
          .join('; '),
      },
    });
    expect(back.status).toBe(303);
    const fragment = fragmentOf(back);
    expect(fragment.get('state')).toBe('lib-state');
    expect(fragment.get('code')).toBeTruthy();
  });

  it('a new user from a provider sends user.created and session.created webhooks (docs/design.md §17)', async () => {
    const tenant = await app.tenant({ allowedOrigins: [ORIGIN] });
    await enable(tenant, 'github');
    const secrets: string[] = [];
    const receiver = await startReceiver({ secrets: () => secrets });
    try {
      const { secret } = await createEndpoint(
        { db: app.ctx.database.db, box: app.ctx.box },
        tenant.tenant,
        { url: receiver.url },
      );
      secrets.push(secret);
      const address = email('hooked-github');
      providers.github.next({
        ...DEFAULT_ACCOUNTS.github,
        sub: `github-hook-${Date.now()}`,
        email: address,
        emailVerified: true,
      });
      const { res, html } = await signInWith('github', tenant);
      expect(res.status, html).toBe(303);
      await eventually(async () =>
        receiver.ofType('user.created').length && receiver.ofType('session.created').length
          ? true
          : undefined,
      );
      const [created] = receiver.ofType('user.created');
      expect(created?.body.data).toMatchObject({ email: address, emailVerified: true });
      expect(receiver.ofType('session.created')[0]?.body.data.userId).toBe(created?.body.data.id);
      expect(receiver.received.every((r) => r.verified)).toBe(true);
    } finally {
      await receiver.close();
    }
  });

  it('the start service holds one client address to its starts per window', async () => {
    const deps = {
      db: app.ctx.database.db,
      bus: app.ctx.bus,
      box: app.ctx.box,
      limiter: app.ctx.limiter,
      authUrl: app.ctx.authUrl,
      providerEndpoints: app.ctx.config.providerEndpoints,
    };
    const input = { hostedQuery: hostedQuery(t), ip: '203.0.113.7' };
    for (let i = 0; i < socialDefaults.startsPerAddress.quota; i++)
      await startFlow(deps, t.tenant, 'github', input);
    await expect(startFlow(deps, t.tenant, 'github', input)).rejects.toThrow(/Too many sign-in/);
    // Another address is not held back.
    await startFlow(deps, t.tenant, 'github', { ...input, ip: '203.0.113.8' });
  });
});
