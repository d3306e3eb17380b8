/**
 * The real Latchkey service for the SDK's tests: the server package's own test support starts
 * the real app on a fresh SQLite database, listening on 127.0.0.1. Tokens come from real
 * sign-ins; the "bad" tokens are forged with the tenant's real private signing key, taken from
 * the server's internals (`ctx.signingKeys`), so that each one is wrong in exactly one way.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, type JWTHeaderParameters, type KeyObject, SignJWT } from 'jose';
import {
  email,
  json,
  METRICS_AUTH,
  postJson,
  startApp,
  type TestApp,
  type TestTenant,
} from '../../server/test/support.js';
import { createLatchkey, type Latchkey, type LatchkeyOptions } from '../src/index.js';

/**
 * The service's public URL (its PUBLIC_URL), and so the base of every token's issuer
 * (`{PUBLIC_URL}/t/{tenantId}`). `startApp` loads the configuration before it listens on a
 * port picked at listen time, so the issuer cannot name that port: the SDK is given this
 * public URL as `authUrl`, and `viaLoopback` stands in for the DNS entry / reverse proxy that
 * routes it to the app. Everything that answers is the real server.
 */
export const PUBLIC_URL = 'http://latchkey.localhost';

export const PASSWORD = 'correct horse battery staple';

/** Route label of the JWKS endpoint in the server's `latchkey_http_requests_total`. */
export const JWKS_ROUTE = '/t/:tenantId/.well-known/jwks.json';
export const INTROSPECT_ROUTE = '/api/auth/introspect';

/** A `fetch` that sends requests for PUBLIC_URL to the app at `target` (its loopback URL). */
export function viaLoopback(target: string): typeof globalThis.fetch {
  const { origin } = new URL(PUBLIC_URL);
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (url.origin === origin) {
      const to = new URL(target);
      url.protocol = to.protocol;
      url.host = to.host;
    }
    return fetch(input instanceof Request ? new Request(url, input) : url, init);
  };
}

export interface Session {
  accessToken: string;
  refreshToken: string;
  sessionId: string;
  user: { id: string; email: string; roles: string[] };
}

export interface ForgeOptions {
  /** Claims to add or replace, or (with `undefined`) leave out. */
  claims?: Record<string, unknown>;
  /** Header parameters to add or replace, or (with `undefined`) leave out. */
  header?: Partial<JWTHeaderParameters> & Record<string, unknown>;
  /** Sign with this key instead of the tenant's real active key. */
  key?: CryptoKey | KeyObject | Uint8Array;
}

export interface RealLatchkey {
  app: TestApp;
  /** Where the app listens: http://127.0.0.1:PORT. */
  url: string;
  issuer(t: TestTenant): string;
  tenant(options?: Parameters<TestApp['tenant']>[0]): Promise<TestTenant>;
  /** Signs a new user up (with `roles`, set through the API) and signs them in. */
  session(t: TestTenant, roles?: string[]): Promise<Session>;
  /** A new access token for the session, from its refresh token (no password hashing). */
  refresh(t: TestTenant, session: Session): Promise<Session>;
  /** DELETE /v1/sessions/:id with the secret key. */
  revoke(t: TestTenant, sessionId: string): Promise<void>;
  /** A token signed with the tenant's real signing key (unless `key`), with chosen claims. */
  forge(t: TestTenant, options?: ForgeOptions): Promise<string>;
  /** The server's `latchkey_http_requests_total` for one method, route and status. */
  requests(method: string, route: string, status?: number): Promise<number>;
  /** The SDK, configured for this tenant as the README says, routed to the app. */
  client(t: TestTenant, options?: LatchkeyOptions): Latchkey;
  dispose(): Promise<void>;
}

