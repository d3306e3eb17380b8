/**
 * The hosted second step (docs/design.md §13) over plain HTTP: after a right first factor
 * (password, sign-up, social) a user with an authenticator app gets /sign-in/verify, one
 * without a factor under the `required` policy gets /sign-in/setup, and nothing that signs
 * a browser in (no token, no PKCE code, no hosted cookie) leaves before the second factor.
 * Codes are computed with otplib, an implementation independent of the server's.
 */
import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  claimTotpStep,
  matchTotp,
  replaceRecoveryCodes,
  startTotp,
} from '../src/modules/mfa/index.js';
import { setProvider } from '../src/modules/social/index.js';
import { updateTenant } from '../src/modules/tenants/index.js';
import { getUser } from '../src/modules/users/index.js';
import { DEFAULT_ACCOUNTS, type ProviderServers, startProviders } from './providers.js';
import {
  DIALECTS,
  email,
  json,
  postJson,
  reservePort,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const ORIGIN = 'http://localhost:5173';
const PASSWORD = 'correct horse battery staple';

/** The code an app shows `steps` periods from now. */
const totp = (secret: string, steps = 0) =>
  generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

describe.each(DIALECTS)('hosted second factor over HTTP on %s', (dialect) => {
  let app: TestApp;
  let providers: ProviderServers;
  let t: TestTenant;

  beforeAll(async () => {
    const socket = reservePort();
    const base = `http://127.0.0.1:${socket.address().port}`;
    providers = await startProviders({ redirectUriFor: (id) => `${base}/oauth/${id}/callback` });
    app = await startApp(dialect, {
      socket,
      env: { LATCHKEY_PROVIDER_ENDPOINTS: providers.endpointsJson() },
    });
    t = await app.tenant({ allowedOrigins: [ORIGIN] });
  }, 60_000);
  afterAll(async () => {
    await app?.dispose();
    await providers?.close();
  });

  const db = () => app.ctx.database.db;
  const query = (tenant: TestTenant, extra: Record<string, string> = {}) =>
    new URLSearchParams({
      pk: tenant.publishableKey,
      redirect_url: `${ORIGIN}/callback`,
      state: 'st',
      ...extra,
    }).toString();

  /** A browser: a cookie jar, redirects followed by hand. */
  function browser() {
    const jar = new Map<string, string>();
    const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const setCookies: string[] = [];
    const keep = (res: Response) => {
      for (const c of res.headers.getSetCookie()) {
        setCookies.push(c);
        const [pair] = c.split(';');
        const at = (pair as string).indexOf('=');
        const [k, v] = [(pair as string).slice(0, at), (pair as string).slice(at + 1)];
        if (/max-age=0|expires=thu, 01 jan 1970/i.test(c)) jar.delete(k);
        else jar.set(k, v);
      }
      return res;
    };
    const b = {
      jar,
      setCookies,
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
      /** GETs a form page and posts `fields` with its CSRF token. */
      submit: async (page: string, action: string, fields: Record<string, string>) => {
        const html = await (await b.get(page)).text();
        return b.post(action, { _csrf: csrfOf(html), ...fields });
      },
      hasSession: (tenant: TestTenant) => jar.has(`latchkey_session_${tenant.tenant.id}`),
    };
    return b;
  }

  const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)?.[1] as string;
  const fragmentOf = (res: Response) =>
    new URLSearchParams(new URL(res.headers.get('location') as string).hash.slice(1));
  const amrOf = (res: Response) => decodeJwt(fragmentOf(res).get('access_token') as string).amr;

  /** A user with a password, and (unless `bare`) a confirmed app and recovery codes. */
  async function user(tenant = t, bare = false) {
    const address = email();
    const up = await postJson(app, '/v1/auth/sign-up', tenant.secretKey, {
      email: address,
      password: PASSWORD,
    });
    const id = (await json(up)).userId as string;
    if (bare) return { address, id, secret: '', codes: [] as string[] };
    const deps = { db: db(), box: app.ctx.box };
    const enrolment = await startTotp(
      deps,
      tenant.tenant,
      await getUser(db(), tenant.tenant.id, id),
    );
    // Confirmed with the code of the step before: the tests' codes of now stay unused.
    const match = await matchTotp(
      deps,
      tenant.tenant.id,
      id,
      totp(enrolment.secret, -1),
      enrolment.id,
    );
    expect(match && (await claimTotpStep(db(), match))).toBe(true);
    const codes = await replaceRecoveryCodes(db(), tenant.tenant.id, id);
    return { address, id, secret: enrolment.secret, codes };
  }

  /** The password step through the form; returns the browser and its answer. */
  async function passwordStep(address: string, tenant = t, extra: Record<string, string> = {}) {
    const b = browser();
    const q = query(tenant, extra);
    const res = await b.submit(`/sign-in?${q}`, `/sign-in?${q}`, {
      email: address,
      password: PASSWORD,
    });
    return { b, res, q };
  }

  /** The second step's code form, posted. */
  const verify = (b: ReturnType<typeof browser>, q: string, code: string, method?: 'recovery') =>
    b.submit(`/sign-in/verify?${q}${method ? '&method=recovery' : ''}`, `/sign-in/verify?${q}`, {
      code,
      ...(method ? { method } : {}),
    });

  /** The code posted straight to /sign-in/verify (a CSRF token from /sign-in), as a replay would. */
  const postCode = async (b: ReturnType<typeof browser>, q: string, code: string) =>
    b.post(`/sign-in/verify?${q}`, {
      _csrf: csrfOf(await (await b.get(`/sign-in?${q}`)).text()),
      code,
    });

  it('password, then the code: no token, code or hosted cookie before it; amr pwd, otp, mfa after', async () => {
    const u = await user();
    const { b, res, q } = await passwordStep(u.address);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/sign-in/verify?${q}`);
    // Only the pending sign-in's cookie: HttpOnly, SameSite=Lax, for /sign-in only, 5 minutes.
    const set = res.headers.getSetCookie();
    expect(set.some((c) => c.includes('latchkey_session'))).toBe(false);
    const pending = set.find((c) => c.startsWith(`latchkey_mfa_${t.tenant.id}=`)) as string;
    expect(pending).toMatch(/; Max-Age=300/);
    expect(pending).toMatch(/; Path=\/sign-in/);
    expect(pending).toMatch(/; HttpOnly/);
    expect(pending).toMatch(/; SameSite=Lax/);

    const page = await b.get(`/sign-in/verify?${q}`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('Authentication code');
    expect(html).toMatch(/inputmode="numeric"/);
    expect(html).toMatch(/autocomplete="one-time-code"/);
    expect(html).toContain('Use a recovery code');

    const wrong = await verify(b, q, totp(u.secret) === '000000' ? '111111' : '000000');
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('That code is wrong');
    expect(b.hasSession(t)).toBe(false);

    const right = await verify(b, q, totp(u.secret));
    expect(right.status).toBe(303);
    expect(new URL(right.headers.get('location') as string).origin).toBe(ORIGIN);
    expect(fragmentOf(right).get('state')).toBe('st');
    expect(amrOf(right)).toEqual(['pwd', 'otp', 'mfa']);
    expect(b.hasSession(t)).toBe(true);
    expect(b.jar.has(`latchkey_mfa_${t.tenant.id}`)).toBe(false);
    // Signed in now: /sign-in sends the browser straight back, keeping the session's amr.
    const back = await b.get(`/sign-in?${q}`);
    expect(back.status).toBe(303);
    expect(amrOf(back)).toEqual(['pwd', 'otp', 'mfa']);
  });

  it('a stolen password alone gets nothing: no token, no cookie, and /sign-in still asks', async () => {
    const u = await user();
    const { b, res, q } = await passwordStep(u.address);
    expect(res.headers.get('location')).not.toContain('access_token');
    expect(b.hasSession(t)).toBe(false);
    // The returning-browser path has nothing to return with.
    const again = await b.get(`/sign-in?${q}`);
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('name="password"');
    // The setup page is no way round the code for a user who has an app.
    const setup = await b.get(`/sign-in/setup?${q}`);
    expect(setup.status).toBe(303);
    expect(setup.headers.get('location')).toBe(`/sign-in/verify?${q}`);
    const post = await b.post(`/sign-in/setup?${q}`, {
      _csrf: csrfOf(await (await b.get(`/sign-in/verify?${q}`)).text()),
      factor: randomBytes(16).toString('hex'),
      code: '123456',
    });
    expect(post.status).toBe(303);
    expect(post.headers.get('location')).toBe(`/sign-in?${q}&notice=expired`);
    expect(b.hasSession(t)).toBe(false);
    // REST sign-in gives no token either.
    const rest = await postJson(app, '/v1/auth/sign-in', t.secretKey, {
      email: u.address,
      password: PASSWORD,
    });
    expect(rest.status).toBe(403);
    expect((await json(rest)).code).toBe('mfa_required');
  });

  it('a code is taken once: replayed in another sign-in it is refused, the next one works', async () => {
    const u = await user();
    const code = totp(u.secret);
    const first = await passwordStep(u.address);
    expect((await verify(first.b, first.q, code)).status).toBe(303);
    const second = await passwordStep(u.address);
    const replay = await verify(second.b, second.q, code);
    expect(replay.status).toBe(401);
    expect(second.b.hasSession(t)).toBe(false);
    const next = await verify(second.b, second.q, totp(u.secret, 1));
    expect(next.status).toBe(303);
    expect(amrOf(next)).toEqual(['pwd', 'otp', 'mfa']);
  });

  it('a recovery code signs in once; used twice it is refused', async () => {
    const u = await user();
    const code = u.codes[0] as string;
    const first = await passwordStep(u.address);
    const form = await (await first.b.get(`/sign-in/verify?${first.q}&method=recovery`)).text();
    expect(form).toContain('Recovery code');
    expect(form).toContain('Use your authenticator app');
    // As people type it: capitals and spaces do not matter.
    const ok = await verify(
      first.b,
      first.q,
      ` ${code.toUpperCase().replaceAll('-', ' ')} `,
      'recovery',
    );
    expect(ok.status).toBe(303);
    expect(amrOf(ok)).toEqual(['pwd', 'otp', 'mfa']);
    const second = await passwordStep(u.address);
    const again = await verify(second.b, second.q, code, 'recovery');
    expect(again.status).toBe(401);
    const html = await again.text();
    expect(html).toContain('That recovery code is wrong or was used already');
    expect(html).toContain('Recovery code');
    expect(second.b.hasSession(t)).toBe(false);
  });

  it('five wrong codes end the sign-in with 429; then even the right code is turned back', async () => {
    const u = await user();
    const { b, q } = await passwordStep(u.address);
    const right = totp(u.secret);
    const wrong = right === '000000' ? '111111' : '000000';
    for (let i = 1; i <= 4; i++) expect((await verify(b, q, wrong)).status).toBe(401);
    const fifth = await verify(b, q, wrong);
    expect(fifth.status).toBe(429);
    expect(await fifth.text()).toContain('sign in again');
    // The challenge ended: the page (and its right code) lead back to /sign-in, which says why.
    const after = await postCode(b, q, right);
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe(`/sign-in?${q}&notice=expired`);
    const notice = await (await b.get(`/sign-in?${q}&notice=expired`)).text();
    expect(notice).toContain('took too long or was finished already');
    expect(b.hasSession(t)).toBe(false);
  });

  it('a pending sign-in used, expired, or of another tenant is refused', async () => {
    const u = await user();
    // Used: the cookie of a finished sign-in, sent again.
    const done = await passwordStep(u.address);
    const token = done.b.jar.get(`latchkey_mfa_${t.tenant.id}`) as string;
    expect((await verify(done.b, done.q, totp(u.secret))).status).toBe(303);
    const reuse = browser();
    reuse.jar.set(`latchkey_mfa_${t.tenant.id}`, token);
    const reused = await postCode(reuse, done.q, totp(u.secret, 1));
    expect(reused.status).toBe(303);
    expect(reused.headers.get('location')).toBe(`/sign-in?${done.q}&notice=expired`);
    expect(reuse.hasSession(t)).toBe(false);

    // Expired: five minutes passed.
    const late = await passwordStep(u.address);
    await db()
      .updateTable('mfa_challenges')
      .set({ expires_at: Date.now() - 1 })
      .where('user_id', '=', u.id)
      .where('used_at', 'is', null)
      .execute();
    const expired = await postCode(late.b, late.q, totp(u.secret, 1));
    expect(expired.headers.get('location')).toBe(`/sign-in?${late.q}&notice=expired`);
    expect(late.b.hasSession(t)).toBe(false);

    // Another tenant's: the token of a pending sign-in of tenant t, shown to tenant other.
    const other = await app.tenant({ allowedOrigins: [ORIGIN] });
    const pending = await passwordStep(u.address);
    const thief = browser();
    thief.jar.set(
      `latchkey_mfa_${other.tenant.id}`,
      pending.b.jar.get(`latchkey_mfa_${t.tenant.id}`) as string,
    );
    const q = query(other);
    const page = await thief.get(`/sign-in/verify?${q}`);
    expect(page.headers.get('location')).toBe(`/sign-in?${q}&notice=expired`);
    const crossed = await postCode(thief, q, totp(u.secret, 1));
    expect(crossed.headers.get('location')).toBe(`/sign-in?${q}&notice=expired`);
    expect(thief.hasSession(other)).toBe(false);
    // Its own tenant still takes it.
    expect((await verify(pending.b, pending.q, totp(u.secret, 1))).status).toBe(303);
  });

  it('a returning browser goes straight back, unless the tenant now requires a factor it lacks', async () => {
    const later = await app.tenant({ allowedOrigins: [ORIGIN] });
    const u = await user(later, true);
    const { b, res, q } = await passwordStep(u.address, later);
    expect(amrOf(res)).toEqual(['pwd']);
    expect((await b.get(`/sign-in?${q}`)).status).toBe(303);
    await updateTenant({ db: db(), bus: app.ctx.bus }, later.tenant.id, { mfaPolicy: 'required' });
    // No tokens from the old hosted session: the form, then the setup.
    const again = await b.get(`/sign-in?${q}`);
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('name="password"');
    const signIn = await b.submit(`/sign-in?${q}`, `/sign-in?${q}`, {
      email: u.address,
      password: PASSWORD,
    });
    expect(signIn.headers.get('location')).toBe(`/sign-in/setup?${q}`);
  });

  it('a pending sign-in works on its own channel only: a hosted one not over REST, nor the reverse', async () => {
    const u = await user();
    const { b, q } = await passwordStep(u.address);
    const hostedToken = b.jar.get(`latchkey_mfa_${t.tenant.id}`) as string;
    const rest = await postJson(app, '/v1/auth/sign-in/verify', t.secretKey, {
      mfaToken: hostedToken,
      code: totp(u.secret),
    });
    expect(rest.status).toBe(401);
    expect((await json(rest)).code).toBe('invalid_mfa_token');
    const restToken = (
      await json(
        await postJson(app, '/v1/auth/sign-in', t.secretKey, {
          email: u.address,
          password: PASSWORD,
        }),
      )
    ).mfaToken as string;
    const crossed = browser();
    crossed.jar.set(`latchkey_mfa_${t.tenant.id}`, restToken);
    const res = await postCode(crossed, q, totp(u.secret));
    expect(res.headers.get('location')).toBe(`/sign-in?${q}&notice=expired`);
    expect(crossed.hasSession(t)).toBe(false);
    // Both still finish where they began.
    expect((await verify(b, q, totp(u.secret))).status).toBe(303);
  });

  it('social sign-in in development mode waits for the factor too', async () => {
    const dev = await app.tenant({ allowedOrigins: [ORIGIN] });
    await setProvider(db(), app.ctx.box, dev.tenant.id, 'google', { mode: 'development' });
    const u = await user(dev);
    await db()
      .updateTable('users')
      .set({ email_verified_at: Date.now() })
      .where('id', '=', u.id)
      .execute();
    const b = browser();
    const q = query(dev);
    const start = await b.get(`/oauth/google/start?q=${encodeURIComponent(q)}`);
    const location = new URL(start.headers.get('location') as string);
    const page = await (await b.get(location.pathname + location.search)).text();
    const res = await b.post('/oauth/google/development', {
      _csrf: csrfOf(page),
      state: /name="state" value="([^"]+)"/.exec(page)?.[1] as string,
      email: u.address,
      name: '',
      emailVerified: 'on',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/sign-in/verify?${q}`);
    expect(b.hasSession(dev)).toBe(false);
    const done = await verify(b, q, totp(u.secret));
    expect(amrOf(done)).toEqual(['fed', 'otp', 'mfa']);
  });

  it('PKCE: the code comes only after the second factor, and redeems to tokens with mfa', async () => {
    const u = await user();
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const { b, res, q } = await passwordStep(u.address, t, {
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(res.headers.get('location')).toBe(`/sign-in/verify?${q}`);
    expect(
      await db()
        .selectFrom('auth_codes')
        .selectAll()
        .where('code_challenge', '=', challenge)
        .execute(),
    ).toEqual([]);
    const done = await verify(b, q, totp(u.secret));
    const code = fragmentOf(done).get('code') as string;
    expect(code).toBeTruthy();
    const tokens = await app.request('/v1/client/token', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-latchkey-publishable-key': t.publishableKey,
        origin: ORIGIN,
      },
      body: JSON.stringify({ grant_type: 'authorization_code', code, code_verifier: verifier }),
    });
    expect(tokens.status).toBe(200);
    expect(
      decodeJwt((await json(tokens)).accessToken ?? (await json(tokens)).access_token).amr,
    ).toEqual(['pwd', 'otp', 'mfa']);
  });

  it('required: a new and an existing user set an app up before any token; codes shown once', async () => {
    const strict = await app.tenant({ allowedOrigins: [ORIGIN] });
    const existing = await user(strict, true);
    const strictTenant = {
      ...strict,
      tenant: await updateTenant({ db: db(), bus: app.ctx.bus }, strict.tenant.id, {
        mfaPolicy: 'required',
      }),
    };

    /** Walks setup from the page after the first factor; returns the final redirect. */
    async function setUp(b: ReturnType<typeof browser>, q: string) {
      const page = await b.get(`/sign-in/setup?${q}`);
      const html = await page.text();
      expect(page.status).toBe(200);
      expect(html).toMatch(/<svg [^>]*role="img"/);
      expect(html).not.toMatch(/style="/);
      const grouped = /<p class="secret"><code>([A-Z2-7 ]+)<\/code>/.exec(html)?.[1] as string;
      expect(grouped).toMatch(/^([A-Z2-7]{4} )+[A-Z2-7]{1,4}$/);
      const secret = grouped.replaceAll(' ', '');
      const factor = /name="factor" value="([^"]+)"/.exec(html)?.[1] as string;
      // A wrong first code: the same key again, and still no session.
      const wrong = await b.post(`/sign-in/setup?${q}`, {
        _csrf: csrfOf(html),
        factor,
        code: totp(secret, 5),
      });
      expect(wrong.status).toBe(401);
      const again = await wrong.text();
      expect(again).toContain(grouped);
      expect(b.hasSession(strictTenant)).toBe(false);
      const ok = await b.post(`/sign-in/setup?${q}`, {
        _csrf: csrfOf(again),
        factor,
        code: totp(secret),
      });
      expect(ok.status).toBe(200);
      const shown = await ok.text();
      const codes = [
        ...shown.matchAll(/<li><code>([a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4})<\/code><\/li>/g),
      ].map((m) => m[1]);
      expect(codes).toHaveLength(10);
      expect(shown).toContain('download="recovery-codes.txt"');
      expect(shown).toContain(encodeURIComponent(codes[0] as string));
      expect(b.hasSession(strictTenant)).toBe(true);
      const on = await b.post(`/sign-in/continue?${q}`, { _csrf: csrfOf(shown) });
      expect(on.status).toBe(303);
      expect(amrOf(on)).toEqual(['pwd', 'otp', 'mfa']);
      return { secret, codes };
    }

    // A new user: sign-up signs in only after the setup.
    const nb = browser();
    const q = query(strict);
    const up = await nb.submit(`/sign-up?${q}`, `/sign-up?${q}`, {
      email: email(),
      password: PASSWORD,
    });
    expect(up.status).toBe(303);
    expect(up.headers.get('location')).toBe(`/sign-in/setup?${q}`);
    expect(nb.hasSession(strictTenant)).toBe(false);
    await setUp(nb, q);

    // An existing user without a factor: the password leads to setup, then the app is theirs.
    const { b, res } = await passwordStep(existing.address, strict);
    expect(res.headers.get('location')).toBe(`/sign-in/setup?${q}`);
    const { secret } = await setUp(b, q);
    const next = await passwordStep(existing.address, strict);
    expect(next.res.headers.get('location')).toBe(`/sign-in/verify?${q}`);
    expect((await verify(next.b, next.q, totp(secret, 1))).status).toBe(303);
  });

  it('social sign-in: the provider is the first factor, the app the second (amr fed, otp, mfa)', async () => {
    const social = await app.tenant({ allowedOrigins: [ORIGIN] });
    const google = providers.google;
    await setProvider(db(), app.ctx.box, social.tenant.id, 'google', {
      clientId: google.clientId,
      clientSecret: google.clientSecret,
      enabled: true,
    });
    const address = email('google');
    const account = {
      ...DEFAULT_ACCOUNTS.google,
      sub: `g-${Date.now()}`,
      email: address,
      emailVerified: true,
    };
    /** Through Google's (the harness's) consent to our callback. */
    async function viaGoogle(b: ReturnType<typeof browser>) {
      google.next(account);
      const start = await b.get(`/oauth/google/start?q=${encodeURIComponent(query(social))}`);
      const consent = await fetch(start.headers.get('location') as string, { redirect: 'manual' });
      const callback = new URL(consent.headers.get('location') as string);
      return b.get(callback.pathname + callback.search);
    }
    // First sign-in: a new user, no factor, signed in at once (optional policy).
    const first = browser();
    const res = await viaGoogle(first);
    expect(res.status).toBe(303);
    expect(amrOf(res)).toEqual(['fed']);
    const userId = decodeJwt(fragmentOf(res).get('access_token') as string).sub as string;
    const deps = { db: db(), box: app.ctx.box };
    const enrolment = await startTotp(
      deps,
      social.tenant,
      await getUser(db(), social.tenant.id, userId),
    );
    const match = await matchTotp(
      deps,
      social.tenant.id,
      userId,
      totp(enrolment.secret, -1),
      enrolment.id,
    );
    expect(match && (await claimTotpStep(db(), match))).toBe(true);

    // With an app: Google alone leads to /sign-in/verify, no session written yet.
    const b = browser();
    const pending = await viaGoogle(b);
    const q = query(social);
    expect(pending.status).toBe(303);
    expect(pending.headers.get('location')).toBe(`/sign-in/verify?${q}`);
    expect(b.hasSession(social)).toBe(false);
    const sessions = () =>
      db().selectFrom('sessions').select('id').where('user_id', '=', userId).execute();
    const before = (await sessions()).length;
    const done = await verify(b, q, totp(enrolment.secret));
    expect(done.status).toBe(303);
    expect(amrOf(done)).toEqual(['fed', 'otp', 'mfa']);
    expect((await sessions()).length).toBe(before + 1);
  });

  // ----- /account: apps, recovery codes, password; each change needs a recent sign-in -----

  /** A browser signed in (password only) as a new user without a factor; its account query. */
  async function onAccount(tenant = t) {
    const u = await user(tenant, true);
    const { b, res, q } = await passwordStep(u.address, tenant);
    expect(res.status).toBe(303);
    const account = async () => {
      const page = await b.get(`/account?${q}`);
      expect(page.status).toBe(200);
      const html = await page.text();
      return { html, csrf: csrfOf(html) };
    };
    return { u, b, q, account };
  }
  const auditKinds = async (userId: string) =>
    (
      await db()
        .selectFrom('audit_events')
        .select('kind')
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .execute()
    ).map((r) => r.kind);

  it('/account: set up an app, codes shown once, new codes end the old ones, remove it', async () => {
    const { u, b, q, account } = await onAccount();
    let { html, csrf } = await account();
    expect(html).toContain('Authenticator app');
    expect(html).toContain('You have no authenticator app set up.');
    const start = await b.post(`/account/totp?${q}`, { _csrf: csrf });
    expect(start.status).toBe(200);
    const setup = await start.text();
    expect(setup).toMatch(/<svg [^>]*role="img"/);
    const grouped = /<p class="secret"><code>([A-Z2-7 ]+)<\/code>/.exec(setup)?.[1] ?? '';
    const secret = grouped.replaceAll(' ', '');
    const factor = /name="factor" value="([^"]+)"/.exec(setup)?.[1] as string;
    const wrong = await b.post(`/account/totp/confirm?${q}`, {
      _csrf: csrfOf(setup),
      factor,
      code: totp(secret, 5),
    });
    expect(wrong.status).toBe(401);
    const again = await wrong.text();
    expect(again).toContain('That code is wrong');
    expect(again.replaceAll(' ', '')).toContain(secret);
    const ok = await b.post(`/account/totp/confirm?${q}`, {
      _csrf: csrfOf(again),
      factor,
      code: totp(secret),
    });
    expect(ok.status).toBe(200);
    const codes = [...(await ok.text()).matchAll(/<li><code>([a-z2-7-]{14})<\/code><\/li>/g)].map(
      (m) => m[1] as string,
    );
    expect(codes).toHaveLength(10);
    ({ html, csrf } = await account());
    expect(html).toContain('10 of 10 codes left.');
    expect(html).toContain('last used');

    // New codes: the old ones stop working at sign-in.
    const fresh = await b.post(`/account/recovery-codes?${q}`, { _csrf: csrf });
    expect(fresh.status).toBe(200);
    const newCodes = [
      ...(await fresh.text()).matchAll(/<li><code>([a-z2-7-]{14})<\/code><\/li>/g),
    ].map((m) => m[1] as string);
    expect(newCodes).toHaveLength(10);
    expect(newCodes).not.toContain(codes[0]);
    const other = await passwordStep(u.address);
    expect(other.res.headers.get('location')).toBe(`/sign-in/verify?${other.q}`);
    expect((await verify(other.b, other.q, codes[0] as string, 'recovery')).status).toBe(401);
    expect((await verify(other.b, other.q, newCodes[0] as string, 'recovery')).status).toBe(303);

    // Remove the app: sign-in asks for no code any more.
    ({ html, csrf } = await account());
    const removed = await b.post(`/account/factors/${factor}/remove?${q}`, { _csrf: csrf });
    expect(removed.status).toBe(303);
    expect(removed.headers.get('location')).toBe(`/account?${q}&done=factor-removed`);
    expect((await passwordStep(u.address)).res.headers.get('location')).toContain(
      `${ORIGIN}/callback#`,
    );
    expect(await auditKinds(u.id)).toEqual([
      'factor_added',
      'recovery_codes_replaced',
      'recovery_codes_replaced',
      'factor_removed',
    ]);
  });

  it('/account under required: removing the last app is refused with a clear message', async () => {
    const strict = await app.tenant({ allowedOrigins: [ORIGIN] });
    const u = await user(strict);
    await updateTenant({ db: db(), bus: app.ctx.bus }, strict.tenant.id, { mfaPolicy: 'required' });
    const { b, q } = await passwordStep(u.address, strict);
    expect((await verify(b, q, totp(u.secret))).status).toBe(303);
    const html = await (await b.get(`/account?${q}`)).text();
    const factor = /action="\/account\/factors\/([0-9a-f-]{36})\/remove/.exec(html)?.[1] as string;
    const refused = await b.post(`/account/factors/${factor}/remove?${q}`, { _csrf: csrfOf(html) });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain(
      'This is your last second factor and this service requires one',
    );
    expect(
      await db().selectFrom('totp_factors').select('id').where('id', '=', factor).execute(),
    ).toHaveLength(1);
  });

  it('/account password: current and new twice, sign-up rules and breached list; every other sign-in ends', async () => {
    const { u, b, q, account } = await onAccount();
    // Another browser signed in to the hosted page, and a server's session over REST.
    const elsewhere = (await passwordStep(u.address)).b;
    expect((await elsewhere.get(`/sign-in?${q}`)).status).toBe(303);
    const rest = await json(
      await postJson(app, '/v1/auth/sign-in', t.secretKey, {
        email: u.address,
        password: PASSWORD,
      }),
    );
    const change = async (fields: Record<string, string>) =>
      b.post(`/account/password?${q}`, { _csrf: (await account()).csrf, ...fields });
    const NEW = 'a new and longer passphrase';
    const cases: [Record<string, string>, string][] = [
      [
        { current: 'not it at all', password: NEW, confirm: NEW },
        'Your current password is wrong.',
      ],
      [
        { current: PASSWORD, password: NEW, confirm: `${NEW}!` },
        'The two new passwords are not the same.',
      ],
      [{ current: PASSWORD, password: 'short', confirm: 'short' }, 'at least 8 characters'],
      [
        { current: PASSWORD, password: 'PassWord1', confirm: 'PassWord1' },
        'one of the most common passwords',
      ],
    ];
    for (const [fields, message] of cases) {
      const res = await change(fields);
      expect(res.status).toBe(422);
      expect(await res.text()).toContain(message);
    }
    const ok = await change({ current: PASSWORD, password: NEW, confirm: NEW });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe(`/account?${q}&done=password-changed`);
    const signIn = (password: string) =>
      postJson(app, '/v1/auth/sign-in', t.secretKey, { email: u.address, password });
    expect((await signIn(PASSWORD)).status).toBe(401);
    expect((await signIn(NEW)).status).toBe(200);
    // Every other sign-in ends (someone may have known the old password); this browser stays.
    const refreshed = await postJson(app, '/v1/auth/token', t.secretKey, {
      refreshToken: rest.refreshToken,
    });
    expect(refreshed.status).toBe(400);
    expect((await elsewhere.get(`/sign-in?${q}`)).status).toBe(200);
    expect((await b.get(`/account?${q}`)).status).toBe(200);
    expect((await b.get(`/sign-in?${q}`)).status).toBe(303);
    expect(await auditKinds(u.id)).toEqual(['password_changed']);
  });

  it('a browser signed in with the password alone does not come straight back once the user has a factor', async () => {
    const u = await user(t, true);
    const { b, res, q } = await passwordStep(u.address);
    expect(amrOf(res)).toEqual(['pwd']);
    expect((await b.get(`/sign-in?${q}`)).status).toBe(303);
    // The user adds an app (a stolen cookie from before must bring nothing back).
    const deps = { db: db(), box: app.ctx.box };
    const enrolment = await startTotp(deps, t.tenant, await getUser(db(), t.tenant.id, u.id));
    const match = await matchTotp(
      deps,
      t.tenant.id,
      u.id,
      totp(enrolment.secret, -1),
      enrolment.id,
    );
    expect(match && (await claimTotpStep(db(), match))).toBe(true);
    const again = await b.get(`/sign-in?${q}`);
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('name="password"');
    const continued = await b.post(`/sign-in/continue?${q}`, {
      _csrf: csrfOf(await (await b.get(`/sign-in?${q}`)).text()),
    });
    expect(continued.headers.get('location') ?? '').not.toContain('access_token');
    // Signed in with both factors, the browser comes straight back again.
    const second = await passwordStep(u.address);
    const done = await verify(second.b, second.q, totp(enrolment.secret));
    expect(amrOf(done)).toEqual(['pwd', 'otp', 'mfa']);
    expect((await second.b.get(`/sign-in?${second.q}`)).status).toBe(303);
  });

  it('required: leftover recovery codes do not skip the setup', async () => {
    const tenant = await app.tenant({ allowedOrigins: [ORIGIN] });
    await updateTenant({ db: db(), bus: app.ctx.bus }, tenant.tenant.id, { mfaPolicy: 'required' });
    const u = await user(tenant, true);
    const codes = await replaceRecoveryCodes(db(), tenant.tenant.id, u.id);
    const { b, res, q } = await passwordStep(u.address, tenant);
    expect(res.headers.get('location')).toBe(`/sign-in/setup?${q}`);
    const skipped = await b.post(`/sign-in/verify?${q}`, {
      _csrf: csrfOf(await (await b.get(`/sign-in?${q}`)).text()),
      code: codes[0] as string,
      method: 'recovery',
    });
    expect(skipped.status).toBe(303);
    expect(skipped.headers.get('location')).toBe(`/sign-in/setup?${q}`);
    expect(b.hasSession(tenant)).toBe(false);
  });

  it('step-up: a sign-in over 10 minutes old changes nothing; a returning visit does not renew it', async () => {
    const { u, b, q, account } = await onAccount();
    await db()
      .updateTable('hosted_sessions')
      .set({ created_at: Date.now() - 11 * 60_000 })
      .where('user_id', '=', u.id)
      .execute();
    // The returning-browser path (fresh tokens) is no new sign-in.
    expect((await b.get(`/sign-in?${q}`)).status).toBe(303);
    const { html } = await account();
    expect(html).toContain('sign in again');
    // The stale page has no change forms: a token from another of the hosted forms.
    const csrf = csrfOf(await (await b.get(`/sign-out?${q}`)).text());
    expect(html).not.toContain('action="/account/totp?');
    expect(html).not.toContain('action="/account/password?');
    for (const [path, fields] of [
      ['/account/totp', {}],
      ['/account/totp/confirm', { factor: randomBytes(16).toString('hex'), code: '123456' }],
      ['/account/recovery-codes', {}],
      [
        '/account/password',
        {
          current: PASSWORD,
          password: 'a new and longer passphrase',
          confirm: 'a new and longer passphrase',
        },
      ],
    ] as const) {
      const res = await b.post(`${path}?${q}`, { _csrf: csrf, ...fields });
      expect(res.status, path).toBe(403);
      expect(await res.text(), path).toContain(
        'sign in again: your last sign-in on this browser was over 10 minutes ago',
      );
    }
    expect(
      await db().selectFrom('totp_factors').select('id').where('user_id', '=', u.id).execute(),
    ).toEqual([]);
    expect(await auditKinds(u.id)).toEqual([]);
    expect(
      (
        await postJson(app, '/v1/auth/sign-in', t.secretKey, {
          email: u.address,
          password: PASSWORD,
        })
      ).status,
    ).toBe(200);
    // Signing in again (return_to=account) comes back to /account, able to change things.
    const again = await b.submit(
      `/sign-in?${q}&prompt=login&return_to=account`,
      `/sign-in?${q}&return_to=account`,
      { email: u.address, password: PASSWORD },
    );
    expect(again.headers.get('location')).toBe(`/account?${q}`);
    expect((await account()).html).toContain('action="/account/totp?');
  });
});
