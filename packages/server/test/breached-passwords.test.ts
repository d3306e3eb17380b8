/**
 * docs/design.md §13, breached passwords: sign-up (API and hosted page) and the
 * password reset refuse a password that a k-anonymity range API (Have I Been Pwned's format,
 * served here by a real HTTP server on loopback) or the bundled list of common passwords
 * knows; a range API that hangs or fails leaves the bundled list to decide, and is logged.
 */

import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/config.js';
import { readOutbox } from '../src/modules/email/index.js';
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
/** Not in the bundled list: only the range API knows it. */
const BREACHED = 'my breached passphrase 2019';
/** On a padding line (count 0) of the range API's answer: no breach. */
const PADDED = 'a padded-only passphrase 77';
/** In the bundled list (as "password1"), in any case. */
const COMMON = 'PassWord1';

const sha1 = (value: string) => createHash('sha1').update(value).digest('hex').toUpperCase();

/** Padding lines as the real API sends them: random suffixes, count 0. */
const padding = (n: number) =>
  Array.from(
    { length: n },
    () => `${randomBytes(18).toString('hex').slice(0, 35).toUpperCase()}:0`,
  );

type Mode = 'answer' | 'hang' | 'fail';

/** A range API on loopback, in Have I Been Pwned's format (CRLF, padded). */
async function rangeServer() {
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
  let mode: Mode = 'answer';
  const breached = sha1(BREACHED);
  const padded = sha1(PADDED);
  const server: Server = createServer((request, response) => {
    seen.push({ url: request.url ?? '', headers: request.headers });
    if (mode === 'hang') return; // never answers
    if (mode === 'fail') {
      response.writeHead(500, { 'content-type': 'text/plain' }).end('server error');
      return;
    }
    const prefix = /^\/range\/([0-9A-F]{5})$/.exec(request.url ?? '')?.[1];
    if (!prefix) {
      response.writeHead(400).end();
      return;
    }
    const lines = padding(40);
    if (breached.startsWith(prefix)) lines.push(`${breached.slice(5)}:3861`);
    if (padded.startsWith(prefix)) lines.push(`${padded.slice(5)}:0`);
    lines.push(...padding(40));
    response.writeHead(200, { 'content-type': 'text/plain' }).end(lines.join('\r\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    setMode(value: Mode) {
      mode = value;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each(DIALECTS)('breached passwords on %s', (dialect) => {
  let range: Awaited<ReturnType<typeof rangeServer>>;
  let app: TestApp;
  let t: TestTenant;

  beforeAll(async () => {
    range = await rangeServer();
    app = await startApp(dialect, { env: { LATCHKEY_BREACHED_PASSWORDS_URL: `${range.url}/` } });
    t = await app.tenant({ allowedOrigins: [ORIGIN] });
  });
  afterAll(async () => {
    await app?.dispose();
    await range?.close();
  });

  const signUp = (address: string, password: string) =>
    postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password });
  const userRow = (address: string) =>
    app.ctx.database.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', address)
      .executeTakeFirst();
  const query = () =>
    new URLSearchParams({ pk: t.publishableKey, redirect_url: `${ORIGIN}/cb` }).toString();

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

  async function postForm(path: string, form: Record<string, string>) {
    const { cookie, csrf } = await openForm(path);
    return app.request(path, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ _csrf: csrf, ...form }).toString(),
    });
  }

  it('API sign-up refuses a breached password with 422 password_breached; nothing is created', async () => {
    range.setMode('answer');
    const address = email('breached');
    const res = await signUp(address, BREACHED);
    expect(res.status).toBe(422);
    const body = await json(res);
    expect(body).toMatchObject({ code: 'validation_failed' });
    expect(body.errors).toEqual([
      expect.objectContaining({ path: '/password', code: 'password_breached' }),
    ]);
    expect(body.errors[0].message).toContain('known data breaches (3,861 times)');
    expect(body.errors[0].message).toContain('choose another one');
    expect(JSON.stringify(body)).not.toContain(BREACHED);
    expect(await userRow(address)).toBeUndefined();
  });

  it('sends the range API only the first 5 hex characters of the SHA-1, asking for padding', async () => {
    range.setMode('answer');
    const before = range.seen.length;
    await signUp(email('prefix'), BREACHED);
    const asked = range.seen.slice(before);
    expect(asked).toHaveLength(1);
    const digest = sha1(BREACHED);
    expect(asked[0]?.url).toBe(`/range/${digest.slice(0, 5)}`);
    expect(asked[0]?.headers['add-padding']).toBe('true');
    expect(JSON.stringify(asked[0])).not.toContain(digest.slice(5));
    expect(JSON.stringify(asked[0])).not.toContain(BREACHED);
  });

  it('accepts a password that the range API lists only on a padding line (count 0)', async () => {
    range.setMode('answer');
    const before = range.seen.length;
    const res = await signUp(email('padded'), PADDED);
    expect(res.status).toBe(201);
    expect(range.seen.slice(before)).toHaveLength(1);
    expect((await signUp(email('fine'), PASSWORD)).status).toBe(201);
  });

  it('refuses a common password from the bundled list without asking the range API', async () => {
    range.setMode('answer');
    const before = range.seen.length;
    const address = email('common');
    const res = await signUp(address, COMMON);
    expect(res.status).toBe(422);
    const body = await json(res);
    expect(body.errors[0]).toMatchObject({ path: '/password', code: 'password_breached' });
    expect(body.errors[0].message).toContain('one of the most common passwords');
    expect(range.seen.length).toBe(before);
    expect(await userRow(address)).toBeUndefined();
  });

  it('the hosted sign-up page refuses a breached password with 422; nothing is created', async () => {
    range.setMode('answer');
    const address = email('hosted');
    const res = await postForm(`/sign-up?${query()}`, { email: address, password: BREACHED });
    expect(res.status).toBe(422);
    const html = await res.text();
    expect(html).toContain('known data breaches (3,861 times)');
    expect(html).not.toContain(BREACHED);
    expect(await userRow(address)).toBeUndefined();
    // The same words for an address that has an account: the page tells nobody who has one.
    const owner = email('owner');
    expect((await signUp(owner, PASSWORD)).status).toBe(201);
    const taken = await postForm(`/sign-up?${query()}`, { email: owner, password: BREACHED });
    expect(taken.status).toBe(422);
    expect(await taken.text()).toContain('known data breaches (3,861 times)');
  });

  it('the reset page refuses a breached password with 422 and changes nothing', async () => {
    range.setMode('answer');
    const address = email('reset');
    expect((await signUp(address, PASSWORD)).status).toBe(201);
    const hashBefore = (await userRow(address))?.password_hash;
    const asked = await postForm(`/forgot-password?${query()}`, { email: address });
    expect(asked.status).toBe(200);
    const mail = await eventually(async () => {
      const sent = await readOutbox(app.ctx.database.db, { to: address });
      return sent[0];
    });
    const token = /reset-password\?token=([A-Za-z0-9_-]+)/.exec(mail.body)?.[1] as string;
    // The page's form carries the token in its body.
    const reset = (password: string) =>
      postForm(`/reset-password?token=${token}`, { token, password });
    const refused = await reset(BREACHED);
    expect(refused.status).toBe(422);
    const html = await refused.text();
    expect(html).toContain('known data breaches (3,861 times)');
    expect(html).not.toContain(BREACHED);
    expect((await userRow(address))?.password_hash).toBe(hashBefore);
    const common = await reset(COMMON);
    expect(common.status).toBe(422);
    expect(await common.text()).toContain('one of the most common passwords');
    expect((await userRow(address))?.password_hash).toBe(hashBefore);
    // The link still works for a good password.
    expect((await reset('a fresh unbreached passphrase')).status).toBe(200);
    expect((await userRow(address))?.password_hash).not.toBe(hashBefore);
  });

  it('a range API that never answers: sign-up goes on after the timeout, on the bundled list; logged', async () => {
    range.setMode('hang');
    try {
      const started = performance.now();
      const res = await signUp(email('hang'), BREACHED);
      const elapsed = performance.now() - started;
      // Unknown to the bundled list, so accepted once the range API is given up.
      expect(res.status).toBe(201);
      expect(elapsed).toBeGreaterThanOrEqual(1_900);
      expect(elapsed).toBeLessThan(5_000);
      const common = await signUp(email('hang-common'), COMMON);
      expect(common.status).toBe(422);
      expect((await json(common)).errors[0].code).toBe('password_breached');
      await expect
        .poll(() => app.logs.text())
        .toContain('breached-password range API failed; the bundled list');
      const logs = app.logs.text();
      expect(logs).not.toContain(BREACHED);
      expect(logs).not.toContain(sha1(BREACHED));
      expect(logs).not.toContain(sha1(BREACHED).slice(5));
    } finally {
      range.setMode('answer');
    }
  });

  it('a range API answering 500: the bundled list decides, and it is logged', async () => {
    range.setMode('fail');
    try {
      const before = app.logs.lines.length;
      const res = await signUp(email('fail'), BREACHED);
      expect(res.status).toBe(201);
      await expect
        .poll(() => app.logs.lines.slice(before).join(''))
        .toContain('the range API answered 500');
      const line = app.logs.lines
        .slice(before)
        .find((l) => l.includes('breached-password range API failed')) as string;
      expect(JSON.parse(line)).toMatchObject({ level: 40, prefix: sha1(BREACHED).slice(0, 5) });
      expect(line).not.toContain(sha1(BREACHED).slice(5));
      const common = await signUp(email('fail-common'), COMMON);
      expect(common.status).toBe(422);
    } finally {
      range.setMode('answer');
    }
  });
});

