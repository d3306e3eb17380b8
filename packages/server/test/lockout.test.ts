/**
 * One address cannot lock an account for everyone else (README "Sign-in failures"), with
 * the default policy: one address is stopped by the per-address and per-account-and-address
 * limits; only failures from many addresses at once make the account ask a new address for
 * proof (a link mailed to its owner), never refuse its owner outright.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaults } from '../src/config/defaults.js';
import { createAdmin } from '../src/modules/admin/index.js';
import { readOutbox } from '../src/modules/email/index.js';
import { ADMIN_PASSWORD, AdminClient } from './admin-support.js';
import {
  DIALECTS,
  email,
  eventually,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const ORIGIN = 'http://localhost:5173';
const PASSWORD = 'correct horse battery staple';
const { account, accountAddress } = defaults.signInFailures;

describe.each(DIALECTS)('sign-in failures on %s (default policy)', (dialect) => {
  let app: TestApp;
  let t: TestTenant;

  beforeAll(async () => {
    // The default policy, except that slowed attempts do not really wait.
    app = await startApp(dialect, {
      signInPolicy: { ...defaults.signInFailures, wait: async () => {} },
    });
    t = await app.tenant({ allowedOrigins: [ORIGIN] });
  });
  afterAll(() => app.dispose());

  const query = () =>
    new URLSearchParams({ pk: t.publishableKey, redirect_url: `${ORIGIN}/cb` }).toString();

  /** A hosted page with a form: its answer, and a POST to `action` with its CSRF token. */
  async function openForm(path: string) {
    const page = await app.request(path);
    const html = await page.text();
    const cookie = page.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const post = (action: string, fields: Record<string, string>) =>
      app.request(action, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ _csrf: csrf, ...fields }),
      });
    return { status: page.status, html, post };
  }

  /** A form of the hosted pages, filled and sent. */
  const sendForm = async (path: string, fields: Record<string, string>) =>
    (await openForm(path)).post(path, fields);

  /** The hosted sign-in form, from this test's one address (127.0.0.1). */
  const hostedSignIn = (address: string, password: string) =>
    sendForm(`/sign-in?${query()}`, { email: address, password });

  /** A sign-in relayed by the customer's server, with the end user's address. */
  const restSignIn = (address: string, password: string, ip: string) =>
    app.request('/v1/auth/sign-in', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${t.secretKey}`,
        'content-type': 'application/json',
        'latchkey-client-ip': ip,
      },
      body: JSON.stringify({ email: address, password }),
    });

  async function newUser(): Promise<string> {
    const address = email('owner');
    const res = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
      email: address,
      password: PASSWORD,
    });
    expect(res.status).toBe(201);
    return address;
  }

  /** `challengeAfter` failures, `perAddress` from each address of `net` (a /24). */
  async function failFromMany(owner: string, net: string): Promise<void> {
    for (let n = 0; n < account.challengeAfter; n++) {
      const ip = `${net}.${1 + Math.floor(n / account.perAddress)}`;
      expect((await restSignIn(owner, 'not my password', ip)).status).toBe(401);
    }
  }

  const mailsTo = (address: string) => readOutbox(app.ctx.database.db, { to: address });

  it('12 wrong hosted sign-ins from one address stop that address, not the owner at theirs', async () => {
    const owner = await newUser();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++)
      statuses.push((await hostedSignIn(owner, 'not my password')).status);
    expect(statuses).toEqual([
      ...Array(accountAddress.refuseAfter).fill(401),
      ...Array(12 - accountAddress.refuseAfter).fill(429),
    ]);
    // The owner, from an address the account never used: signed in.
    const res = await restSignIn(owner, PASSWORD, '198.51.100.23');
    expect(res.status).toBe(200);
    expect((await json(res)).accessToken).toBeTruthy();
    // The guessing address stays stopped, right password or not.
    expect((await hostedSignIn(owner, PASSWORD)).status).toBe(429);
    expect((await restSignIn(owner, PASSWORD, '127.0.0.1')).status).toBe(429);
  });

  it('failures from many addresses: a new address must prove it is the owner, by a mailed link', async () => {
    const owner = await newUser();
    // As many as the account allows, each address well under its own limit.
    await failFromMany(owner, '203.0.113');
    const before = (await mailsTo(owner)).length;

    // Right password or not, a new address gets the same answer, and learns nothing.
    const wrong = await restSignIn(owner, 'not my password', '198.51.100.50');
    const right = await restSignIn(owner, PASSWORD, '198.51.100.51');
    for (const res of [wrong, right]) expect(res.status).toBe(403);
    const [wrongBody, rightBody] = [await json(wrong), await json(right)];
    expect(rightBody).toEqual(wrongBody);
    expect(rightBody.code).toBe('confirmation_required');

    // Only the right password sent its owner a link, for that address (after the answer).
    const mails = await eventually(async () => {
      const sent = await mailsTo(owner);
      return sent.length > before ? sent : undefined;
    });
    expect(mails).toHaveLength(before + 1);
    const mail = mails[0];
    expect(mail?.subject).toBe(`Confirm a sign-in to ${t.tenant.name}`);
    expect(mail?.body).toContain('198.51.100.51');
    expect(mail?.body).not.toContain('198.51.100.50');
    const token = /confirm-address\?token=([A-Za-z0-9_-]+)/.exec(mail?.body ?? '')?.[1] as string;

    // Opening the link changes nothing (mail scanners open links); its button does.
    const page = await openForm(`/confirm-address?token=${token}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('198.51.100.51');
    expect((await restSignIn(owner, PASSWORD, '198.51.100.51')).status).toBe(403);
    const confirm = () => page.post('/confirm-address', { token });
    const confirmed = await confirm();
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain('can sign in to your account now');

    // That address signs in; another new one is still asked; the link works once.
    expect((await restSignIn(owner, PASSWORD, '198.51.100.51')).status).toBe(200);
    expect((await restSignIn(owner, PASSWORD, '198.51.100.52')).status).toBe(403);
    expect((await confirm()).status).toBe(400);
  });

  const linkOf = (body: string | undefined, path: string) =>
    new RegExp(`${path}\\?token=([A-Za-z0-9_-]+)`).exec(body ?? '')?.[1] as string;

  it("the owner's proof cannot be worn out: resets others ask for, retries, an old link", async () => {
    const owner = await newUser();
    await failFromMany(owner, '198.18.0');
    // Anyone may ask for password resets: they use up the reset mails, not this one's.
    for (let i = 0; i < 3; i++)
      expect((await sendForm(`/forgot-password?${query()}`, { email: owner })).status).toBe(200);
    await eventually(async () => ((await mailsTo(owner)).length >= 3 ? true : undefined));
    const resets = await mailsTo(owner);
    // The owner tries again and again from their new address before reading the mail.
    for (let i = 0; i < accountAddress.refuseAfter; i++)
      expect((await restSignIn(owner, PASSWORD, '198.51.100.60')).status).toBe(403);
    const { addressMailPerRecipient } = defaults.hosted.limits;
    const links = await eventually(async () => {
      const sent = (await mailsTo(owner)).slice(0, -resets.length);
      return sent.length === addressMailPerRecipient.quota
        ? sent.map((m) => linkOf(m.body, 'confirm-address'))
        : undefined;
    });
    const [first, second] = links as [string, string];
    expect((await app.request(`/confirm-address?token=${first}`)).status).toBe(200);
    expect((await sendForm(`/confirm-address?token=${first}`, { token: first })).status).toBe(200);
    // Its tries while it waited no longer count against it.
    expect((await restSignIn(owner, PASSWORD, '198.51.100.60')).status).toBe(200);

    // A link still unused when the password changes dies with the old password, even on a
    // page opened before.
    const page = await openForm(`/confirm-address?token=${second}`);
    const resetToken = linkOf(resets[0]?.body, 'reset-password');
    const reset = await sendForm(`/reset-password?token=${resetToken}`, {
      token: resetToken,
      password: 'a brand new passphrase 77',
    });
    expect(reset.status).toBe(200);
    const late = await page.post('/confirm-address', { token: second });
    expect(late.status).toBe(400);
  });

  it('the hosted page asks for proof with a page, and the link leads back to signing in there', async () => {
    const owner = await newUser();
    await failFromMany(owner, '192.0.2');
    const asked = await hostedSignIn(owner, PASSWORD);
    expect(asked.status).toBe(403);
    const html = await asked.text();
    expect(html).toContain('Confirm it is you');
    expect(html).not.toContain(owner);
    const mail = await eventually(async () => (await mailsTo(owner))[0]);
    const token = /confirm-address\?token=([A-Za-z0-9_-]+)/.exec(mail?.body ?? '')?.[1] as string;
    const page = await openForm(`/confirm-address?token=${token}`);
    const confirmed = await page.post('/confirm-address', { token });
    const back = await confirmed.text();
    expect(back).toContain(`href="/sign-in?${query().replaceAll('&', '&amp;')}"`);
    const signedIn = await hostedSignIn(owner, PASSWORD);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toContain('access_token=');
  });
});

