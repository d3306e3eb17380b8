/**
 * Retention: rows past use are deleted, live ones kept, and two instances purging at the
 * same moment only share the work, on every database.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaults } from '../src/config/defaults.js';
import { purgeExpired } from '../src/modules/retention/index.js';
import { startBrowserSession } from '../src/modules/sessions/index.js';
import {
  DIALECTS,
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from './support.js';

const PASSWORD = 'correct horse battery staple';
const DAY = 24 * 60 * 60_000;

for (const dialect of DIALECTS) {
  describe(`retention (${dialect})`, () => {
    let app: TestApp;
    let t: TestTenant;

    beforeAll(async () => {
      app = await startApp(dialect);
      t = await app.tenant();
    });
    afterAll(() => app.dispose());

    it('deletes what no one can use any more and keeps the rest', async () => {
      const db = app.ctx.database.db;
      const now = Date.now();
      const address = email();
      const { userId } = await json(
        await postJson(app, '/v1/auth/sign-up', t.secretKey, {
          email: address,
          password: PASSWORD,
        }),
      );
      const signIn = async () =>
        json(
          await postJson(app, '/v1/auth/sign-in', t.secretKey, {
            email: address,
            password: PASSWORD,
          }),
        );
      const live = await signIn();
      const ended = await signIn();
      const rotated = await json(
        await postJson(app, '/v1/auth/token', t.secretKey, { refreshToken: live.refreshToken }),
      );
      // The session revoked long ago, and the refresh token used a week and a day ago.
      await db
        .updateTable('sessions')
        .set({ revoked_at: now - 31 * DAY })
        .where('id', '=', ended.sessionId)
        .execute();
      await db
        .updateTable('refresh_tokens')
        .set({ used_at: now - 8 * DAY })
        .where('session_id', '=', live.sessionId)
        .where('used_at', 'is not', null)
        .execute();
      await startBrowserSession(db, t.tenant.id, userId);
      await startBrowserSession(db, t.tenant.id, userId);
      await db
        .updateTable('hosted_sessions')
        .set({ revoked_at: now - 2 * DAY })
        .where('tenant_id', '=', t.tenant.id)
        .execute();
      await startBrowserSession(db, t.tenant.id, userId);
      const rows = (times: number[], row: (at: number, i: number) => object) =>
        times.map((at, i) => row(at, i));
      const old = now - 2 * DAY;
      await db
        .insertInto('auth_codes')
        .values(
          rows([old, now + 60_000], (at) => ({
            hash: randomUUID(),
            tenant_id: t.tenant.id,
            session_id: live.sessionId,
            code_challenge: 'x',
            redirect_origin: 'http://localhost:5173',
            created_at: at - 60_000,
            expires_at: at,
            used_at: null,
          })) as never,
        )
        .execute();
      await db
        .insertInto('email_tokens')
        .values(
          rows([old, now + DAY], (at) => ({
            hash: randomUUID(),
            tenant_id: t.tenant.id,
            user_id: userId,
            purpose: 'reset',
            return_to: null,
            created_at: at - DAY,
            expires_at: at,
            used_at: null,
          })) as never,
        )
        .execute();
      await db
        .insertInto('mail_outbox')
        .values(
          rows([now - 8 * DAY, now], (at) => ({
            id: randomUUID(),
            tenant_id: t.tenant.id,
            recipient: address,
            subject: 's',
            body: 'b',
            created_at: at,
          })) as never,
        )
        .execute();
      await db
        .insertInto('oauth_flows')
        .values(
          rows([now - 2 * DAY, now + 60_000], (at) => ({
            state: randomUUID(),
            tenant_id: t.tenant.id,
            provider: 'google',
            nonce: 'n',
            code_verifier: 'v',
            hosted_query: '',
            created_at: at - 60_000,
            expires_at: at,
            used_at: null,
          })) as never,
        )
        .execute();

      await db
        .insertInto('mfa_challenges')
        .values(
          rows([old, now + 60_000], (at) => ({
            hash: randomUUID(),
            tenant_id: t.tenant.id,
            user_id: userId,
            amr: '["pwd"]',
            channel: 'server',
            attempts: 0,
            created_at: at - 60_000,
            expires_at: at,
            used_at: null,
          })) as never,
        )
        .execute();

      await db
        .insertInto('passkey_challenges')
        .values(
          rows([old, now + 60_000], (at) => ({
            hash: randomUUID(),
            tenant_id: t.tenant.id,
            user_id: null,
            purpose: 'authenticate',
            created_at: at - 60_000,
            expires_at: at,
            used_at: null,
          })) as never,
        )
        .execute();

      // The OpenID Provider's records (docs/design.md §14): a spent code, a live grant, and
      // one without an end; the same id under two models is two rows (composite key).
      await db
        .insertInto('oauth_artifacts')
        .values(
          [
            ['AuthorizationCode', 'same-id', old],
            ['Grant', 'same-id', now + 60_000],
            ['Session', 'other', null],
          ].map(([model, id, at]) => ({
            tenant_id: t.tenant.id,
            model: model as string,
            id: id as string,
            payload: '{}',
            grant_id: null,
            uid: null,
            client_id: null,
            session_id: null,
            expires_at: at as number | null,
            consumed_at: null,
            created_at: now - 3 * DAY,
          })),
        )
        .execute();

      // Two instances at once, one in small batches.
      await Promise.all([
        purgeExpired(db),
        purgeExpired(db, Date.now(), { ...defaults.retention, batchSize: 1 }),
      ]);

      const count = async (table: 'sessions' | 'hosted_sessions' | 'mail_outbox' | 'oauth_flows') =>
        (
          await db
            .selectFrom(table)
            .select('tenant_id')
            .where('tenant_id', '=', t.tenant.id)
            .execute()
        ).length;
      const sessionIds = (
        await db.selectFrom('sessions').select('id').where('tenant_id', '=', t.tenant.id).execute()
      ).map((r) => r.id);
      expect(sessionIds).toEqual([live.sessionId]);
      const tokens = await db
        .selectFrom('refresh_tokens')
        .select(['session_id', 'used_at'])
        .where('tenant_id', '=', t.tenant.id)
        .execute();
      expect(tokens).toEqual([{ session_id: live.sessionId, used_at: null }]);
      expect(await count('hosted_sessions')).toBe(1);
      expect(await count('mail_outbox')).toBe(1);
      expect(await count('oauth_flows')).toBe(1);
      const artifacts = await db
        .selectFrom('oauth_artifacts')
        .select(['model', 'id'])
        .where('tenant_id', '=', t.tenant.id)
        .orderBy('model')
        .execute();
      expect(artifacts).toEqual([
        { model: 'Grant', id: 'same-id' },
        { model: 'Session', id: 'other' },
      ]);
      for (const table of [
        'auth_codes',
        'email_tokens',
        'mfa_challenges',
        'passkey_challenges',
      ] as const) {
        const left = await db
          .selectFrom(table)
          .select('expires_at')
          .where('tenant_id', '=', t.tenant.id)
          .execute();
        expect(left.map((r) => r.expires_at > now)).toEqual([true]);
      }
      // What was kept still works.
      const again = await postJson(app, '/v1/auth/token', t.secretKey, {
        refreshToken: rotated.refreshToken,
      });
      expect(again.status).toBe(200);
    });
  });
}
