/**
 * The passkey ceremonies' rules and the attacks they must stand up to (docs/design.md §13),
 * on every database. Real credentials come from Chromium's virtual authenticator (the
 * DevTools protocol's WebAuthn domain) on the hosted pages; a forged assertion is a real
 * one altered here and signed again with the credential's own private key (which the
 * virtual authenticator hands out), so that only the altered part can be why it fails,
 * and the same assertion signed again unaltered is accepted (the control).
 */

import { createHash, createPrivateKey, type KeyObject, sign } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaults } from '../src/config/defaults.js';
import { updateTenant } from '../src/modules/tenants/index.js';
import { type CallerApp, HAVE_CHROMIUM, launchChromium, pkce, startCallerApp } from './browser.js';
import {
  type Body,
  DIALECTS,
  email,
  reservePort,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const PASSWORD = 'correct horse battery staple';
const ARTIFACTS = join(
  resolve(dirname(fileURLToPath(import.meta.url)), '../../..'),
  'test-artifacts',
);
mkdirSync(ARTIFACTS, { recursive: true });

/** A PublicKeyCredential's JSON (WebAuthn Level 3 `toJSON()`). */
interface CredentialJson {
  id: string;
  type: string;
  response: Record<string, string>;
  [more: string]: unknown;
}

/** What the page code below uses of the browser, typed just enough (no DOM lib here). */
interface Window {
  document: {
    querySelector(selector: string): { dataset: Record<string, string>; value: string } | null;
  };
  navigator: { credentials: { get(o: unknown): Promise<{ toJSON(): CredentialJson } | null> } };
  PublicKeyCredential: {
    parseRequestOptionsFromJSON(o: unknown): unknown;
    isConditionalMediationAvailable(): Promise<boolean>;
  };
}

/** Alters a real assertion and signs it again with the credential's own key. */
function resigned(
  credential: CredentialJson,
  key: KeyObject,
  change: { origin?: string; rpId?: string; counter?: number; flags?: (f: number) => number },
): CredentialJson {
  const client = JSON.parse(
    Buffer.from(credential.response.clientDataJSON as string, 'base64url').toString('utf8'),
  );
  if (change.origin) client.origin = change.origin;
  const clientData = Buffer.from(JSON.stringify(client));
  const auth = Buffer.from(credential.response.authenticatorData as string, 'base64url');
  // WebAuthn Level 3 section 6.1: rpIdHash (32 bytes), flags (1), signCount (4, big-endian).
  if (change.rpId) createHash('sha256').update(change.rpId).digest().copy(auth, 0);
  if (change.flags) auth[32] = change.flags(auth[32] as number);
  if (change.counter !== undefined) auth.writeUInt32BE(change.counter, 33);
  const signed = Buffer.concat([auth, createHash('sha256').update(clientData).digest()]);
  return {
    ...credential,
    response: {
      ...credential.response,
      clientDataJSON: clientData.toString('base64url'),
      authenticatorData: auth.toString('base64url'),
      // Ed25519 signs the message itself; ES256 and RS256 its SHA-256.
      signature: sign(key.asymmetricKeyType === 'ed25519' ? null : 'sha256', signed, key).toString(
        'base64url',
      ),
    },
  };
}

describe.skipIf(!HAVE_CHROMIUM).each(DIALECTS)('passkey ceremonies on %s', (dialect) => {
  let app: TestApp;
  let base: string;
  let caller: CallerApp;
  let browser: Browser;
  let t: TestTenant;
  let other: TestTenant;
  /** A user of `t` with a passkey in `page`'s authenticator. */
  let context: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;
  let userId: string;

  const db = () => app.ctx.database.db;
  /** The hosted request of `tenant` as a query string. */
  const query = (tenant: TestTenant, extra: Record<string, string> = {}) =>
    new URLSearchParams({
      pk: tenant.publishableKey,
      redirect_url: `${caller.origin}/callback`,
      ...extra,
    }).toString();
  const hosted = (tenant: TestTenant, path: string, extra: Record<string, string> = {}) =>
    `${base}${path}?${query(tenant, extra)}`;

  /** A page with a virtual platform authenticator, without passkey autofill. */
  async function authenticatorPage(): Promise<{
    context: BrowserContext;
    page: Page;
    cdp: CDPSession;
    authenticatorId: string;
  }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    // The virtual authenticator would answer the sign-in page's conditional request at once.
    await page.addInitScript(() => {
      (globalThis as unknown as Window).PublicKeyCredential.isConditionalMediationAvailable =
        async () => false;
    });
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    return { context, page, cdp, authenticatorId };
  }

  async function signUp(p: Page, tenant: TestTenant): Promise<string> {
    const address = email('passkey');
    await p.goto(hosted(tenant, '/sign-up'));
    await p.fill('#email', address);
    await p.fill('#password', PASSWORD);
    await Promise.all([
      p.waitForURL(`${caller.origin}/callback#*`),
      p.click('button[type=submit]'),
    ]);
    return decodeJwt(new URLSearchParams(new URL(p.url()).hash.slice(1)).get('access_token') ?? '')
      .sub as string;
  }

  /**
   * A real assertion for a challenge of `tenant`'s sign-in page, made by the page's
   * authenticator and not sent yet.
   */
  async function assertion(
    p: Page,
    tenant = t,
    extra: Record<string, string> = {},
  ): Promise<CredentialJson> {
    await p.goto(hosted(tenant, '/sign-in', { prompt: 'login', ...extra }));
    return p.evaluate(async () => {
      const w = globalThis as unknown as Window;
      const d = w.document.querySelector('[data-passkey]')?.dataset ?? {};
      const res = await fetch(d.options as string, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': d.csrf as string },
        body: '{}',
      });
      const publicKey = w.PublicKeyCredential.parseRequestOptionsFromJSON(await res.json());
      const credential = await w.navigator.credentials.get({ publicKey });
      return credential?.toJSON() as CredentialJson;
    });
  }

  /** POSTs JSON from the page (its cookies, its CSRF token) to one of its passkey endpoints. */
  function send(
    p: Page,
    endpoint: 'options' | 'verify',
    body: unknown,
  ): Promise<{ status: number; body: Body }> {
    return p.evaluate(
      async ({ endpoint, body }) => {
        const d =
          (globalThis as unknown as Window).document.querySelector('[data-passkey]')?.dataset ?? {};
        const res = await fetch(d[endpoint] as string, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': d.csrf as string },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as Body };
      },
      { endpoint, body },
    );
  }

  /** The credential's private key, as the virtual authenticator keeps it. */
  async function privateKey(): Promise<KeyObject> {
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    const [credential] = credentials;
    if (!credential) throw new Error('the virtual authenticator holds no credential');
    return createPrivateKey({
      key: Buffer.from(credential.privateKey, 'base64'),
      format: 'der',
      type: 'pkcs8',
    });
  }

  const sessionsOf = async (id: string) =>
    (
      await db()
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', id)
        .where('revoked_at', 'is', null)
        .execute()
    ).length;
  const passkeysOf = async (id: string) =>
    db().selectFrom('passkeys').selectAll().where('user_id', '=', id).execute();

  beforeAll(async () => {
    [caller, browser] = await Promise.all([startCallerApp(), launchChromium()]);
    const socket = reservePort();
    base = `http://localhost:${socket.address().port}`;
    app = await startApp(dialect, { socket, env: { PUBLIC_URL: base } });
    t = await app.tenant({ allowedOrigins: [caller.origin] });
    other = await app.tenant({ allowedOrigins: [caller.origin] });
    ({ context, page, cdp, authenticatorId } = await authenticatorPage());
    userId = await signUp(page, t);
    await page.goto(hosted(t, '/account'));
    await Promise.all([
      page.waitForURL(/done=passkey-added/),
      page.click('button:has-text("Add a passkey")'),
    ]);
    expect(await passkeysOf(userId)).toHaveLength(1);
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await app?.dispose();
    await caller?.close();
  });

  it('sends a browser without the page session from /account to sign in, and back', async () => {
    const res = await app.request(`/account?${query(t)}`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/sign-in?${query(t)}&return_to=account`);
  });

  it('serves the script for good under its digest, and refuses ceremony calls from elsewhere or without the page token', async () => {
    const html = await (await app.request(`/sign-in?${query(t)}`)).text();
    const src = /<script src="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(src).toMatch(/^\/passkeys\.js\?v=[\w-]{16}$/);
    const script = await app.request(src);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await app.request('/passkeys.js?v=old')).headers.get('cache-control')).toBe('no-cache');

    const challenges = async () =>
      (await db().selectFrom('passkey_challenges').select('hash').execute()).length;
    const before = await challenges();
    const options = `/sign-in/passkey/options?${query(t)}`;
    const json = { 'content-type': 'application/json' };
    const noToken = await app.request(options, { method: 'POST', headers: json, body: '{}' });
    expect(noToken.status).toBe(403);
    const foreign = await app.request(options, {
      method: 'POST',
      headers: { ...json, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      body: '{}',
    });
    expect(foreign.status).toBe(403);
    expect(await challenges()).toBe(before);
  });

  it('accepts an assertion once: the same one sent again (a replayed challenge) is refused', async () => {
    const credential = await assertion(page);
    const first = await send(page, 'verify', credential);
    expect(first.status).toBe(200);
    expect(first.body.location).toMatch(new RegExp(`^${caller.origin}/callback#access_token=`));
    const before = await sessionsOf(userId);
    const again = await send(page, 'verify', credential);
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('invalid_credentials');
    expect(again.body.location).toBeUndefined();
    expect(await sessionsOf(userId)).toBe(before);
  });

  it('hands out a PKCE code when the link asks for one, redeemed for a session with amr mfa', async () => {
    const { verifier, challenge } = pkce();
    const credential = await assertion(page, t, {
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const signedIn = await send(page, 'verify', credential);
    expect(signedIn.status).toBe(200);
    const code = new URLSearchParams(new URL(signedIn.body.location).hash.slice(1)).get('code');
    const res = await app.request('/v1/client/token', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-latchkey-publishable-key': t.publishableKey,
        origin: caller.origin,
      },
      body: JSON.stringify({ grant_type: 'authorization_code', code, code_verifier: verifier }),
    });
    expect(res.status).toBe(200);
    const tokens = (await res.json()) as Body;
    expect(decodeJwt(tokens.accessToken).amr).toEqual(['hwk', 'user', 'mfa']);
  });

  it('refuses an assertion for another origin or RP id, or without user verification; the same signed again unaltered passes', async () => {
    const key = await privateKey();
    const forged = {
      origin: { origin: base.replace('localhost', 'evil.localhost') },
      'RP id': { rpId: 'evil.localhost' },
      'no user verification (UV flag off)': { flags: (f: number) => f & ~0x04 },
      'no user presence (UP flag off)': { flags: (f: number) => f & ~0x01 },
    };
    for (const [name, change] of Object.entries(forged)) {
      const genuine = await assertion(page);
      const refused = await send(page, 'verify', resigned(genuine, key, change));
      expect([name, refused.status, refused.body.code]).toEqual([name, 401, 'invalid_credentials']);
      // A forged response spends no challenge: the genuine one still signs in.
      expect([name, (await send(page, 'verify', genuine)).status]).toEqual([name, 200]);
    }
    const control = await send(page, 'verify', resigned(await assertion(page), key, {}));
    expect(control.status).toBe(200);
    // The log says why each was refused.
    const logged = app.logs.text();
    expect(logged).toContain('Unexpected authentication response origin');
    expect(logged).toContain('Unexpected RP ID hash');
    expect(logged).toContain('User verification required');
    expect(logged).toContain('User not present');
  });

  it('refuses a signature counter that goes backwards (a cloned authenticator)', async () => {
    const key = await privateKey();
    expect((await send(page, 'verify', await assertion(page))).status).toBe(200);
    const [stored] = await passkeysOf(userId);
    const counter = Number(stored?.counter);
    expect(counter).toBeGreaterThan(0);
    const behind = await send(
      page,
      'verify',
      resigned(await assertion(page), key, { counter: counter - 1 }),
    );
    expect(behind.status).toBe(401);
    expect(Number((await passkeysOf(userId))[0]?.counter)).toBe(counter);
  });

  it("refuses a credential on another tenant's sign-in page (the RP id is shared, the credential is not)", async () => {
    // The browser offers the credential there: every tenant's pages are on {auth_url}.
    const credential = await assertion(page, other);
    const refused = await send(page, 'verify', credential);
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toContain('not registered for this application');
  });

  it('refuses an assertion whose user handle names another user', async () => {
    const credential = await assertion(page);
    const otherUser = Buffer.from('00000000-0000-4000-8000-000000000000').toString('base64url');
    const refused = await send(page, 'verify', {
      ...credential,
      response: { ...credential.response, userHandle: otherUser },
    });
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toBe('This passkey does not belong to its account.');
  });

  it('refuses a disabled user, and opens no session', async () => {
    const patch = (disabled: boolean) =>
      app.request(`/v1/users/${userId}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${t.secretKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ disabled }),
      });
    expect((await patch(true)).status).toBe(200);
    const before = await sessionsOf(userId);
    const refused = await send(page, 'verify', await assertion(page));
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toBe('This account is disabled.');
    expect(await sessionsOf(userId)).toBe(before);
    expect((await patch(false)).status).toBe(200);
    expect((await send(page, 'verify', await assertion(page))).status).toBe(200);
  });

  it('hides passkeys on a tenant that turned them off, and refuses their ceremonies there', async () => {
    const switchTo = (passkeysEnabled: boolean) =>
      updateTenant({ db: db(), bus: app.ctx.bus }, t.tenant.id, { passkeysEnabled });
    const genuine = await assertion(page);
    await switchTo(false);
    try {
      const res = await app.request(`/sign-in?${query(t)}`);
      const html = await res.text();
      expect(html).not.toContain('data-passkey');
      expect(html).not.toContain('<script');
      expect(html).toContain('autocomplete="username"');
      expect(res.headers.get('content-security-policy')).not.toContain('script-src');
      // Sent from a page loaded before the switch: refused, and no session.
      const before = await sessionsOf(userId);
      const refused = await send(page, 'verify', genuine);
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toBe('Passkeys are off for this application.');
      expect((await send(page, 'options', {})).status).toBe(403);
      expect(await sessionsOf(userId)).toBe(before);
      await page.goto(hosted(t, '/account'));
      expect(await page.locator('#passkeys-heading').count()).toBe(0);
    } finally {
      await switchTo(true);
    }
    expect((await send(page, 'verify', await assertion(page))).status).toBe(200);
  });

  it('refuses a registration response sent twice', async () => {
    const fresh = await authenticatorPage();
    try {
      await signUp(fresh.page, t);
      await fresh.page.goto(hosted(t, '/account'));
      const made = await fresh.page.evaluate(async () => {
        const w = globalThis as unknown as Window & {
          PublicKeyCredential: { parseCreationOptionsFromJSON(o: unknown): unknown };
          navigator: { credentials: { create(o: unknown): Promise<{ toJSON(): unknown }> } };
        };
        const d = w.document.querySelector('[data-passkey]')?.dataset ?? {};
        const res = await fetch(d.options as string, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': d.csrf as string },
          body: '{}',
        });
        const publicKey = w.PublicKeyCredential.parseCreationOptionsFromJSON(await res.json());
        return (await w.navigator.credentials.create({ publicKey })).toJSON();
      });
      expect((await send(fresh.page, 'verify', made)).status).toBe(200);
      const again = await send(fresh.page, 'verify', made);
      expect(again.status).toBe(401);
    } finally {
      await fresh.context.close();
    }
  });

  const emailOf = async (id: string) =>
    (await db().selectFrom('users').select('email').where('id', '=', id).executeTakeFirstOrThrow())
      .email;

  /** Password on the hosted sign-in page of `p`, up to the second step's page. */
  async function passwordToVerify(p: Page, address: string) {
    await p.goto(hosted(t, '/sign-in', { prompt: 'login' }));
    await p.fill('#email', address);
    await p.fill('#password', PASSWORD);
    await Promise.all([p.waitForURL(/\/sign-in\/verify\?/), p.click('button[type=submit]')]);
  }

  it('a passkey is a second factor: listed over REST, asked for after the password, not over REST', async () => {
    const address = await emailOf(userId);
    const rest = await app.request('/v1/auth/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.secretKey}` },
      body: JSON.stringify({ email: address, password: PASSWORD }),
    });
    expect(rest.status).toBe(403);
    const problem = (await rest.json()) as Body;
    expect(problem).toMatchObject({ code: 'mfa_required', factors: ['passkey'] });
    expect(problem.detail).toContain('hosted sign-in page');
    const listed = await app.request(`/v1/users/${userId}/factors`, {
      headers: { authorization: `Bearer ${t.secretKey}` },
    });
    const [passkey] = await passkeysOf(userId);
    expect(((await listed.json()) as Body).data).toEqual([
      expect.objectContaining({ id: passkey?.id, type: 'passkey', confirmed: true }),
    ]);

    const before = await sessionsOf(userId);
    await passwordToVerify(page, address);
    expect(await page.isVisible('#code')).toBe(false);
    expect(await sessionsOf(userId)).toBe(before);
    await Promise.all([
      page.waitForURL(`${caller.origin}/callback#*`),
      page.click('button:has-text("Use your passkey")'),
    ]);
    const claims = decodeJwt(
      new URLSearchParams(new URL(page.url()).hash.slice(1)).get('access_token') ?? '',
    );
    expect(claims).toMatchObject({ sub: userId, amr: ['pwd', 'hwk', 'user', 'mfa'] });
  });

  it("refuses another account's passkey as the second step, and opens no session", async () => {
    const intruder = await authenticatorPage();
    try {
      const intruderId = await signUp(intruder.page, t);
      await intruder.page.goto(hosted(t, '/account'));
      await Promise.all([
        intruder.page.waitForURL(/done=passkey-added/),
        intruder.page.click('button:has-text("Add a passkey")'),
      ]);
      // The intruder knows the victim's password, not their passkey.
      const before = await sessionsOf(userId);
      await passwordToVerify(intruder.page, await emailOf(userId));
      const options = await send(intruder.page, 'options', {});
      expect(options.status).toBe(200);
      const own = await intruder.page.evaluate(async (o) => {
        const w = globalThis as unknown as Window;
        const publicKey = w.PublicKeyCredential.parseRequestOptionsFromJSON(o);
        return (await w.navigator.credentials.get({ publicKey }))?.toJSON() as CredentialJson;
      }, options.body);
      const refused = await send(intruder.page, 'verify', own);
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toContain('another account');
      expect(await sessionsOf(userId)).toBe(before);
      expect(await sessionsOf(intruderId)).toBe(1);
    } finally {
      await intruder.context.close();
    }
  });

  it('passkeys turned off never drop a passkey as the second factor: no token for the password alone', async () => {
    const deps = { db: db(), bus: app.ctx.bus };
    await updateTenant(deps, t.tenant.id, { passkeysEnabled: false });
    try {
      const address = await emailOf(userId);
      const rest = await app.request('/v1/auth/sign-in', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t.secretKey}` },
        body: JSON.stringify({ email: address, password: PASSWORD }),
      });
      expect(rest.status).toBe(403);
      expect(((await rest.json()) as Body).factors).toEqual(['passkey']);
      const before = await sessionsOf(userId);
      await passwordToVerify(page, address);
      expect(await page.textContent('main')).toContain('passkeys are turned off here');
      expect(await page.isVisible('button:has-text("Use your passkey")')).toBe(false);
      expect(await sessionsOf(userId)).toBe(before);
    } finally {
      await updateTenant(deps, t.tenant.id, { passkeysEnabled: true });
    }
  });

  it('required: a passkey counts (no setup), and the last one cannot be removed on /account', async () => {
    const deps = { db: db(), bus: app.ctx.bus };
    await updateTenant(deps, t.tenant.id, { mfaPolicy: 'required' });
    try {
      await passwordToVerify(page, await emailOf(userId));
      await Promise.all([
        page.waitForURL(`${caller.origin}/callback#*`),
        page.click('button:has-text("Use your passkey")'),
      ]);
      await page.goto(hosted(t, '/account'));
      await page.click('button:has-text("Remove")');
      await page.waitForLoadState();
      expect(await page.textContent('[role=alert]')).toContain('last second factor');
      expect(await passkeysOf(userId)).toHaveLength(1);
    } finally {
      await updateTenant(deps, t.tenant.id, { mfaPolicy: 'optional' });
    }
  });

  it('needs a sign-in within 10 minutes to add or remove a passkey; renaming does not; signing in again allows it', async () => {
    const [passkey] = await passkeysOf(userId);
    // This browser's hosted session started 11 minutes ago.
    await db()
      .updateTable('hosted_sessions')
      .set({ created_at: Date.now() - defaults.mfa.stepUpMs - 60_000 })
      .where('user_id', '=', userId)
      .execute();
    await page.goto(hosted(t, '/account'));
    expect(await page.isVisible('text=sign in again')).toBe(true);
    if (dialect === 'sqlite')
      await page.screenshot({ path: join(ARTIFACTS, 'account-stale.png'), fullPage: true });
    expect(await page.locator('button:has-text("Remove")').count()).toBe(0);
    expect(await page.locator('[data-passkey]').count()).toBe(0);
    expect(await page.locator('script').count()).toBe(0);
    // Sent as the page would, with its cookies and token (the page itself may not fetch:
    // without the passkey script its CSP has no connect-src).
    const csrf = await page.inputValue('input[name=_csrf]');
    const cookie = (await context.cookies(base)).map((c) => `${c.name}=${c.value}`).join('; ');
    const post = async (path: string, body: string, type: string) => {
      const res = await app.request(path, {
        method: 'POST',
        headers: { 'content-type': type, 'x-csrf-token': csrf, cookie, origin: base },
        body,
      });
      return { status: res.status, text: await res.text() };
    };
    const adding = await post(`/account/passkeys/options?${query(t)}`, '{}', 'application/json');
    expect(adding.status).toBe(403);
    expect(JSON.parse(adding.text).detail).toContain('sign in again');
    const form = 'application/x-www-form-urlencoded';
    const removing = await post(`/account/passkeys/${passkey?.id}/remove?${query(t)}`, '', form);
    expect(removing.status).toBe(403);
    expect(removing.text).toContain('To remove a passkey, sign in again');
    expect(await passkeysOf(userId)).toHaveLength(1);
    const renaming = await post(
      `/account/passkeys/${passkey?.id}/rename?${query(t)}`,
      'name=Work+laptop',
      form,
    );
    expect(renaming.status).toBe(200);
    expect((await passkeysOf(userId))[0]?.name).toBe('Work laptop');

    // The page's link signs in again and comes back to /account, where removing works.
    await page.click('text=sign in again');
    await page.fill('#password', PASSWORD);
    await page.fill(
      '#email',
      (
        await db()
          .selectFrom('users')
          .select('email')
          .where('id', '=', userId)
          .executeTakeFirstOrThrow()
      ).email,
    );
    // The password alone is not enough now: the passkey is the second step.
    await Promise.all([page.waitForURL(/\/sign-in\/verify\?/), page.click('button[type=submit]')]);
    await Promise.all([
      page.waitForURL(/\/account\?/),
      page.click('button:has-text("Use your passkey")'),
    ]);
    await Promise.all([
      page.waitForURL(/done=passkey-removed/),
      page.click('button:has-text("Remove")'),
    ]);
    expect(await passkeysOf(userId)).toHaveLength(0);
  });
});