export async function startLatchkey(): Promise<RealLatchkey> {
  const app = await startApp('sqlite', { env: { PUBLIC_URL } });
  const issuer = (t: TestTenant) => `${PUBLIC_URL}/t/${t.tenant.id}`;

  /** The JSON body of a response that must have `status`; the server's problem otherwise. */
  async function ok<T = Session>(res: Response, status: number, what: string): Promise<T> {
    if (res.status !== status) throw new Error(`${what}: ${res.status} ${await res.text()}`);
    return (status === 204 ? undefined : await json(res)) as T;
  }

  return {
    app,
    url: app.url,
    issuer,
    tenant: (options) => app.tenant(options),

    async session(t, roles = []) {
      const address = email('sdk');
      await ok(
        await postJson(app, '/v1/auth/sign-up', t.secretKey, {
          email: address,
          password: PASSWORD,
        }),
        201,
        'sign-up',
      );
      if (roles.length > 0) {
        const signedIn = await ok(
          await postJson(app, '/v1/auth/sign-in', t.secretKey, {
            email: address,
            password: PASSWORD,
          }),
          200,
          'sign-in',
        );
        await ok(
          await app.request(`/v1/users/${signedIn.user.id}`, {
            method: 'PATCH',
            headers: { authorization: `Bearer ${t.secretKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ roles }),
          }),
          200,
          'set roles',
        );
      }
      return ok(
        await postJson(app, '/v1/auth/sign-in', t.secretKey, {
          email: address,
          password: PASSWORD,
        }),
        200,
        'sign-in',
      );
    },

    async refresh(t, session) {
      return ok(
        await postJson(app, '/v1/auth/token', t.secretKey, { refreshToken: session.refreshToken }),
        200,
        'refresh',
      );
    },

    async revoke(t, sessionId) {
      await ok(
        await app.request(`/v1/sessions/${sessionId}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${t.secretKey}` },
        }),
        204,
        'revoke session',
      );
    },

    async forge(t, options = {}) {
      const active = await app.ctx.signingKeys.active(t.tenant.id);
      const now = Math.floor(Date.now() / 1000);
      const claims: Record<string, unknown> = {
        iss: issuer(t),
        sub: randomUUID(),
        email: 'forged@example.com',
        tid: t.tenant.id,
        sid: randomUUID(),
        roles: [],
        scope: 'openid email profile',
        iat: now,
        exp: now + 600,
        jti: randomUUID(),
        aud: `${issuer(t)}/api`,
        client_id: t.tenant.id,
        ...options.claims,
      };
      const header: Record<string, unknown> = {
        alg: 'RS256',
        typ: 'at+jwt',
        kid: active.kid,
        ...options.header,
      };
      for (const record of [claims, header]) {
        for (const [name, value] of Object.entries(record)) {
          if (value === undefined) delete record[name];
        }
      }
      return new SignJWT(claims)
        .setProtectedHeader(header as unknown as JWTHeaderParameters)
        .sign(options.key ?? active.key);
    },

    async requests(method, route, status = 200) {
      const text = await (await app.request('/metrics', { headers: METRICS_AUTH })).text();
      for (const line of text.split('\n')) {
        const match = /^latchkey_http_requests_total\{([^}]*)\} (\d+)$/.exec(line);
        if (!match?.[1]) continue;
        const labels = Object.fromEntries(
          [...match[1].matchAll(/(\w+)="([^"]*)"/g)].map(([, name, value]) => [name, value]),
        );
        if (labels.method === method && labels.route === route && labels.status === `${status}`) {
          return Number(match[2]);
        }
      }
      return 0;
    },

    client(t, options = {}) {
      return createLatchkey({
        tenantId: t.tenant.id,
        secretKey: t.secretKey,
        authUrl: PUBLIC_URL,
        apiUrl: app.url,
        fetch: viaLoopback(app.url),
        ...options,
      });
    },

    dispose: () => app.dispose(),
  };
}

/** A real service that issued `token` to `tenant` and then stopped: nothing listens at `url`. */
export async function stoppedLatchkey(): Promise<{
  url: string;
  tenant: TestTenant;
  token: string;
}> {
  const service = await startLatchkey();
  try {
    const tenant = await service.tenant();
    const { accessToken: token } = await service.session(tenant);
    return { url: service.url, tenant, token };
  } finally {
    await service.dispose();
  }
}

/**
 * A local server for what the real service can never be: an attacker's host that a token's
 * header points at. It counts the requests it gets and answers each with `body`.
 */
export async function attackerHost(
  body: unknown,
): Promise<{ url: string; requests(): number; close(): Promise<void> }> {
  let requests = 0;
  const server: Server = createServer((_, res) => {
    requests += 1;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
