import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { email, postJson, startApp, type TestApp } from './support.js';

describe('logs', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp('sqlite');
  });
  afterAll(() => app.dispose());

  it('never contain a password, a key or a token, whatever the outcome', async () => {
    const t = await app.tenant();
    const password = 'Pa55-never-in-logs-¶';
    const address = email();
    await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password });
    await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: address, password }); // 409
    await postJson(app, '/v1/auth/sign-up', t.secretKey, { email: 'bad', password }); // 422
    await postJson(
      app,
      '/v1/auth/sign-up',
      t.secretKey,
      `{"email":"x@example.com","password":"${password}"`,
    ); // 400
    await postJson(app, '/v1/auth/sign-up', `${t.secretKey}0`, { email: address, password }); // 401
    await postJson(app, '/v1/auth/sign-up', t.publishableKey, { email: address, password }); // 403
    const logs = app.logs.text();
    expect(logs).toContain('/v1/auth/sign-up');
    expect(logs).toMatch(/"statusCode":409/);
    for (const secret of [password, t.secretKey, t.secretKey.slice(8), t.publishableKey]) {
      expect(logs).not.toContain(secret);
    }
  });
});
