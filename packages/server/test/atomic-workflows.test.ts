/**
 * Each multi-write workflow runs in one transaction: a write that fails halfway (a real
 * database trigger raises an error) leaves nothing half-written, on every database.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hostedDeps } from '../src/http/context.js';
import { readOutbox } from '../src/modules/email/index.js';
import {
  checkHostedRequest,
  completePasswordReset,
  redeemCode,
  requestPasswordReset,
  signInBrowser,
  signInWithProvider,
  signUpInBrowser,
  verifyEmail,
} from '../src/modules/hosted/index.js';
import { startBrowserSession } from '../src/modules/sessions/index.js';
import { linkIdentity, type Profile, unlinkIdentity } from '../src/modules/social/index.js';
import { findUserByEmail, getUser } from '../src/modules/users/index.js';
import type { DialectName } from '../src/storage/index.js';
import {
  DIALECTS,
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const ORIGIN = 'http://localhost:5173';
const PASSWORD = 'correct horse battery staple';

/** Makes every `event` (INSERT or UPDATE) on `table` fail, until `heal`. */
async function breakWrites(app: TestApp, dialect: DialectName, event: string, table: string) {
  const db = app.ctx.database.db;
  if (dialect === 'sqlite') {
    await sql
      .raw(
        `create trigger lk_fail before ${event} on ${table} begin select raise(abort, 'injected failure'); end`,
      )
      .execute(db);
  } else {
    await sql
      .raw(
        `create or replace function lk_fail() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger lk_fail before ${event} on ${table} for each row execute function lk_fail()`,
      )
      .execute(db);
  }
  return async () => {
    await sql
      .raw(dialect === 'sqlite' ? 'drop trigger lk_fail' : `drop trigger lk_fail on ${table}`)
      .execute(db);
  };
}

