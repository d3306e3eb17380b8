import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { email, json, postJson, startApp, type TestApp } from './support.js';

const introspectLines = (app: TestApp, status: number) =>
  app.logs.lines.filter(
    (l) => l.includes('"url":"/api/auth/introspect"') && l.includes(`"statusCode":${status}`),
  );

async function accessToken(app: TestApp, secretKey: string): Promise<string> {
  const address = email();
  const password = 'correct horse battery';
  await postJson(app, '/v1/auth/sign-up', secretKey, { email: address, password });
  const tokens = await json(
    await postJson(app, '/v1/auth/sign-in', secretKey, { email: address, password }),
  );
  return tokens.accessToken as string;
}

describe('introspection logs', () => {
  let info: TestApp;
  let debug: TestApp;
  beforeAll(async () => {
    info = await startApp('sqlite');
    debug = await startApp('sqlite', { env: { LOG_LEVEL: 'debug' } });
  });
  afterAll(async () => {
    await info.dispose();
    await debug.dispose();
  });

  it('at info: a successful answer is not logged, a refused one is', async () => {
    const t = await info.tenant();
    const token = await accessToken(info, t.secretKey);
    const ok = await postJson(info, '/api/auth/introspect', t.secretKey, { token });
    expect((await json(ok)).active).toBe(true);
    const refused = await postJson(info, '/api/auth/introspect', `${t.secretKey}0`, { token });
    expect(refused.status).toBe(401);
    expect(introspectLines(info, 200)).toHaveLength(0);
    expect(introspectLines(info, 401)).toHaveLength(1);
    // Every other route still logs its successes at info.
    expect(info.logs.text()).toContain('"url":"/v1/auth/sign-in"');
  });

  it('at debug: a successful answer is logged, without the token', async () => {
    const t = await debug.tenant();
    const token = await accessToken(debug, t.secretKey);
    await postJson(debug, '/api/auth/introspect', t.secretKey, { token });
    const lines = introspectLines(debug, 200);
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(token);
    expect(lines[0]).toContain('"level":20');
  });
});
