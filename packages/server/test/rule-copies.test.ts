/**
 * Two rules that once had copies which drifted apart: the password length (the hosted form
 * cut what the API accepts) and the publishable-key lookup of /public/config.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, email, json, postJson, startApp, type TestApp } from './support.js';

const ORIGIN = 'http://localhost:5173';

for (const dialect of DIALECTS) {
  describe(`one rule, one copy (${dialect})`, () => {
    let app: TestApp;

    beforeAll(async () => {
      app = await startApp(dialect);
    });
    afterAll(() => app.dispose());

    it('signs in on the hosted page with a valid 600-emoji password made over the API', async () => {
      const t = await app.tenant({ allowedOrigins: [ORIGIN] });
      const address = email();
      // 600 code points (the rule is 8 to 1024), 1200 UTF-16 units.
      const password = '😀'.repeat(600);
      const created = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
        email: address,
        password,
      });
      expect(created.status).toBe(201);

      const query = new URLSearchParams({
        pk: t.publishableKey,
        redirect_url: `${ORIGIN}/cb`,
      }).toString();
      const page = await app.request(`/sign-in?${query}`);
      const cookie = page.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] as string;
      const res = await app.request(`/sign-in?${query}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ _csrf: csrf, email: address, password }).toString(),
      });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toMatch(/^http:\/\/localhost:5173\/cb#access_token=/);
    });

    it('holds sign-in and sign-up to one e-mail length (254), as invalid input', async () => {
      const t = await app.tenant();
      const long = `${'a'.repeat(64)}@${'b'.repeat(190)}.example`;
      const body = { email: long, password: 'correct horse battery staple' };
      for (const path of ['/v1/auth/sign-up', '/v1/auth/sign-in']) {
        const res = await postJson(app, path, t.secretKey, body);
        expect(res.status).toBe(422);
      }
    });

    it('still refuses a hosted sign-up password one code point over the rule', async () => {
      const t = await app.tenant({ allowedOrigins: [ORIGIN] });
      const query = new URLSearchParams({
        pk: t.publishableKey,
        redirect_url: `${ORIGIN}/cb`,
      }).toString();
      const page = await app.request(`/sign-up?${query}`);
      const cookie = page.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] as string;
      const res = await app.request(`/sign-up?${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({
          _csrf: csrf,
          email: email(),
          password: '😀'.repeat(1025),
        }).toString(),
      });
      expect(res.status).toBe(422);
      expect(await res.text()).toContain('at most 1024 characters');
    });

    it('/public/config builds signInUrl from the key it was sent, however it was sent', async () => {
      const a = await app.tenant();
      const b = await app.tenant();
      const bearer = await app.request('/public/config', {
        headers: { authorization: `Bearer ${a.publishableKey}` },
      });
      expect(bearer.status).toBe(200);
      const fromBearer = await json(bearer);
      expect(fromBearer.tenantId).toBe(a.tenant.id);
      expect(new URL(fromBearer.signInUrl).searchParams.get('pk')).toBe(a.publishableKey);

      // Header and query disagree: the header wins, for the tenant and the link alike.
      const both = await app.request(`/public/config?pk=${encodeURIComponent(b.publishableKey)}`, {
        headers: { 'x-latchkey-publishable-key': a.publishableKey },
      });
      const fromBoth = await json(both);
      expect(fromBoth.tenantId).toBe(a.tenant.id);
      expect(new URL(fromBoth.signInUrl).searchParams.get('pk')).toBe(a.publishableKey);
    });
  });
}