for (const dialect of DIALECTS) {
  describe(`workflows are all or nothing (${dialect})`, () => {
    let app: TestApp;
    let t: TestTenant;
    let heal: (() => Promise<void>) | undefined;

    beforeAll(async () => {
      app = await startApp(dialect);
      t = await app.tenant({ allowedOrigins: [ORIGIN] });
    });
    afterEach(async () => {
      await heal?.();
      heal = undefined;
    });
    afterAll(() => app.dispose());

    const fail = async (event: string, table: string) => {
      heal = await breakWrites(app, dialect, event, table);
    };
    const signUp = async (tenant = t) => {
      const address = email();
      const res = await postJson(app, '/v1/auth/sign-up', tenant.secretKey, {
        email: address,
        password: PASSWORD,
      });
      return { address, id: (await json(res)).userId as string };
    };
    const signIn = (address: string) =>
      postJson(app, '/v1/auth/sign-in', t.secretKey, { email: address, password: PASSWORD });
    const sessions = async (userId: string) =>
      (
        await json(
          await app.request(`/v1/users/${userId}/sessions`, {
            headers: { authorization: `Bearer ${t.secretKey}` },
          }),
        )
      ).data as { revokedAt: string | null }[];
    const hosted = (tenant = t) =>
      checkHostedRequest(app.ctx, { pk: tenant.publishableKey, redirect_url: `${ORIGIN}/cb` });

    it('sign-in: no session without its refresh token', async () => {
      const u = await signUp();
      await fail('insert', 'refresh_tokens');
      expect((await signIn(u.address)).status).toBe(500);
      expect(await sessions(u.id)).toEqual([]);
    });

    it('refresh: the old token stays unused when the new one cannot be written', async () => {
      const u = await signUp();
      const { refreshToken } = await json(await signIn(u.address));
      await fail('insert', 'refresh_tokens');
      expect((await postJson(app, '/v1/auth/token', t.secretKey, { refreshToken })).status).toBe(
        500,
      );
      await heal?.();
      heal = undefined;
      expect((await postJson(app, '/v1/auth/token', t.secretKey, { refreshToken })).status).toBe(
        200,
      );
    });

    /** Makes the signing key unreadable: a failure that comes after the claim of old. */
    const hideSigningKeys = async () => {
      const db = app.ctx.database.db;
      await sql.raw('alter table signing_keys rename to signing_keys_away').execute(db);
      // The signing key is kept in memory for a few seconds: forget it, so that it must be read.
      await app.ctx.bus.publish(`signing-key:${t.tenant.id}/hidden`);
      heal = async () => {
        await sql.raw('alter table signing_keys_away rename to signing_keys').execute(db);
      };
    };

    it('refresh: a token that cannot be signed leaves the refresh token usable (no theft alarm)', async () => {
      const u = await signUp();
      const { refreshToken } = await json(await signIn(u.address));
      await hideSigningKeys();
      expect((await postJson(app, '/v1/auth/token', t.secretKey, { refreshToken })).status).toBe(
        500,
      );
      await heal?.();
      heal = undefined;
      const retry = await postJson(app, '/v1/auth/token', t.secretKey, { refreshToken });
      expect(retry.status).toBe(200);
      expect((await sessions(u.id)).map((s) => s.revokedAt)).toEqual([null]);
    });

    it('code redemption: a code whose tokens cannot be signed stays redeemable', async () => {
      const u = await signUp();
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const h = await checkHostedRequest(app.ctx, {
        pk: t.publishableKey,
        redirect_url: `${ORIGIN}/cb`,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      const user = await getUser(app.ctx.database.db, t.tenant.id, u.id);
      const deps = hostedDeps(app.ctx);
      const { location } = await signInBrowser(
        deps,
        h,
        user,
        {
          ip: '127.0.0.4',
          previousCookie: undefined,
        },
        ['pwd'],
      );
      const code = new URLSearchParams(new URL(location).hash.slice(1)).get('code') as string;
      const input = { code, codeVerifier: verifier, origin: ORIGIN };
      await hideSigningKeys();
      await expect(redeemCode(deps, t.tenant, input)).rejects.toThrow();
      await heal?.();
      heal = undefined;
      expect((await redeemCode(deps, t.tenant, input))?.refreshToken).toMatch(/^lkr_/);
      expect((await sessions(u.id)).map((s) => s.revokedAt)).toEqual([null]);
    });

    it('sign out everywhere: API sessions stay live when the browser sessions cannot end', async () => {
      const u = await signUp();
      await signIn(u.address);
      await startBrowserSession(app.ctx.database.db, t.tenant.id, u.id);
      await fail('update', 'hosted_sessions');
      const res = await app.request(`/v1/users/${u.id}/sessions`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${t.secretKey}` },
      });
      expect(res.status).toBe(500);
      expect((await sessions(u.id)).map((s) => s.revokedAt)).toEqual([null]);
    });

    it('disable: the user stays enabled when their sessions cannot be revoked', async () => {
      const u = await signUp();
      await signIn(u.address);
      await fail('update', 'sessions');
      const res = await app.request(`/v1/users/${u.id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${t.secretKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ disabled: true, roles: ['admin'] }),
      });
      expect(res.status).toBe(500);
      const user = await getUser(app.ctx.database.db, t.tenant.id, u.id);
      expect(user.disabled).toBe(false);
      expect(user.roles).toEqual([]);
    });

    it('hosted sign-up: no user without the sessions that sign them in', async () => {
      const address = email();
      await fail('insert', 'hosted_sessions');
      await expect(
        signUpInBrowser(hostedDeps(app.ctx), await hosted(), {
          email: address,
          password: PASSWORD,
          ip: '127.0.0.1',
          previousCookie: undefined,
        }),
      ).rejects.toThrow(/injected failure/);
      expect(await findUserByEmail(app.ctx.database.db, t.tenant.id, address)).toBeUndefined();
    });

    it('verify e-mail: the link stays usable when the address cannot be marked', async () => {
      const v = await app.tenant({ allowedOrigins: [ORIGIN], requireEmailVerification: true });
      const address = email();
      const deps = hostedDeps(app.ctx);
      await signUpInBrowser(deps, await hosted(v), {
        email: address,
        password: PASSWORD,
        ip: '127.0.0.2',
        previousCookie: undefined,
      });
      const [mail] = await readOutbox(app.ctx.database.db, { to: address });
      const token = /token=([A-Za-z0-9_-]+)/.exec(mail?.body ?? '')?.[1] as string;
      await fail('update', 'users');
      await expect(verifyEmail(deps, token)).rejects.toThrow(/injected failure/);
      await heal?.();
      heal = undefined;
      expect((await verifyEmail(deps, token)).ok).toBe(true);
    });

    it('password reset: nothing changes when the browsers cannot be signed out', async () => {
      const u = await signUp();
      await signIn(u.address);
      await startBrowserSession(app.ctx.database.db, t.tenant.id, u.id);
      const deps = hostedDeps(app.ctx);
      await requestPasswordReset(deps, await hosted(), {
        email: u.address,
        ip: '127.0.0.3',
        onMailError: () => {},
      });
      let body = '';
      while (!body)
        body = (await readOutbox(app.ctx.database.db, { to: u.address }))[0]?.body ?? '';
      const token = /token=([A-Za-z0-9_-]+)/.exec(body)?.[1] as string;
      await fail('update', 'hosted_sessions');
      const next = 'a brand new passphrase';
      await expect(completePasswordReset(deps, { token, password: next })).rejects.toThrow(
        /injected failure/,
      );
      await heal?.();
      heal = undefined;
      // The old password still works, the sessions live, and the link still works once.
      expect((await signIn(u.address)).status).toBe(200);
      expect((await sessions(u.id)).every((s) => s.revokedAt === null)).toBe(true);
      expect((await completePasswordReset(deps, { token, password: next })).ok).toBe(true);
      expect((await signIn(u.address)).status).toBe(401);
    });
    const profile = (address: string): Profile => ({
      issuer: 'https://accounts.google.com',
      subject: randomUUID(),
      email: address,
      emailVerified: true,
      name: null,
      picture: null,
    });
    const count = async (
      table: 'identities' | 'audit_events' | 'hosted_sessions',
      userId: string,
    ) =>
      (
        await app.ctx.database.db
          .selectFrom(table)
          .select('user_id')
          .where('user_id', '=', userId)
          .execute()
      ).length;
    const browser = { ip: '127.0.0.4', previousCookie: undefined };

    it('social sign-up: no user without their identity and its audit record', async () => {
      const address = email();
      const p = profile(address);
      await fail('insert', 'audit_events');
      await expect(
        signInWithProvider(hostedDeps(app.ctx), await hosted(), 'google', p, browser),
      ).rejects.toThrow(/injected failure/);
      expect(await findUserByEmail(app.ctx.database.db, t.tenant.id, address)).toBeUndefined();
      const identities = app.ctx.database.db.selectFrom('identities').selectAll();
      expect(await identities.where('subject', '=', p.subject).execute()).toEqual([]);
    });

    it('social sign-up: no user without the sessions that sign them in', async () => {
      const address = email();
      await fail('insert', 'hosted_sessions');
      await expect(
        signInWithProvider(
          hostedDeps(app.ctx),
          await hosted(),
          'google',
          profile(address),
          browser,
        ),
      ).rejects.toThrow(/injected failure/);
      expect(await findUserByEmail(app.ctx.database.db, t.tenant.id, address)).toBeUndefined();
    });

    it('link: no identity without its audit record', async () => {
      const u = await signUp();
      await fail('insert', 'audit_events');
      const deps = { db: app.ctx.database.db, bus: app.ctx.bus };
      await expect(
        linkIdentity(deps, t.tenant.id, u.id, 'google', profile(u.address)),
      ).rejects.toThrow(/injected failure/);
      expect(await count('identities', u.id)).toBe(0);
    });

    it('unlink: the identity stays when its removal cannot be recorded', async () => {
      const u = await signUp();
      const deps = { db: app.ctx.database.db, bus: app.ctx.bus };
      const linked = await linkIdentity(deps, t.tenant.id, u.id, 'google', profile(u.address));
      const audits = await count('audit_events', u.id);
      await fail('insert', 'audit_events');
      await expect(unlinkIdentity(deps, t.tenant.id, u.id, linked.id)).rejects.toThrow(
        /injected failure/,
      );
      expect(await count('identities', u.id)).toBe(1);
      expect(await count('audit_events', u.id)).toBe(audits);
    });

    const verifier = randomBytes(32).toString('base64url');
    const withCode = async () => ({
      ...(await hosted()),
      codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    });

    it('hosted sign-in with a PKCE code: no session without its code', async () => {
      const u = await signUp();
      const user = await getUser(app.ctx.database.db, t.tenant.id, u.id);
      await fail('insert', 'auth_codes');
      await expect(
        signInBrowser(hostedDeps(app.ctx), await withCode(), user, browser, ['pwd']),
      ).rejects.toThrow(/injected failure/);
      expect(await sessions(u.id)).toEqual([]);
      expect(await count('hosted_sessions', u.id)).toBe(0);
    });

    it('redeem a code: the code stays unused when the refresh token cannot be written', async () => {
      const u = await signUp();
      const user = await getUser(app.ctx.database.db, t.tenant.id, u.id);
      const deps = hostedDeps(app.ctx);
      const signedIn = await signInBrowser(deps, await withCode(), user, browser, ['pwd']);
      const code = new URLSearchParams(new URL(signedIn.location).hash.slice(1)).get('code');
      const input = { code: code as string, codeVerifier: verifier, origin: ORIGIN };
      await fail('insert', 'refresh_tokens');
      await expect(redeemCode(deps, t.tenant, input)).rejects.toThrow(/injected failure/);
      await heal?.();
      heal = undefined;
      expect((await redeemCode(deps, t.tenant, input))?.refreshToken).toBeTruthy();
    });
  });
}