describe('breached passwords without a range API', () => {
  let app: TestApp;
  let t: TestTenant;

  beforeAll(async () => {
    app = await startApp('sqlite');
    t = await app.tenant({ allowedOrigins: [ORIGIN] });
  });
  afterAll(() => app?.dispose());

  it('LATCHKEY_BREACHED_PASSWORDS_URL must be an http(s) URL; its trailing slash is dropped', () => {
    const load = (url: string) =>
      loadConfig(
        { LATCHKEY_SECRET: 'x'.repeat(32), LATCHKEY_BREACHED_PASSWORDS_URL: url },
        { warn: () => {} },
      ).breachedPasswordsUrl;
    expect(load('https://range.example/v1/')).toBe('https://range.example/v1');
    expect(load('')).toBeUndefined();
    expect(() => load('range.example')).toThrow(ConfigError);
    expect(() => load('ftp://range.example')).toThrow(/must start with https:\/\/ or http:\/\//);
  });

  it('refuses the bundled list of common passwords (in any case), offline', async () => {
    expect(app.ctx.config.breachedPasswordsUrl).toBeUndefined();
    for (const password of [COMMON, 'password', 'BASEBALL', 'qwertyuiop', '1qaz2wsx']) {
      const res = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
        email: email('offline'),
        password,
      });
      expect(res.status, password).toBe(422);
      expect((await json(res)).errors[0]).toMatchObject({
        path: '/password',
        code: 'password_breached',
      });
    }
    const res = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
      email: email('offline'),
      password: BREACHED,
    });
    expect(res.status).toBe(201);
    expect(app.logs.text()).not.toContain('range API');
  });
});
