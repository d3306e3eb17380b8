import { createHash, createPublicKey } from 'node:crypto';
import {
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaults } from '../src/config/defaults.js';
import { createKey } from '../src/modules/keys/index.js';
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
const INACTIVE = '{"active":false}';

describe.each(DIALECTS)('sessions, tokens and introspection on %s', (dialect) => {
  let app: TestApp;
  let t: TestTenant;
  let other: TestTenant;

  beforeAll(async () => {
    app = await startApp(dialect);
    t = await app.tenant();
    other = await app.tenant();
  });
  afterAll(() => app.dispose());

  async function user(tenant = t) {
    const address = email();
    const res = await postJson(app, '/v1/auth/sign-up', tenant.secretKey, {
      email: address,
      password: PASSWORD,
    });
    expect(res.status).toBe(201);
    return { email: address, id: (await json(res)).userId as string };
  }

  async function signIn(address: string, tenant = t, password = PASSWORD) {
    return postJson(app, '/v1/auth/sign-in', tenant.secretKey, { email: address, password });
  }

  async function session(tenant = t) {
    const u = await user(tenant);
    const res = await signIn(u.email, tenant);
    expect(res.status).toBe(200);
    const body = await json(res);
    return body as Body & { user: { id: string; email: string } };
  }

  async function introspect(token: unknown, key = t.secretKey) {
    const res = await postJson(app, '/api/auth/introspect', key, { token });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    return res.text();
  }

  /** A token signed with the tenant's real signing key, with chosen claims. */
  async function forge(claims: JWTPayload, header: Record<string, unknown> = {}, tenant = t) {
    const { kid, key } = await app.ctx.signingKeys.active(tenant.tenant.id);
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      email: 'x@example.com',
      tid: tenant.tenant.id,
      sid: 'none',
      roles: [],
      scope: 's',
      ...claims,
    })
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid, ...header })
      .setIssuer(`${app.ctx.authUrl}/t/${tenant.tenant.id}`)
      .setSubject((claims.sub as string) ?? 'nobody')
      .setIssuedAt((claims.iat as number) ?? now)
      .setExpirationTime((claims.exp as number) ?? now + 600)
      .setJti('jti')
      .sign(key);
  }

  describe('sign-in', () => {
    it('returns an RS256 at+jwt access token with exactly the contract claims, and a refresh token', async () => {
      const s = await session();
      expect(s).toMatchObject({
        tokenType: 'Bearer',
        expiresIn: 600,
        sessionId: expect.any(String),
      });
      expect(s.user).toMatchObject({
        id: s.user.id,
        email: s.user.email,
        roles: [],
        disabled: false,
      });
      expect(s.user).not.toHaveProperty('passwordHash');
      expect(s.refreshToken).toMatch(/^lkr_[A-Za-z0-9_-]{43}$/);
      const header = decodeProtectedHeader(s.accessToken);
      expect(header).toEqual({ alg: 'RS256', typ: 'at+jwt', kid: expect.any(String) });
      const jwks = createRemoteJWKSet(new URL(`${app.url}/t/${t.tenant.id}/.well-known/jwks.json`));
      const { payload } = await jwtVerify(s.accessToken, jwks, {
        issuer: `${app.ctx.authUrl}/t/${t.tenant.id}`,
        typ: 'at+jwt',
        algorithms: ['RS256'],
      });
      expect(Object.keys(payload).sort()).toEqual([
        'amr',
        'aud',
        'auth_time',
        'client_id',
        'email',
        'exp',
        'iat',
        'iss',
        'jti',
        'roles',
        'scope',
        'sid',
        'sub',
        'tid',
      ]);
      expect(payload).toMatchObject({
        sub: s.user.id,
        email: s.user.email,
        tid: t.tenant.id,
        sid: s.sessionId,
        roles: [],
        // RFC 9068 section 2.2, with the documented defaults.
        aud: `${app.ctx.authUrl}/t/${t.tenant.id}/api`,
        client_id: t.tenant.id,
        // RFC 8176: a password; auth_time the sign-in, in seconds.
        amr: ['pwd'],
        auth_time: payload.iat,
      });
      expect(typeof payload.scope).toBe('string');
      expect((payload.exp as number) - (payload.iat as number)).toBe(600);
    });

    it("names the tenant's own audience once it sets one, and refuses a bad one", async () => {
      const api = await app.tenant();
      const { updateTenant } = await import('../src/modules/tenants/index.js');
      await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, api.tenant.id, {
        audience: 'https://api.example.com',
      });
      const s = await session(api);
      const jwks = createRemoteJWKSet(
        new URL(`${app.url}/t/${api.tenant.id}/.well-known/jwks.json`),
      );
      const verify = (audience: string) =>
        jwtVerify(s.accessToken, jwks, {
          issuer: `${app.ctx.authUrl}/t/${api.tenant.id}`,
          audience,
        });
      await expect(verify('https://api.example.com')).resolves.toBeDefined();
      await expect(verify(`${app.ctx.authUrl}/t/${api.tenant.id}/api`)).rejects.toThrow(/aud/);
      expect(JSON.parse(await introspect(s.accessToken, api.secretKey)).aud).toBe(
        'https://api.example.com',
      );
      for (const audience of ['has space', 'https://', 'x'.repeat(257)]) {
        await expect(
          updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, api.tenant.id, { audience }),
        ).rejects.toMatchObject({ code: 'validation_failed' });
      }
      // Empty restores the default.
      const reset = await updateTenant(
        { db: app.ctx.database.db, bus: app.ctx.bus },
        api.tenant.id,
        { audience: '' },
      );
      expect(reset.audience).toBeNull();
    });

    it('honours the tenant token lifetime', async () => {
      const short = await app.tenant();
      const { updateTenant } = await import('../src/modules/tenants/index.js');
      await updateTenant({ db: app.ctx.database.db, bus: app.ctx.bus }, short.tenant.id, {
        accessTokenTtl: 120,
      });
      const u = await user(short);
      const body = await json(await signIn(u.email, short));
      expect(body.expiresIn).toBe(120);
    });

    it('answers a wrong password and an unknown e-mail alike, in body and in work done', async () => {
      const u = await user();
      const wrong = await signIn(u.email, t, 'wrong password!');
      const unknown = await signIn(email('nobody'), t, 'wrong password!');
      expect(wrong.status).toBe(401);
      expect(unknown.status).toBe(401);
      const a = await json(wrong);
      const b = await json(unknown);
      expect(a).toEqual(b);
      expect(a.code).toBe('invalid_credentials');
      // Both paths run argon2: an unknown address is not answered from a quick database miss.
      const other = await user();
      const { hasher } = app.ctx;
      const verify = hasher.verify;
      let verified = 0;
      hasher.verify = (digest, password) => {
        verified += 1;
        return verify.call(hasher, digest, password);
      };
      try {
        await signIn(email('ghost'), t, 'nope-password');
        expect(verified).toBe(1);
        await signIn(other.email, t, 'nope-password');
        expect(verified).toBe(2);
      } finally {
        hasher.verify = verify;
      }
    });

    it('refuses other tenants, disabled users, bad bodies', async () => {
      const u = await user();
      expect((await signIn(u.email, other)).status).toBe(401);
      expect(
        (await postJson(app, '/v1/auth/sign-in', t.secretKey, { email: u.email })).status,
      ).toBe(422);
      expect(
        (await postJson(app, '/v1/auth/sign-in', t.secretKey, { email: 1, password: 2 })).status,
      ).toBe(400);
      expect(
        (
          await postJson(app, '/v1/auth/sign-in', t.publishableKey, {
            email: u.email,
            password: PASSWORD,
          })
        ).status,
      ).toBe(403);
    });

    it('waits for e-mail verification when the tenant requires it', async () => {
      const strict = await app.tenant({ requireEmailVerification: true });
      const u = await user(strict);
      const res = await signIn(u.email, strict);
      expect(res.status).toBe(403);
      expect((await json(res)).code).toBe('email_not_verified');
    });
  });

  describe('refresh tokens', () => {
    /** Moves a used refresh token's rotation back past the reuse interval (no sleeping). */
    async function outliveReuseInterval(refreshToken: string) {
      await app.ctx.database.db
        .updateTable('refresh_tokens')
        .set({ used_at: Date.now() - defaults.refreshReuseIntervalMs - 1000 })
        .where('hash', '=', createHash('sha256').update(refreshToken).digest('hex'))
        .execute();
    }

    const refresh = (refreshToken: string) =>
      postJson(app, '/v1/auth/token', t.secretKey, { refreshToken });

    it('rotate on every use; a replay after the reuse interval revokes the whole session', async () => {
      const s = await session();
      const first = await refresh(s.refreshToken);
      expect(first.status).toBe(200);
      const rotated = await json(first);
      expect(rotated.refreshToken).not.toBe(s.refreshToken);
      expect(rotated.sessionId).toBe(s.sessionId);
      expect(rotated.user.id).toBe(s.user.id);
      expect(JSON.parse(await introspect(rotated.accessToken)).active).toBe(true);

      await outliveReuseInterval(s.refreshToken);
      const replay = await refresh(s.refreshToken);
      expect(replay.status).toBe(400);
      expect((await json(replay)).code).toBe('invalid_grant');
      // The thief's replay ends the session for everyone holding its tokens.
      expect(await introspect(rotated.accessToken)).toBe(INACTIVE);
      expect(await introspect(s.accessToken)).toBe(INACTIVE);
      expect((await refresh(rotated.refreshToken)).status).toBe(400);
    });

    it("keep the sign-in's amr and auth_time through every rotation, in tokens and introspection", async () => {
      const s = await session();
      const signedIn = decodeJwt(s.accessToken);
      expect(signedIn).toMatchObject({ amr: ['pwd'], auth_time: expect.any(Number) });
      expect(Math.abs((signedIn.auth_time as number) - Date.now() / 1000)).toBeLessThan(5);
      // The sign-in is moved an hour back, as if it had been then: refreshes must not move it.
      const hourAgo = Date.now() - 3_600_000;
      await app.ctx.database.db
        .updateTable('sessions')
        .set({ authenticated_at: hourAgo })
        .where('id', '=', s.sessionId)
        .execute();
      const authTime = Math.floor(hourAgo / 1000);
      let refreshToken = s.refreshToken as string;
      for (let i = 0; i < 2; i++) {
        const res = await refresh(refreshToken);
        expect(res.status).toBe(200);
        const pair = await json(res);
        refreshToken = pair.refreshToken as string;
        const claims = decodeJwt(pair.accessToken as string);
        expect(claims).toMatchObject({ amr: ['pwd'], auth_time: authTime });
        expect(claims.iat as number).toBeGreaterThan(authTime + 3000);
        expect(JSON.parse(await introspect(pair.accessToken))).toMatchObject({
          active: true,
          amr: ['pwd'],
          auth_time: authTime,
        });
      }
    });

    it('a session opened before amr was recorded: no amr, auth_time its opening', async () => {
      const s = await session();
      const row = await app.ctx.database.db
        .updateTable('sessions')
        .set({ amr: null, authenticated_at: null })
        .where('id', '=', s.sessionId)
        .returning('created_at')
        .executeTakeFirstOrThrow();
      const pair = await json(await refresh(s.refreshToken as string));
      const claims = decodeJwt(pair.accessToken as string);
      expect(claims).not.toHaveProperty('amr');
      expect(claims.auth_time).toBe(Math.floor(row.created_at / 1000));
      const answer = JSON.parse(await introspect(pair.accessToken));
      expect(answer).toMatchObject({ active: true, auth_time: claims.auth_time });
      expect(answer).not.toHaveProperty('amr');
    });

    it('a token presented again within the reuse interval gets a valid pair of its session', async () => {
      const s = await session();
      const first = await json(await refresh(s.refreshToken));
      const again = await refresh(s.refreshToken);
      expect(again.status).toBe(200);
      const second = await json(again);
      expect(second.sessionId).toBe(s.sessionId);
      expect(second.refreshToken).not.toBe(first.refreshToken);
      for (const pair of [first, second]) {
        expect(JSON.parse(await introspect(pair.accessToken)).active).toBe(true);
        expect((await refresh(pair.refreshToken)).status).toBe(200);
      }
    });

    it('two concurrent uses of one refresh token both get a pair, and the session lives', async () => {
      const s = await session();
      const results = await Promise.all([refresh(s.refreshToken), refresh(s.refreshToken)]);
      expect(results.map((r) => r.status)).toEqual([200, 200]);
      const pairs = await Promise.all(results.map(json));
      for (const pair of pairs) {
        expect(pair.sessionId).toBe(s.sessionId);
        expect(JSON.parse(await introspect(pair.accessToken)).active).toBe(true);
      }
      const session_ = await app.ctx.sessions.get(t.tenant.id, s.sessionId);
      expect(session_.revokedAt).toBeNull();
    });

    it('are bound to their tenant', async () => {
      const s = await session();
      const res = await postJson(app, '/v1/auth/token', other.secretKey, {
        refreshToken: s.refreshToken,
      });
      expect(res.status).toBe(400);
      expect(
        (await postJson(app, '/v1/auth/token', t.secretKey, { refreshToken: s.refreshToken }))
          .status,
      ).toBe(200);
    });

    it('sign-out ends the session; unknown tokens sign out quietly', async () => {
      const s = await session();
      const out = await postJson(app, '/v1/auth/sign-out', t.secretKey, {
        refreshToken: s.refreshToken,
      });
      expect(out.status).toBe(204);
      expect(await introspect(s.accessToken)).toBe(INACTIVE);
      expect(
        (await postJson(app, '/v1/auth/token', t.secretKey, { refreshToken: s.refreshToken }))
          .status,
      ).toBe(400);
      expect(
        (await postJson(app, '/v1/auth/sign-out', t.secretKey, { refreshToken: 'lkr_unknown' }))
          .status,
      ).toBe(204);
    });
  });

  describe('introspection', () => {
    it('answers active with the claims for a token of the caller tenant (reference rule 2)', async () => {
      const s = await session();
      const result = JSON.parse(await introspect(s.accessToken));
      expect(result).toMatchObject({
        active: true,
        sub: s.user.id,
        email: s.user.email,
        tid: t.tenant.id,
        sid: s.sessionId,
        roles: [],
        scope: expect.any(String),
        exp: expect.any(Number),
        aud: `${app.ctx.authUrl}/t/${t.tenant.id}/api`,
        client_id: t.tenant.id,
        amr: ['pwd'],
        auth_time: decodeJwt(s.accessToken).auth_time,
      });
    });

    it('accepts RFC 7662 form encoding', async () => {
      const s = await session();
      const res = await app.request('/api/auth/introspect', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${t.secretKey}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({
          token: s.accessToken,
          token_type_hint: 'access_token',
        }).toString(),
      });
      expect((await json(res)).active).toBe(true);
    });

    it('answers exactly {"active":false} for every bad token', async () => {
      const s = await session();
      const o = await session(other);
      const now = Math.floor(Date.now() / 1000);
      const [head, body, sig] = s.accessToken.split('.') as [string, string, string];
      const flipped = `${head}.${body}.${sig.startsWith('A') ? 'B' : 'A'}${sig.slice(1)}`;
      const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
      const none = `${b64({ alg: 'none', typ: 'at+jwt' })}.${body}.`;
      const { kid } = decodeProtectedHeader(s.accessToken);
      const jwk = (await app.ctx.signingKeys.jwks(t.tenant.id)).keys.find((k) => k.kid === kid);
      const publicPem = createPublicKey({ key: jwk as never, format: 'jwk' }).export({
        type: 'spki',
        format: 'pem',
      });
      const hs256 = await new SignJWT(JSON.parse(Buffer.from(body, 'base64url').toString()))
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid })
        .sign(new TextEncoder().encode(publicPem as string));
      const attacker = await generateKeyPair('RS256', { extractable: true });
      const embedded = await new SignJWT(JSON.parse(Buffer.from(body, 'base64url').toString()))
        .setProtectedHeader({
          alg: 'RS256',
          typ: 'at+jwt',
          kid,
          jwk: await exportJWK(attacker.publicKey),
        })
        .sign(attacker.privateKey);
      const jku = await new SignJWT(JSON.parse(Buffer.from(body, 'base64url').toString()))
        .setProtectedHeader({
          alg: 'RS256',
          typ: 'at+jwt',
          kid: 'attacker',
          jku: 'http://127.0.0.1:1/jwks.json',
        })
        .sign(attacker.privateKey);
      const live = { sub: s.user.id, sid: s.sessionId, email: s.user.email };
      const cases: Record<string, unknown> = {
        "another tenant's token": o.accessToken,
        'an expired token': await forge({ ...live, iat: now - 1200, exp: now - 600 }),
        'a token not yet valid (nbf)': await forge({ ...live, nbf: now + 3600 }),
        'a token issued in the future (iat)': await forge({
          ...live,
          iat: now + 3600,
          exp: now + 7200,
        }),
        'a bad signature': flipped,
        'alg none': none,
        'HS256 signed with the public key': hs256,
        'an embedded jwk header (attacker key)': embedded,
        'a jku header pointing elsewhere': jku,
        'typ JWT instead of at+jwt': await forge(live, { typ: 'JWT' }),
        'another issuer': await new SignJWT({ ...live, tid: t.tenant.id, roles: [], scope: 's' })
          .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid })
          .setIssuer('https://evil.example/t/x')
          .setSubject(s.user.id)
          .setIssuedAt()
          .setExpirationTime('5m')
          .setJti('j')
          .sign((await app.ctx.signingKeys.active(t.tenant.id)).key),
        "our key, another tenant's tid": await forge({ ...live, tid: other.tenant.id }),
        'an unknown session': await forge({ ...live, sid: '00000000-0000-4000-8000-000000000000' }),
        'a session of another user': await forge({ ...live, sub: o.user.id }),
        'missing claims': await forge({ ...live, roles: 'admin' }),
        garbage: 'not.a.jwt',
        'random bytes': Buffer.from('\u0000\u0001💥').toString('base64'),
        'an empty string': '',
        'a 1 MB string': 'a'.repeat(1024 * 1024),
      };
      for (const [name, token] of Object.entries(cases)) {
        expect(await introspect(token), name).toBe(INACTIVE);
      }
      // The genuine token is still fine after all that.
      expect(JSON.parse(await introspect(s.accessToken)).active).toBe(true);
    });

    it('is inactive once the session is revoked, the user disabled, or the user deleted', async () => {
      const auth = { authorization: `Bearer ${t.secretKey}` };
      const revoked = await session();
      expect(
        (
          await app.request(`/v1/sessions/${revoked.sessionId}`, {
            method: 'DELETE',
            headers: auth,
          })
        ).status,
      ).toBe(204);
      expect(await introspect(revoked.accessToken)).toBe(INACTIVE);

      const disabled = await session();
      const patch = await app.request(`/v1/users/${disabled.user.id}`, {
        method: 'PATCH',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ disabled: true }),
      });
      expect(patch.status).toBe(200);
      expect(await introspect(disabled.accessToken)).toBe(INACTIVE);
      expect(
        (
          await postJson(app, '/v1/auth/token', t.secretKey, {
            refreshToken: disabled.refreshToken,
          })
        ).status,
      ).toBe(400);
      const signInAgain = await signIn(disabled.user.email);
      expect(signInAgain.status).toBe(403);

      const deleted = await session();
      expect(
        (await app.request(`/v1/users/${deleted.user.id}`, { method: 'DELETE', headers: auth }))
          .status,
      ).toBe(204);
      expect(await introspect(deleted.accessToken)).toBe(INACTIVE);
    });

    it('rotation publishes the next key before it signs', async () => {
      const rotating = await app.tenant();
      const u = await user(rotating);
      const before = await json(await signIn(u.email, rotating));
      const oldKid = decodeProtectedHeader(before.accessToken).kid;
      const { kid: nextKid } = await app.ctx.signingKeys.rotate(rotating.tenant.id, 600);
      const jwks = await json(await app.request(`/t/${rotating.tenant.id}/.well-known/jwks.json`));
      expect(jwks.keys.map((k: { kid: string }) => k.kid).sort()).toEqual([oldKid, nextKid].sort());
      // Until verifiers have had time to fetch it, the old key keeps signing.
      const during = await json(await signIn(u.email, rotating));
      expect(decodeProtectedHeader(during.accessToken).kid).toBe(oldKid);
    });

    it('a token signed by a rotated-out key stays active; new tokens use the new key', async () => {
      const rotating = await app.tenant();
      const u = await user(rotating);
      const before = await json(await signIn(u.email, rotating));
      const oldKid = decodeProtectedHeader(before.accessToken).kid;
      const { kid: newKid } = await app.ctx.signingKeys.rotate(rotating.tenant.id, 600, 0);
      expect(newKid).not.toBe(oldKid);
      expect(JSON.parse(await introspect(before.accessToken, rotating.secretKey)).active).toBe(
        true,
      );
      const after = await json(await signIn(u.email, rotating));
      expect(decodeProtectedHeader(after.accessToken).kid).toBe(newKid);
      const jwks = await json(await app.request(`/t/${rotating.tenant.id}/.well-known/jwks.json`));
      expect(jwks.keys.map((k: { kid: string }) => k.kid).sort()).toEqual([oldKid, newKid].sort());
    });

    it('a missing token field is a bad request (400); no key is 401; the wrong key kind or scope is 403', async () => {
      for (const body of [{}, { token: 42 }, { tokens: 'x' }, 'not json']) {
        const res = await postJson(app, '/api/auth/introspect', t.secretKey, body);
        expect(res.status).toBe(400);
        expect((await json(res)).code).toBe('invalid_request');
      }
      expect((await postJson(app, '/api/auth/introspect', undefined, { token: 'x' })).status).toBe(
        401,
      );
      expect(
        (await postJson(app, '/api/auth/introspect', t.publishableKey, { token: 'x' })).status,
      ).toBe(403);
      const narrow = await createKey(app.ctx.database.db, t.tenant.id, {
        kind: 'secret',
        scopes: ['users:read'],
      });
      expect(
        (await postJson(app, '/api/auth/introspect', narrow.plaintext, { token: 'x' })).status,
      ).toBe(403);
      const introspectOnly = await createKey(app.ctx.database.db, t.tenant.id, {
        kind: 'secret',
        scopes: ['tokens:introspect'],
      });
      expect(
        (await postJson(app, '/api/auth/introspect', introspectOnly.plaintext, { token: 'x' }))
          .status,
      ).toBe(200);
    });
  });

  describe('JWKS and discovery', () => {
    it('publish the keys and the endpoints, cacheably and readable from browsers', async () => {
      const res = await app.request(`/t/${t.tenant.id}/.well-known/jwks.json`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toMatch(/public, max-age=\d+/);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      const jwks = await json(res);
      for (const key of jwks.keys) {
        expect(key).toMatchObject({
          kty: 'RSA',
          alg: 'RS256',
          use: 'sig',
          kid: expect.any(String),
          n: expect.any(String),
          e: 'AQAB',
        });
        expect(key).not.toHaveProperty('d');
        expect(key).not.toHaveProperty('p');
      }
      const etag = res.headers.get('etag') as string;
      const again = await app.request(`/t/${t.tenant.id}/.well-known/jwks.json`, {
        headers: { 'if-none-match': etag },
      });
      expect(again.status).toBe(304);

      const discovery = await json(
        await app.request(`/t/${t.tenant.id}/.well-known/openid-configuration`),
      );
      expect(discovery).toMatchObject({
        issuer: `${app.ctx.authUrl}/t/${t.tenant.id}`,
        jwks_uri: `${app.ctx.authUrl}/t/${t.tenant.id}/.well-known/jwks.json`,
        introspection_endpoint: `${app.ctx.authUrl}/api/auth/introspect`,
      });
      expect(
        (await app.request('/t/00000000-0000-4000-8000-000000000000/.well-known/jwks.json')).status,
      ).toBe(404);
      expect((await app.request('/t/not-a-uuid/.well-known/openid-configuration')).status).toBe(
        404,
      );
    });

    it("hold a new tenant's signing key before its first token, and sign with it", async () => {
      const fresh = await app.tenant();
      const { keys } = await json(await app.request(`/t/${fresh.tenant.id}/.well-known/jwks.json`));
      expect(keys).toHaveLength(1);
      const s = await session(fresh);
      expect(decodeProtectedHeader(s.accessToken).kid).toBe(keys[0].kid);
    });

    it('never store a private key in the clear', async () => {
      const rows = await app.ctx.database.db.selectFrom('signing_keys').selectAll().execute();
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(row.private_jwe.split('.')).toHaveLength(5);
        expect(row.private_jwe).not.toContain('"d"');
        expect(JSON.parse(row.public_jwk)).not.toHaveProperty('d');
      }
    });
  });
});
