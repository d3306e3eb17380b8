/**
 * A small stand-in for the Latchkey service on 127.0.0.1: it publishes a tenant's JWKS and
 * answers introspection per the wire contract (DESIGN.md sections 5 and 6). It goes once the
 * service's token endpoints are merged and the tests can run against the real thing.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type CryptoKey,
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  type JWK,
  type JWTHeaderParameters,
  jwtVerify,
  SignJWT,
} from 'jose';

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** The public key as the service publishes it. */
  jwk: JWK;
}

export async function createSigningKey(kid: string = randomUUID()): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  return { kid, privateKey, publicKey, jwk };
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function fakeSecretKey(): string {
  let random = '';
  for (let i = 0; i < 43; i += 1) random += BASE62[randomInt(62)];
  return `sk_test_${random}`;
}

export interface SignOptions {
  /** Claims to add, replace, or (with `undefined`) leave out. */
  claims?: Record<string, unknown>;
  /** Header parameters to add or replace; `alg` stays RS256 unless `key` says otherwise. */
  header?: Partial<JWTHeaderParameters> & Record<string, unknown>;
  key?: SigningKey;
}

export class FakeLatchkey {
  readonly tenantId = randomUUID();
  readonly secretKey = fakeSecretKey();
  /** Keys in the published JWKS; the first one signs. */
  keys: SigningKey[] = [];
  jwksRequests = 0;
  introspectionRequests = 0;
  /** Set to answer the JWKS with another status. */
  jwksStatus = 200;
  /** Set to answer introspection with this problem instead. */
  introspectionProblem: { status: number; code: string; retryAfter?: number } | undefined;
  readonly revokedSessions = new Set<string>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeLatchkey> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const fake = new FakeLatchkey(server, `http://127.0.0.1:${port}`);
    fake.keys.push(await createSigningKey());
    server.on('request', (req, res) => {
      fake.route(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
    return fake;
  }

  get issuer(): string {
    return `${this.url}/t/${this.tenantId}`;
  }

  claims(): Record<string, unknown> {
    const now = Math.floor(Date.now() / 1000);
    return {
      iss: this.issuer,
      sub: randomUUID(),
      email: 'ada@example.com',
      tid: this.tenantId,
      sid: randomUUID(),
      roles: ['admin'],
      scope: 'openid profile',
      iat: now,
      exp: now + 600,
      jti: randomUUID(),
    };
  }

  async sign(options: SignOptions = {}): Promise<string> {
    const key = options.key ?? this.keys[0];
    if (!key) throw new Error('no signing key');
    const claims: Record<string, unknown> = { ...this.claims(), ...options.claims };
    for (const [name, value] of Object.entries(claims))
      if (value === undefined) delete claims[name];
    const header = { alg: 'RS256', typ: 'at+jwt', kid: key.kid, ...options.header };
    for (const [name, value] of Object.entries(header)) {
      if (value === undefined) delete (header as Record<string, unknown>)[name];
    }
    return new SignJWT(claims).setProtectedHeader(header).sign(key.privateKey);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url ?? '/';
    if (req.method === 'GET' && path === `/t/${this.tenantId}/.well-known/jwks.json`) {
      this.jwksRequests += 1;
      if (this.jwksStatus !== 200) return send(res, this.jwksStatus, { error: 'unavailable' });
      return send(res, 200, { keys: this.keys.map((key) => key.jwk) });
    }
    if (req.method === 'POST' && path === '/api/auth/introspect') {
      this.introspectionRequests += 1;
      return this.introspect(req, res);
    }
    return problem(res, 404, 'not_found');
  }

  private async introspect(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.headers.authorization !== `Bearer ${this.secretKey}`) {
      return problem(res, 401, 'unauthorized');
    }
    if (this.introspectionProblem) {
      const { status, code, retryAfter } = this.introspectionProblem;
      if (retryAfter !== undefined) res.setHeader('retry-after', String(retryAfter));
      return problem(res, status, code);
    }
    if (req.headers['content-type'] !== 'application/json') {
      return problem(res, 415, 'unsupported_media_type');
    }
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return problem(res, 400, 'invalid_request');
    }
    const token = (body as { token?: unknown } | null)?.token;
    if (typeof token !== 'string') return problem(res, 400, 'invalid_request');
    try {
      const { payload } = await jwtVerify(
        token,
        createLocalJWKSet({ keys: this.keys.map((key) => key.jwk) }),
        { algorithms: ['RS256'], typ: 'at+jwt', issuer: this.issuer },
      );
      if (payload.tid !== this.tenantId || this.revokedSessions.has(String(payload.sid))) {
        return send(res, 200, { active: false });
      }
      return send(res, 200, { active: true, ...payload });
    } catch {
      return send(res, 200, { active: false });
    }
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}

function problem(res: ServerResponse, status: number, code: string): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/problem+json');
  res.end(
    JSON.stringify({
      type: `tag:latchkey.dev,2026:problem:${code}`,
      title: code,
      status,
      detail: `fake ${code}`,
      code,
    }),
  );
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A URL on 127.0.0.1 where nothing listens. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}
