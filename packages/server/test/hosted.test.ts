/** Hosted-page rules checked over plain HTTP (the browser suite covers the journeys). */

import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localBus } from '../src/cache/invalidation.js';
import { readOutbox } from '../src/modules/email/index.js';
import { updateTenant } from '../src/modules/tenants/index.js';
import { openDatabase } from '../src/storage/index.js';
import {
  DIALECTS,
  email,
  eventually,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const ORIGIN = 'http://localhost:5173';
const PASSWORD = 'correct horse battery staple';

describe.each(DIALECTS)('hosted pages over HTTP on %s', (dialect) => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startApp(dialect);
  });
  afterAll(() => app.dispose());

  const query = (t: TestTenant, redirect = `${ORIGIN}/cb`) =>
    new URLSearchParams({ pk: t.publishableKey, redirect_url: redirect }).toString();

  /** Signs in through the form; returns the cookies the browser would keep. */
  async function signIn(t: TestTenant, address: string, jar: Map<string, string>) {
    const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const keep = (res: Response) => {
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const [k, v] = (pair as string).split('=') as [string, string];
        jar.set(k, v);
      }
    };
    const page = await app.request(`/sign-in?${query(t)}`, { headers: { cookie: cookie() } });
    keep(page);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] as string;
    const res = await app.request(`/sign-in?${query(t)}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie() },
      body: new URLSearchParams({ _csrf: csrf, email: address, password: PASSWORD }).toString(),
    });
    keep(res);
    return res;
  }

  /** A form page as a browser gets it: its cookies (as a Cookie header) and its CSRF token. */
  async function openForm(path: string) {
    const page = await app.request(path);
    const cookie = page.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] as string;
    return { status: page.status, cookie, csrf };
  }

  const returning = (t: TestTenant, jar: Map<string, string>) =>
    app.request(`/sign-in?${query(t)}`, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });

  async function user(t: TestTenant) {
    const address = email();
    const res = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
      email: address,
      password: PASSWORD,
    });
    return { address, id: ((await res.json()) as { userId: string }).userId };
  }

  it('a form posted from another site is refused, even with a valid token, and signs nobody in', async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    const u = await user(t);
    const { cookie, csrf } = await openForm(`/sign-in?${query(t)}`);
    const post = (headers: Record<string, string>) =>
      app.request(`/sign-in?${query(t)}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, ...headers },
        body: new URLSearchParams({ _csrf: csrf, email: u.address, password: PASSWORD }).toString(),
      });
    for (const headers of [
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
    ] as Record<string, string>[]) {
      const res = await post(headers);
      expect(res.status).toBe(403);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.getSetCookie().some((c) => c.includes('latchkey_session'))).toBe(false);
      expect(await res.text()).toContain('This form came from another site');
    }
    // The same form from this origin (pages under no-referrer send Origin: null) signs in.
    const same = await post({ origin: 'null', 'sec-fetch-site': 'same-origin' });
    expect(same.status).toBe(303);
    expect(same.headers.getSetCookie().some((c) => c.includes('latchkey_session'))).toBe(true);
  });

  it('without SMTP_URL, mail goes to the dev outbox and the log never holds its link', async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    const u = await user(t);
    const { cookie, csrf } = await openForm(`/forgot-password?${query(t)}`);
    const res = await app.request(`/forgot-password?${query(t)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ _csrf: csrf, email: u.address }).toString(),
    });
    expect(res.status).toBe(200);
    // Mail is sent after the answer.
    const mails = await eventually(async () => {
      const sent = await readOutbox(app.ctx.database.db, { to: u.address });
      return sent.length > 0 ? sent : undefined;
    });
    expect(mails).toHaveLength(1);
    const token = /reset-password\?token=([A-Za-z0-9_-]+)/.exec(
      mails[0]?.body ?? '',
    )?.[1] as string;
    expect(token).toBeTruthy();
    // The line is logged once the insert has returned, which may be after the poll saw it.
    await expect.poll(() => app.logs.text()).toContain('mail kept in the dev outbox');
    expect(app.logs.text()).not.toContain(token);
    const link = await app.request(`/reset-password?token=${token}`);
    expect(link.status).toBe(200);
    expect(app.logs.text()).not.toContain(token);
  });

  it('sign-up never tells whether an address has an account; its owner gets a mail', async () => {
    const signUpForm = async (t: TestTenant, address: string) => {
      const { cookie, csrf } = await openForm(`/sign-up?${query(t)}`);
      const res = await app.request(`/sign-up?${query(t)}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ _csrf: csrf, email: address, password: PASSWORD }).toString(),
      });
      const html = await res.text();
      return {
        status: res.status,
        text: html.replace(address, 'ADDRESS').replace(/nonce="[^"]+"/g, ''),
      };
    };
    const verifying = await app.tenant({
      allowedOrigins: [ORIGIN],
      requireEmailVerification: true,
    });
    const owner = await user(verifying);
    const fresh = await signUpForm(verifying, email());
    const existing = await signUpForm(verifying, owner.address);
    expect(existing.status).toBe(fresh.status);
    expect(existing.text).toBe(fresh.text);
    const mail = await eventually(async () => {
      const sent = await readOutbox(app.ctx.database.db, { to: owner.address });
      return sent[0];
    });
    expect(mail.subject).toContain('You already have');
    expect(mail.body).toMatch(/reset-password\?token=/);
    // A tenant that signs new users in at once: the duplicate is not told either.
    const instant = await app.tenant({ allowedOrigins: [ORIGIN] });
    const other = await user(instant);
    const again = await signUpForm(instant, other.address);
    expect(again.status).toBe(201);
    expect(again.text).not.toMatch(/exists|already/i);
  });

  it('a sign-up that signs in at once is a password sign-in: amr ["pwd"], auth_time now', async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    const { cookie, csrf } = await openForm(`/sign-up?${query(t)}`);
    const before = Math.floor(Date.now() / 1000);
    const res = await app.request(`/sign-up?${query(t)}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ _csrf: csrf, email: email(), password: PASSWORD }).toString(),
    });
    expect(res.status).toBe(303);
    const token = new URLSearchParams(
      new URL(res.headers.get('location') as string).hash.slice(1),
    ).get('access_token') as string;
    const claims = decodeJwt(token);
    expect(claims.amr).toEqual(['pwd']);
    // The sign-up's own time: the token may be issued a second later (CI once saw
    // auth_time one second before iat), never before it and never before the request.
    const authTime = claims.auth_time as number;
    expect(authTime).toBeGreaterThanOrEqual(before);
    expect(authTime).toBeLessThanOrEqual(claims.iat as number);
    const answer = await postJson(app, '/api/auth/introspect', t.secretKey, { token });
    expect(await answer.json()).toMatchObject({
      active: true,
      amr: ['pwd'],
      auth_time: authTime,
    });
  });

  it('refuses a redirect_url ending in a bare #', async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    const res = await app.request(`/sign-in?${query(t, `${ORIGIN}/cb#`)}`, { redirect: 'manual' });
    expect(res.status).toBe(400);
  });

  it('keeps one browser session per tenant', async () => {
    const a = await app.tenant({ allowedOrigins: [ORIGIN] });
    const b = await app.tenant({ allowedOrigins: [ORIGIN] });
    const ua = await user(a);
    const ub = await user(b);
    const jar = new Map<string, string>();
    expect((await signIn(a, ua.address, jar)).status).toBe(303);
    expect((await signIn(b, ub.address, jar)).status).toBe(303);
    expect((await returning(a, jar)).status).toBe(303);
    expect((await returning(b, jar)).status).toBe(303);
  });

  it('"sign out everywhere" also signs the browser out of the hosted page', async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    const u = await user(t);
    const jar = new Map<string, string>();
    expect((await signIn(t, u.address, jar)).status).toBe(303);
    expect((await returning(t, jar)).status).toBe(303);
    const out = await app.request(`/v1/users/${u.id}/sessions`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${t.secretKey}` },
    });
    expect(out.status).toBe(204);
    expect((await returning(t, jar)).status).toBe(200);
  });

  /** The session (sid) of the access token a sign-in redirect carried. */
  async function sidOf(t: TestTenant, redirect: Response): Promise<string> {
    const location = new URL(redirect.headers.get('location') as string);
    const token = new URLSearchParams(location.hash.slice(1)).get('access_token');
    const claims = await postJson(app, '/api/auth/introspect', t.secretKey, { token });
    return ((await claims.json()) as { sid: string }).sid;
  }

  /** A returning visit that must find the browser signed out: the form, plain or PKCE. */
  async function expectSignedOut(t: TestTenant, jar: Map<string, string>) {
    const plain = await returning(t, jar);
    expect(plain.status).toBe(200);
    expect(await plain.text()).toContain('id="password"');
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const q = `${query(t)}&code_challenge=${'A'.repeat(43)}&code_challenge_method=S256`;
    const pkce = await app.request(`/sign-in?${q}`, { redirect: 'manual', headers: { cookie } });
    const html = await pkce.text();
    expect(html).toContain('id="password"');
    expect(html).not.toContain('Continue as');
  }

  /** The script library's sign-in for a returning browser: "Continue as …", then the code redeemed. */
  async function browserTokens(t: TestTenant, jar: Map<string, string>) {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const q = `${query(t)}&code_challenge=${challenge}&code_challenge_method=S256`;
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const ask = await app.request(`/sign-in?${q}`, { redirect: 'manual', headers: { cookie } });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await ask.text())?.[1] as string;
    const setCookies = ask.headers.getSetCookie().map((c) => c.split(';')[0]);
    const go = await app.request(`/sign-in/continue?${q}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: [cookie, ...setCookies].join('; '),
      },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    const code = new URLSearchParams(
      new URL(go.headers.get('location') as string).hash.slice(1),
    ).get('code');
    const res = await app.request('/v1/client/token', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-latchkey-publishable-key': t.publishableKey,
        origin: ORIGIN,
      },
      body: JSON.stringify({ grant_type: 'authorization_code', code, code_verifier: verifier }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { refreshToken: string; sessionId: string };
  }

  it.each(['DELETE /v1/sessions/{id}', 'POST /v1/client/sign-out'])(
    'ending the session with %s ends the hosted-page session that opened it',
    async (how) => {
      const t = await app.tenant({ allowedOrigins: [ORIGIN] });
      const u = await user(t);
      const jar = new Map<string, string>();
      const signedIn = await signIn(t, u.address, jar);
      expect(signedIn.status).toBe(303);
      // A returning visit comes back through the same session.
      const back = await returning(t, jar);
      expect(back.status).toBe(303);
      const sid = await sidOf(t, back);
      expect(sid).toBe(await sidOf(t, signedIn));
      if (how === 'DELETE /v1/sessions/{id}') {
        const res = await app.request(`/v1/sessions/${sid}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${t.secretKey}` },
        });
        expect(res.status).toBe(204);
      } else {
        // The script library's way: the refresh token it redeemed, from the page's origin.
        const { refreshToken, sessionId } = await browserTokens(t, jar);
        expect(sessionId).toBe(sid);
        const res = await app.request('/v1/client/sign-out', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-latchkey-publishable-key': t.publishableKey,
            origin: ORIGIN,
          },
          body: JSON.stringify({ refresh_token: refreshToken }),
        });
        expect(res.status).toBe(204);
      }
      await expectSignedOut(t, jar);
    },
  );

  it('refuses password forms when the tenant turned password sign-in off', async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    const u = await user(t);
    // Written from another connection, as the CLI would.
    const other = openDatabase(app.ctx.config.databaseUrl);
    await updateTenant({ db: other.db, bus: localBus({ cache: false }) }, t.tenant.id, {
      passwordEnabled: false,
    });
    await other.close();
    expect((await signIn(t, u.address, new Map())).status).toBe(403);
    expect((await app.request(`/sign-up?${query(t)}`)).status).toBe(403);
  });

  it('a returning browser resumes its session: visits write no new rows', async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    const u = await user(t);
    const jar = new Map<string, string>();
    expect((await signIn(t, u.address, jar)).status).toBe(303);
    const db = app.ctx.database.db;
    const count = async () =>
      Promise.all(
        (['sessions', 'refresh_tokens', 'hosted_sessions'] as const).map(async (table) =>
          Number(
            (
              await db
                .selectFrom(table)
                .select((e) => e.fn.countAll().as('n'))
                .where('tenant_id', '=', t.tenant.id)
                .executeTakeFirstOrThrow()
            ).n,
          ),
        ),
      );
    const before = await count();
    const sids = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const back = await returning(t, jar);
      expect(back.status).toBe(303);
      const fragment = new URLSearchParams(
        new URL(back.headers.get('location') as string).hash.slice(1),
      );
      const token = fragment.get('access_token') as string;
      const claims = await postJson(app, '/api/auth/introspect', t.secretKey, { token });
      const body = (await claims.json()) as { active: boolean; sid: string };
      expect(body.active).toBe(true);
      sids.add(body.sid);
    }
    expect(await count()).toEqual(before);
    expect(sids.size).toBe(1);
  });

  it("the sign-in's amr and auth_time carry through returning visits, the PKCE code and refreshes", async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    const u = await user(t);
    const jar = new Map<string, string>();
    const signedIn = await signIn(t, u.address, jar);
    expect(signedIn.status).toBe(303);
    const fragmentToken = (res: Response) =>
      new URLSearchParams(new URL(res.headers.get('location') as string).hash.slice(1)).get(
        'access_token',
      ) as string;
    const first = decodeJwt(fragmentToken(signedIn));
    expect(first).toMatchObject({ amr: ['pwd'], auth_time: first.iat });
    // As if the password had been typed an hour ago: nothing after it may move auth_time.
    const hourAgo = Date.now() - 3_600_000;
    await app.ctx.database.db
      .updateTable('sessions')
      .set({ authenticated_at: hourAgo })
      .where('id', '=', first.sid as string)
      .execute();
    const expected = { amr: ['pwd'], auth_time: Math.floor(hourAgo / 1000) };
    expect(decodeJwt(fragmentToken(await returning(t, jar)))).toMatchObject(expected);
    const redeemed = (await browserTokens(t, jar)) as {
      accessToken?: string;
      refreshToken: string;
    };
    expect(decodeJwt(redeemed.accessToken as string)).toMatchObject(expected);
    let refreshToken = redeemed.refreshToken;
    for (let i = 0; i < 2; i++) {
      const res = await app.request('/v1/client/token', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-latchkey-publishable-key': t.publishableKey,
          origin: ORIGIN,
        },
        body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: refreshToken }),
      });
      expect(res.status).toBe(200);
      const pair = (await res.json()) as { accessToken: string; refreshToken: string };
      refreshToken = pair.refreshToken;
      expect(decodeJwt(pair.accessToken)).toMatchObject(expected);
      const answer = await postJson(app, '/api/auth/introspect', t.secretKey, {
        token: pair.accessToken,
      });
      expect(await answer.json()).toMatchObject({ active: true, ...expected });
    }
  });

  it("a returning browser whose API session ended alone gets a new one: the hosted sign-in's amr and auth_time", async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    const u = await user(t);
    const jar = new Map<string, string>();
    const signedIn = await signIn(t, u.address, jar);
    const first = decodeJwt(
      new URLSearchParams(new URL(signedIn.headers.get('location') as string).hash.slice(1)).get(
        'access_token',
      ) as string,
    );
    const db = app.ctx.database.db;
    // The API session ends while the hosted one lives on (written directly: the service ends both).
    await db
      .updateTable('sessions')
      .set({ revoked_at: Date.now(), revoked_reason: 'revoked' })
      .where('id', '=', first.sid as string)
      .execute();
    const hosted = await db
      .updateTable('hosted_sessions')
      .set({ created_at: Date.now() - 3_600_000 })
      .where('session_id', '=', first.sid as string)
      .returning('created_at')
      .executeTakeFirstOrThrow();
    const back = await returning(t, jar);
    expect(back.status).toBe(303);
    const claims = decodeJwt(
      new URLSearchParams(new URL(back.headers.get('location') as string).hash.slice(1)).get(
        'access_token',
      ) as string,
    );
    expect(claims.sid).not.toBe(first.sid);
    // Nobody authenticated on this visit: how and when the hosted sign-in was made.
    expect(claims.amr).toEqual(['pwd']);
    expect(claims.auth_time).toBe(Math.floor(hosted.created_at / 1000));
  });

  it('disabling a user ends their hosted-page sign-in; enabling them does not revive it', async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    const u = await user(t);
    const jar = new Map<string, string>();
    expect((await signIn(t, u.address, jar)).status).toBe(303);
    const patch = (disabled: boolean) =>
      app.request(`/v1/users/${u.id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${t.secretKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ disabled }),
      });
    expect((await patch(true)).status).toBe(200);
    expect((await patch(false)).status).toBe(200);
    const back = await returning(t, jar);
    expect(back.status).toBe(200);
    expect(await back.text()).toContain('id="password"');
  });

  it('a returning browser whose link asks for a PKCE code gets one click, not a silent code', async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    const u = await user(t);
    const jar = new Map<string, string>();
    expect((await signIn(t, u.address, jar)).status).toBe(303);
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const q = `${query(t)}&code_challenge=${'A'.repeat(43)}&code_challenge_method=S256`;
    const ask = await app.request(`/sign-in?${q}`, { redirect: 'manual', headers: { cookie } });
    expect(ask.status).toBe(200);
    const html = await ask.text();
    expect(html).toContain(`Continue as ${u.address}`);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] as string;
    const setCookies = ask.headers.getSetCookie().map((c) => c.split(';')[0]);
    const go = await app.request(`/sign-in/continue?${q}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: [cookie, ...setCookies].join('; '),
      },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    expect(go.status).toBe(303);
    expect(go.headers.get('location')).toContain('code=');
    const other = await app.request(`/sign-in?${q}&prompt=login`, {
      redirect: 'manual',
      headers: { cookie },
    });
    expect(await other.text()).toContain('id="password"');
  });

  it('signs out only by a POST with CSRF; a GET just asks', async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    const u = await user(t);
    const jar = new Map<string, string>();
    const signedIn = await signIn(t, u.address, jar);
    expect(signedIn.status, (await signedIn.text()).slice(0, 600)).toBe(303);
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const ask = await app.request(`/sign-out?${query(t)}`, {
      redirect: 'manual',
      headers: { cookie },
    });
    expect(ask.status).toBe(200);
    const forged = await app.request(`/sign-out?${query(t)}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: '',
    });
    expect(forged.status).toBe(403);
    expect((await returning(t, jar)).status).toBe(303);
    // The confirmation page's own form signs out and goes back to the caller.
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await ask.text())?.[1] as string;
    // The browser keeps its CSRF cookie and the session cookie that the last visit rotated.
    for (const c of (await returning(t, jar)).headers.getSetCookie()) {
      const [k, v] = (c.split(';')[0] as string).split('=') as [string, string];
      jar.set(k, v);
    }
    const all = [...jar].map(([k, v]) => `${k}=${v}`);
    const out = await app.request(`/sign-out?${query(t)}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: all.join('; '),
      },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe(`${ORIGIN}/cb`);
    const after = await app.request(`/sign-in?${query(t)}`, {
      redirect: 'manual',
      headers: { cookie: all.join('; ') },
    });
    expect(after.status).toBe(200);
  });

  it('a password reset voids the other reset links', async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    const u = await user(t);
    const ask = async () => {
      const { cookie, csrf } = await openForm(`/forgot-password?${query(t)}`);
      await app.request(`/forgot-password?${query(t)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ _csrf: csrf, email: u.address }).toString(),
      });
    };
    await ask();
    await ask();
    // Mail is sent after the answer.
    const mails = await eventually(async () => {
      const sent = await readOutbox(app.ctx.database.db, { to: u.address });
      return sent.length === 2 ? sent : undefined;
    });
    const tokens = mails.map((m) => /token=([A-Za-z0-9_-]+)/.exec(m.body)?.[1] as string);
    expect(tokens).toHaveLength(2);
    const reset = async (token: string) => {
      const { status, cookie, csrf } = await openForm(`/reset-password?token=${token}`);
      if (status !== 200) return status;
      const res = await app.request('/reset-password', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({
          _csrf: csrf,
          token,
          password: 'a brand new passphrase',
        }).toString(),
      });
      return res.status;
    };
    expect(await reset(tokens[0] as string)).toBe(200);
    expect(await reset(tokens[1] as string)).toBe(400);
  });

  it('answers odd input on the pages with a 4xx page, never a 500', async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    expect((await app.request(`/sign-in?${query(t)}&state=%00`)).status).toBe(400);
    expect((await app.request('/reset-password?token=%00')).status).toBe(400);
  });

  it('browsers holding the public key cannot use up the tenant budget of its servers', async () => {
    const t = await app.tenant({ plan: 'free', allowedOrigins: [ORIGIN] });
    const junk = () =>
      app.request('/v1/client/token', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-latchkey-publishable-key': t.publishableKey,
          origin: ORIGIN,
        },
        body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: 'lkr_junk' }),
      });
    const statuses = (await Promise.all(Array.from({ length: 14 }, junk))).map((r) => r.status);
    expect(statuses).toContain(429);
    const server = await app.request('/v1/users?limit=1', {
      headers: { authorization: `Bearer ${t.secretKey}` },
    });
    expect(server.status).toBe(200);
  });
});
