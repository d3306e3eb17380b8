/**
 * The real Latchkey server for the interop suite (the server package's test support: a real
 * app on a fresh SQLite database, listening on loopback, PUBLIC_URL being that address, so
 * every library reaches issuer, JWKS and endpoints exactly as their URLs say).
 */
import {
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from '../../server/test/support.js';

export const PASSWORD = 'correct horse battery staple';

export interface Tokens {
  accessToken: string;
  refreshToken: string;
  user: { id: string; email: string };
}

export async function startLatchkey(): Promise<TestApp> {
  return startApp('sqlite');
}

export const issuerOf = (app: TestApp, t: TestTenant) => `${app.url}/t/${t.tenant.id}`;
/** The documented default audience. */
export const audienceOf = (app: TestApp, t: TestTenant) => `${issuerOf(app, t)}/api`;

let count = 0;

/** Signs a new user up and in through the REST API with the secret key. */
export async function signIn(app: TestApp, t: TestTenant): Promise<Tokens> {
  count += 1;
  const email = `interop-${count}-${t.tenant.id.slice(0, 8)}@example.com`;
  const created = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
    email,
    password: PASSWORD,
  });
  if (created.status !== 201) throw new Error(`sign-up: ${created.status}`);
  const res = await postJson(app, '/v1/auth/sign-in', t.secretKey, { email, password: PASSWORD });
  if (res.status !== 200) throw new Error(`sign-in: ${res.status}`);
  return (await json(res)) as Tokens;
}
