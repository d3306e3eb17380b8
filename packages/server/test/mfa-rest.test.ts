/**
 * Second factors over REST (docs/design.md §13): a team's own UI enrols an authenticator
 * app and recovery codes for a user, sign-in answers `403 mfa_required` with an `mfaToken`,
 * and `POST /v1/auth/sign-in/verify` finishes it. Codes come from otplib, an implementation
 * independent of the server's. Each attack of the issue is tried here.
 */
import { decodeJwt } from 'jose';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MfaPolicy } from '../src/config/defaults.js';
import { updateTenant } from '../src/modules/tenants/index.js';
import {
  type Body,
  DIALECTS,
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const PASSWORD = 'correct horse battery staple';
/** A code of the app `secret` for the 30-second step `offset` steps from now. */
const codeOf = (secret: string, offset = 0) =>
  generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + offset * 30 });

describe.each(DIALECTS)('second factors over REST on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;

  beforeAll(async () => {
    app = await startApp(dialect);
    t = await app.tenant();
  });
  afterAll(() => app.dispose());

  const call = (method: string, path: string, body?: unknown, key = t.secretKey) =>
    app.request(path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });

  async function problem(res: Response, status: number, code: string): Promise<Body> {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const doc = await json(res);
    expect(doc).toMatchObject({ status, code });
    return doc;
  }

  const policy = (mfaPolicy: MfaPolicy, tenant = t) =>
    updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, tenant.tenant.id, { mfaPolicy });

  async function newUser(tenant = t): Promise<{ id: string; email: string }> {
    const address = email('mfa');
    const res = await postJson(app, '/v1/auth/sign-up', tenant.secretKey, {
      email: address,
      password: PASSWORD,
    });
    expect(res.status).toBe(201);
    return { id: (await json(res)).userId, email: address };
  }

  /** A user with a confirmed authenticator app; the code that confirmed it is used up. */
  async function userWithApp(tenant = t) {
    const user = await newUser(tenant);
    const started = await call(
      'POST',
      `/v1/users/${user.id}/factors`,
      { type: 'totp' },
      tenant.secretKey,
    );
    expect(started.status).toBe(201);
    const factor = await json(started);
    const confirmed = await call(
      'POST',
      `/v1/users/${user.id}/factors/${factor.id}/confirm`,
      { code: codeOf(factor.secret) },
      tenant.secretKey,
    );
    expect(confirmed.status).toBe(200);
    return { ...user, secret: factor.secret as string, factorId: factor.id as string };
  }

  const signIn = (address: string, tenant = t) =>
    postJson(app, '/v1/auth/sign-in', tenant.secretKey, { email: address, password: PASSWORD });

  async function mfaTokenOf(address: string, tenant = t): Promise<string> {
    const doc = await problem(await signIn(address, tenant), 403, 'mfa_required');
    return doc.mfaToken;
  }

  const verify = (mfaToken: unknown, code: unknown, tenant = t) =>
    postJson(app, '/v1/auth/sign-in/verify', tenant.secretKey, { mfaToken, code });

  it('enrols an app: the secret and otpauth URI once, confirmed by a first code, listed without secrets', async () => {
    const user = await newUser();
    const res = await call('POST', `/v1/users/${user.id}/factors`, { type: 'totp' });
    expect(res.status).toBe(201);
    const factor = await json(res);
    expect(factor).toMatchObject({ type: 'totp', confirmed: false });
    expect(factor.secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(factor.otpauthUri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(uri.searchParams.get('secret')).toBe(factor.secret);
    expect(uri.searchParams.get('issuer')).toBe(t.tenant.name);
    expect(decodeURIComponent(uri.pathname)).toContain(user.email);

    // Not a factor yet: sign-in needs no code.
    expect((await signIn(user.email)).status).toBe(200);

    const wrong = await call('POST', `/v1/users/${user.id}/factors/${factor.id}/confirm`, {
      code: String((Number(codeOf(factor.secret)) + 1) % 1_000_000).padStart(6, '0'),
    });
    const refused = await problem(wrong, 422, 'validation_failed');
    expect(refused.errors[0]).toMatchObject({ path: '/code', code: 'code_invalid' });

    const ok = await call('POST', `/v1/users/${user.id}/factors/${factor.id}/confirm`, {
      code: codeOf(factor.secret),
    });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toMatchObject({ id: factor.id, type: 'totp', confirmed: true });

    const again = await call('POST', `/v1/users/${user.id}/factors/${factor.id}/confirm`, {
      code: codeOf(factor.secret, 1),
    });
    await problem(again, 409, 'conflict');

    const listed = await call('GET', `/v1/users/${user.id}/factors`);
    expect(listed.status).toBe(200);
    const text = await listed.text();
    expect(text).not.toContain(factor.secret);
    expect(JSON.parse(text).data).toEqual([
      expect.objectContaining({ id: factor.id, type: 'totp', confirmed: true }),
    ]);
  });

  it('signs in with password then code: amr pwd, otp, mfa in the token and in introspection', async () => {
    const user = await userWithApp();
    const doc = await problem(await signIn(user.email), 403, 'mfa_required');
    expect(doc.mfaToken).toMatch(/^lkm_/);
    expect(doc.factors).toEqual(['totp']);
    expect(JSON.stringify(doc)).not.toContain('accessToken');

    const res = await verify(doc.mfaToken, codeOf(user.secret, 1));
    expect(res.status).toBe(200);
    const tokens = await json(res);
    expect(tokens.user.id).toBe(user.id);
    const claims = decodeJwt(tokens.accessToken);
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(Math.abs(Number(claims.auth_time) - Date.now() / 1000)).toBeLessThan(10);

    const introspected = await json(
      await postJson(app, '/api/auth/introspect', t.secretKey, { token: tokens.accessToken }),
    );
    expect(introspected).toMatchObject({ active: true, amr: ['pwd', 'otp', 'mfa'] });

    // A refresh is no new authentication: the same amr and auth_time.
    const refreshed = await json(
      await postJson(app, '/v1/auth/token', t.secretKey, { refreshToken: tokens.refreshToken }),
    );
    expect(decodeJwt(refreshed.accessToken)).toMatchObject({
      amr: ['pwd', 'otp', 'mfa'],
      auth_time: claims.auth_time,
    });
  });

  it('refuses a code used before (replay), also on a new sign-in', async () => {
    const user = await userWithApp();
    const code = codeOf(user.secret, 1);
    expect((await verify(await mfaTokenOf(user.email), code)).status).toBe(200);
    await problem(await verify(await mfaTokenOf(user.email), code), 401, 'invalid_code');
    // The code that confirmed the app is used up as well.
    await problem(
      await verify(await mfaTokenOf(user.email), codeOf(user.secret)),
      401,
      'invalid_code',
    );
  });

  it('redeems an mfaToken once; never on another tenant; never after it expires', async () => {
    const user = await userWithApp();
    const token = await mfaTokenOf(user.email);
    const other = await app.tenant();
    await problem(await verify(token, codeOf(user.secret, 1), other), 401, 'invalid_mfa_token');
    expect((await verify(token, codeOf(user.secret, 1))).status).toBe(200);
    await problem(await verify(token, codeOf(user.secret, 1)), 401, 'invalid_mfa_token');

    const late = await mfaTokenOf(user.email);
    await app.ctx.database.db
      .updateTable('mfa_challenges')
      .set({ expires_at: Date.now() - 1 })
      .where('user_id', '=', user.id)
      .where('used_at', 'is', null)
      .execute();
    await problem(await verify(late, codeOf(user.secret, -1)), 401, 'invalid_mfa_token');
    await problem(await verify(`lkm_${'x'.repeat(43)}`, '123456'), 401, 'invalid_mfa_token');
  });

  it('two verifies of one token and code at once: one session, one refusal', async () => {
    const user = await userWithApp();
    const token = await mfaTokenOf(user.email);
    const code = codeOf(user.secret, 1);
    const results = await Promise.all([verify(token, code), verify(token, code)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
    const sessions = await json(await call('GET', `/v1/users/${user.id}/sessions`));
    expect(sessions.data).toHaveLength(1);
  });

  it('guessing: 5 wrong codes end the mfaToken (429), and the account allows 10 in all', async () => {
    const user = await userWithApp();
    const token = await mfaTokenOf(user.email);
    const right = codeOf(user.secret, 1);
    const wrong = String((Number(right) + 500_000) % 1_000_000).padStart(6, '0');
    for (let i = 1; i <= 4; i++) await problem(await verify(token, wrong), 401, 'invalid_code');
    await problem(await verify(token, wrong), 429, 'rate_limited');
    await problem(await verify(token, right), 401, 'invalid_mfa_token');

    const second = await mfaTokenOf(user.email);
    for (let i = 1; i <= 4; i++) await problem(await verify(second, wrong), 401, 'invalid_code');
    await problem(await verify(second, wrong), 429, 'rate_limited');
    // Ten wrong codes on the account: even a fresh mfaToken with the right code waits.
    const third = await mfaTokenOf(user.email);
    const held = await problem(await verify(third, right), 429, 'rate_limited');
    expect(held.detail).toMatch(/account/);
    expect((await verify(third, right)).headers.get('retry-after')).toMatch(/^\d+$/);
    // Written once, for the operator: the account is being guessed at.
    const audit = await app.ctx.database.db
      .selectFrom('audit_events')
      .select('kind')
      .where('user_id', '=', user.id)
      .where('kind', '=', 'second_factor_failures')
      .execute();
    expect(audit).toHaveLength(1);
  });

  it('guesses sent all at once are counted like guesses one by one: at most 5 tried', async () => {
    const user = await userWithApp();
    const token = await mfaTokenOf(user.email);
    const right = codeOf(user.secret, 1);
    const guesses = Array.from({ length: 20 }, (_, i) =>
      String((Number(right) + 1 + i) % 1_000_000).padStart(6, '0'),
    );
    const answers = await Promise.all(guesses.map((g) => verify(token, g).then(json)));
    const tried = answers.filter(
      (a) => a.code === 'invalid_code' || (a.code === 'rate_limited' && !/account/.test(a.detail)),
    );
    expect(tried.length).toBeLessThanOrEqual(5);
    expect(answers.every((a) => a.status === 401 || a.status === 429)).toBe(true);
    const row = await app.ctx.database.db
      .selectFrom('mfa_challenges')
      .select('attempts')
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(row.attempts).toBeLessThanOrEqual(5);
    const after = await verify(token, right);
    expect(after.status).toBeGreaterThanOrEqual(401);
    expect(after.status).not.toBe(200);
  });

  it('recovery codes: ten, each works once, new ones kill the old', async () => {
    const user = await userWithApp();
    const res = await call('POST', `/v1/users/${user.id}/recovery-codes`);
    expect(res.status).toBe(201);
    const { codes } = await json(res);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/);

    const doc = await problem(await signIn(user.email), 403, 'mfa_required');
    expect(doc.factors).toEqual(['totp', 'recovery_code']);
    // Typed in upper case with spaces: the same code.
    const typed = codes[0].toUpperCase().replace(/-/g, ' ');
    const ok = await verify(doc.mfaToken, typed);
    expect(ok.status).toBe(200);
    expect(decodeJwt((await json(ok)).accessToken).amr).toEqual(['pwd', 'otp', 'mfa']);
    await problem(await verify(await mfaTokenOf(user.email), codes[0]), 401, 'invalid_code');

    const listed = await json(await call('GET', `/v1/users/${user.id}/factors`));
    expect(listed.data).toContainEqual(
      expect.objectContaining({ id: 'recovery_code', type: 'recovery_code', remaining: 9 }),
    );

    const fresh = (await json(await call('POST', `/v1/users/${user.id}/recovery-codes`))).codes;
    await problem(await verify(await mfaTokenOf(user.email), codes[1]), 401, 'invalid_code');
    expect((await verify(await mfaTokenOf(user.email), fresh[1])).status).toBe(200);
  });

  it('offers recovery codes only while one is left, and an unconfirmed app is no factor', async () => {
    const user = await userWithApp();
    expect((await call('POST', `/v1/users/${user.id}/recovery-codes`)).status).toBe(201);
    const used = () =>
      app.ctx.database.db
        .updateTable('recovery_codes')
        .set({ used_at: Date.now() })
        .where('user_id', '=', user.id);
    await used().execute();
    expect((await problem(await signIn(user.email), 403, 'mfa_required')).factors).toEqual([
      'totp',
    ]);
    // A second app, enrolled but never confirmed, changes nothing.
    expect((await call('POST', `/v1/users/${user.id}/factors`, { type: 'totp' })).status).toBe(201);
    expect((await problem(await signIn(user.email), 403, 'mfa_required')).factors).toEqual([
      'totp',
    ]);
  });

  it('required: no token for a user without a factor until one is set up', async () => {
    const tenant = await app.tenant();
    await policy('required', tenant);
    const user = await newUser(tenant);
    const doc = await problem(await signIn(user.email, tenant), 403, 'mfa_setup_required');
    expect(doc.userId).toBe(user.id);
    expect(JSON.stringify(doc)).not.toMatch(/accessToken|refreshToken|mfaToken/);
    const sessions = await json(
      await call('GET', `/v1/users/${user.id}/sessions`, undefined, tenant.secretKey),
    );
    expect(sessions.data).toEqual([]);

    const started = await json(
      await call('POST', `/v1/users/${user.id}/factors`, { type: 'totp' }, tenant.secretKey),
    );
    await call(
      'POST',
      `/v1/users/${user.id}/factors/${started.id}/confirm`,
      { code: codeOf(started.secret) },
      tenant.secretKey,
    );
    const token = await mfaTokenOf(user.email, tenant);
    expect((await verify(token, codeOf(started.secret, 1), tenant)).status).toBe(200);
  });

  it('off: a user with an app signs in with the password alone', async () => {
    const tenant = await app.tenant();
    const user = await userWithApp(tenant);
    await policy('off', tenant);
    const res = await signIn(user.email, tenant);
    expect(res.status).toBe(200);
    expect(decodeJwt((await json(res)).accessToken).amr).toEqual(['pwd']);
  });

  it('a session from before the factor is refreshed without mfa in its amr', async () => {
    const user = await newUser();
    const before = await json(await signIn(user.email));
    const started = await json(
      await call('POST', `/v1/users/${user.id}/factors`, { type: 'totp' }),
    );
    await call('POST', `/v1/users/${user.id}/factors/${started.id}/confirm`, {
      code: codeOf(started.secret),
    });
    const refreshed = await json(
      await postJson(app, '/v1/auth/token', t.secretKey, { refreshToken: before.refreshToken }),
    );
    expect(decodeJwt(refreshed.accessToken).amr).toEqual(['pwd']);
  });

  it('an operator resets a lost device: the factor goes, the audit log says so', async () => {
    const user = await userWithApp();
    await call('POST', `/v1/users/${user.id}/recovery-codes`);
    const res = await call('DELETE', `/v1/users/${user.id}/factors/${user.factorId}`);
    expect(res.status).toBe(204);
    await problem(
      await call('DELETE', `/v1/users/${user.id}/factors/${user.factorId}`),
      404,
      'not_found',
    );
    // Recovery codes alone are no factor: the password signs in again.
    expect((await signIn(user.email)).status).toBe(200);
    expect((await call('DELETE', `/v1/users/${user.id}/factors/recovery_code`)).status).toBe(204);
    expect((await json(await call('GET', `/v1/users/${user.id}/factors`))).data).toEqual([]);
    const audit = await app.ctx.database.db
      .selectFrom('audit_events')
      .select(['kind', 'detail'])
      .where('user_id', '=', user.id)
      .where('kind', '=', 'factor_reset')
      .execute();
    expect(audit.map((a) => JSON.parse(a.detail).type).sort()).toEqual(['recovery_code', 'totp']);
  });

  it("keeps to the tenant: another tenant's key sees no such user", async () => {
    const user = await userWithApp();
    const other = await app.tenant();
    await problem(
      await call('GET', `/v1/users/${user.id}/factors`, undefined, other.secretKey),
      404,
      'not_found',
    );
    await problem(
      await call(
        'DELETE',
        `/v1/users/${user.id}/factors/${user.factorId}`,
        undefined,
        other.secretKey,
      ),
      404,
      'not_found',
    );
    await problem(
      await call('POST', `/v1/users/${user.id}/recovery-codes`, undefined, other.secretKey),
      404,
      'not_found',
    );
  });

  it.each([
    ['a number for the code (a wrong type)', { mfaToken: 'lkm_x', code: 123456 }, 400],
    ['no code', { mfaToken: 'lkm_x' }, 422],
    ['an extra field', { mfaToken: 'lkm_x', code: '123456', remember: true }, 422],
    ['a 10 KB code', { mfaToken: 'lkm_x', code: '1'.repeat(10_000) }, 422],
    ['a 10 KB token', { mfaToken: 'x'.repeat(10_000), code: '123456' }, 422],
  ])('verify with %s: a clear problem, nothing changes', async (_name, body, status) => {
    const res = await postJson(app, '/v1/auth/sign-in/verify', t.secretKey, body);
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('unicode digits and a wrong factor type are refused', async () => {
    const user = await userWithApp();
    const token = await mfaTokenOf(user.email);
    // Arabic-Indic digits look like a code but are none.
    await problem(await verify(token, '\u0661\u0662\u0663\u0664\u0665\u0666'), 401, 'invalid_code');
    expect((await verify(token, codeOf(user.secret, 1))).status).toBe(200);
    const res = await call('POST', `/v1/users/${user.id}/factors`, { type: 'sms' });
    expect(res.status).toBe(422);
    const fromPublishable = await postJson(app, '/v1/auth/sign-in/verify', t.publishableKey, {
      mfaToken: 'lkm_x',
      code: '123456',
    });
    expect(fromPublishable.status).toBe(403);
  });
});
