/**
 * The real Latchkey server as the OpenID Provider of the cookie-session suites
 * (docs/design.md §15): a tenant, `web` apps made with the server's own createApp, users
 * signed up through the API, and a browser over fetch that signs in on the hosted form.
 */
import { createApp } from '../../server/src/modules/oauth/index.js';
import { OAuthBrowser } from '../../server/test/oauth-browser.js';

export { OAuthBrowser };

import type { DialectName } from '../../server/src/storage/index.js';
import {
  type Body,
  email,
  json,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from '../../server/test/support.js';
import type { LatchkeySessionConfig } from '../src/session/index.js';

export const PASSWORD = 'correct horse battery staple';
export const COOKIE_SECRET = 'a cookie secret of at least 32 characters, for tests';

export interface User {
  id: string;
  email: string;
  password: string;
}

export interface Provider {
  app: TestApp;
  t: TestTenant;
  issuer: string;
  /** A `web` app whose redirect URI is `{appBase}/api/latchkey/callback`. */
  register(appBase: string): Promise<{ id: string; secret: string }>;
  newUser(roles?: string[]): Promise<User>;
  /** The session configuration a team would write, with the counting fetch and the clock. */
  config(
    client: { id: string; secret: string },
    appBase: string,
    extra?: Partial<LatchkeySessionConfig>,
  ): LatchkeySessionConfig;
  /** Calls to the token endpoint by grant type, through the configs' fetch. */
  tokenCalls(grant: 'refresh_token' | 'authorization_code'): number;
  /** Shifts the configs' clock (`now`) by this many seconds. */
  shift(seconds: number): void;
  introspect(token: string): Promise<Body>;
  revokeSession(sessionId: string): Promise<void>;
  dispose(): Promise<void>;
}

export async function startProvider(dialect: DialectName): Promise<Provider> {
  const app = await startApp(dialect);
  const t = await app.tenant();
  const issuer = `${app.url}/t/${t.tenant.id}`;
  const calls = new Map<string, number>();
  let offset = 0;

  const counting: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url.endsWith('/oauth/token') && init?.body instanceof URLSearchParams) {
      const grant = init.body.get('grant_type') ?? '';
      calls.set(grant, (calls.get(grant) ?? 0) + 1);
    }
    return fetch(input, init);
  };

  return {
    app,
    t,
    issuer,
    async register(appBase) {
      const made = await createApp(app.ctx.database.db, t.tenant.id, {
        name: 'Server-rendered app',
        type: 'web',
        redirectUris: [`${appBase}/api/latchkey/callback`],
        postLogoutRedirectUris: [appBase],
      });
      return { id: made.app.id, secret: made.clientSecret ?? '' };
    },
    async newUser(roles = []) {
      const address = email('session');
      const up = await postJson(app, '/v1/auth/sign-up', t.secretKey, {
        email: address,
        password: PASSWORD,
        name: 'Ada Lovelace',
      });
      if (up.status !== 201) throw new Error(`sign-up: ${up.status} ${await up.text()}`);
      const id = (await json(up)).userId as string;
      if (roles.length > 0) {
        const res = await app.request(`/v1/users/${id}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${t.secretKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ roles }),
        });
        if (res.status !== 200) throw new Error(`roles: ${res.status} ${await res.text()}`);
      }
      return { id, email: address, password: PASSWORD };
    },
    config: (client, appBase, extra = {}) => ({
      issuer,
      clientId: client.id,
      clientSecret: client.secret,
      cookieSecret: COOKIE_SECRET,
      appBaseUrl: appBase,
      fetch: counting,
      now: () => Date.now() + offset * 1000,
      onError: () => {},
      ...extra,
    }),
    tokenCalls: (grant) => calls.get(grant) ?? 0,
    shift(seconds) {
      offset = seconds;
    },
    introspect: async (token) =>
      json(await postJson(app, '/api/auth/introspect', t.secretKey, { token })),
    async revokeSession(sessionId) {
      const res = await app.request(`/v1/sessions/${sessionId}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${t.secretKey}` },
      });
      if (res.status !== 204) throw new Error(`revoke: ${res.status} ${await res.text()}`);
    },
    dispose: () => app.dispose(),
  };
}

/** The app's cookies in the browser: what Set-Cookie left, as a `Cookie` header. */
export class Jar {
  readonly cookies = new Map<string, string>();

  apply(setCookies: Iterable<string>): void {
    for (const line of setCookies) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (/max-age=0/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  names(): string[] {
    return [...this.cookies.keys()].sort();
  }
}

/** Signs in on the provider's hosted form, from `start` (the authorize URL) to the app's callback URL. */
export async function signInAtProvider(
  provider: Provider,
  start: string,
  user?: User,
  browser = new OAuthBrowser(provider.app.url),
): Promise<URL> {
  const visit = await browser.browse(start, user ?? {});
  return visit.url;
}