describe('admin sign-in failures (default policy, addresses through TRUST_PROXY)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startApp('sqlite', {
      env: { TRUST_PROXY: '127.0.0.1' },
      signInPolicy: { ...defaults.signInFailures, wait: async () => {} },
    });
  });
  afterAll(() => app.dispose());

  it('12 wrong passwords from one address stop that address, not the admin at theirs', async () => {
    const admin = email('ops');
    await createAdmin(
      { db: app.ctx.database.db, hasher: app.ctx.hasher },
      { email: admin, password: ADMIN_PASSWORD, superuser: true, tenantIds: [] },
    );
    const from = (ip: string) => {
      const client = new AdminClient(app);
      return (password: string) =>
        client
          .get('/admin/sign-in')
          .then(() =>
            client.post(
              '/admin/sign-in',
              { email: admin, password, next: '/admin/tenants' },
              { 'x-forwarded-for': ip },
            ),
          );
    };
    const guesser = from('192.0.2.66');
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await guesser('not the password')).status);
    expect(statuses).toEqual([
      ...Array(accountAddress.refuseAfter).fill(401),
      ...Array(12 - accountAddress.refuseAfter).fill(429),
    ]);
    expect((await guesser(ADMIN_PASSWORD)).status).toBe(429);
    const signedIn = await from('198.51.100.9')(ADMIN_PASSWORD);
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe('/admin/tenants');
  });

  it('failures from many addresses hold every new address, past its share too; a /64 is one address', async () => {
    const admin = email('ops');
    await createAdmin(
      { db: app.ctx.database.db, hasher: app.ctx.hasher },
      { email: admin, password: ADMIN_PASSWORD, superuser: true, tenantIds: [] },
    );
    const attempt = async (ip: string, password: string) => {
      const client = new AdminClient(app);
      await client.get('/admin/sign-in');
      const res = await client.post(
        '/admin/sign-in',
        { email: admin, password, next: '/admin/tenants' },
        { 'x-forwarded-for': ip },
      );
      return res.status;
    };
    for (let n = 0; n < account.challengeAfter; n++)
      expect(await attempt(`203.0.113.${1 + Math.floor(n / account.perAddress)}`, 'nope')).toBe(
        401,
      );
    // A new address, again and again, past the part of its attempts the account counts.
    for (let n = 0; n < account.perAddress + 2; n++)
      expect(await attempt('198.51.100.77', ADMIN_PASSWORD)).toBe(429);
    // Addresses of one IPv6 /64 are one address.
    const other = email('ops');
    await createAdmin(
      { db: app.ctx.database.db, hasher: app.ctx.hasher },
      { email: other, password: ADMIN_PASSWORD, superuser: true, tenantIds: [] },
    );
    const statuses: number[] = [];
    for (let n = 1; n <= accountAddress.refuseAfter + 1; n++) {
      const client = new AdminClient(app);
      await client.get('/admin/sign-in');
      const res = await client.post(
        '/admin/sign-in',
        { email: other, password: 'nope', next: '/admin/tenants' },
        { 'x-forwarded-for': `2001:db8:5:6::${n.toString(16)}` },
      );
      statuses.push(res.status);
    }
    expect(statuses.at(-1)).toBe(429);
  });
});
