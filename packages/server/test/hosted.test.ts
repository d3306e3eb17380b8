/** Hosted-page rules checked over plain HTTP (the browser suite covers the journeys). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOutbox } from '../src/modules/email/index.js';
import { updateTenant } from '../src/modules/tenants/index.js';
import { openDatabase } from '../src/storage/index.js';
import { email, postJson, startApp, type TestApp, type TestTenant } from './support.js';

const ORIGIN = 'http://localhost:5173';
const PASSWORD = 'correct horse battery staple';

describe('hosted pages over HTTP', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startApp('sqlite');
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

  it('without SMTP_URL, mail goes to the dev outbox and the log never holds its link', async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    const u = await user(t);
    const page = await app.request(`/forgot-password?${query(t)}`);
    const cookie = page.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] as string;
    const res = await app.request(`/forgot-password?${query(t)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ _csrf: csrf, email: u.address }).toString(),
    });
    expect(res.status).toBe(200);
    const mails = await readOutbox(app.ctx.database.db, { to: u.address });
    expect(mails).toHaveLength(1);
    const token = /reset-password\?token=([A-Za-z0-9_-]+)/.exec(
      mails[0]?.body ?? '',
    )?.[1] as string;
    expect(token).toBeTruthy();
    expect(app.logs.text()).toContain('mail kept in the dev outbox');
    expect(app.logs.text()).not.toContain(token);
    const link = await app.request(`/reset-password?token=${token}`);
    expect(link.status).toBe(200);
    expect(app.logs.text()).not.toContain(token);
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

  it('refuses password forms when the tenant turned password sign-in off', async () => {
    const t = await app.tenant({ allowedOrigins: [ORIGIN] });
    const u = await user(t);
    // Written from another connection, as the CLI would.
    const other = openDatabase(app.ctx.config.databaseUrl);
    await updateTenant(other.db, t.tenant.id, { passwordEnabled: false });
    await other.close();
    expect((await signIn(t, u.address, new Map())).status).toBe(403);
    expect((await app.request(`/sign-up?${query(t)}`)).status).toBe(403);
  });
});
