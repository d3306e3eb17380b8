/**
 * Test harness: real OAuth 2 / OpenID Connect provider servers on 127.0.0.1 that play Google,
 * Microsoft, Apple (OpenID Connect, served by `oidc-provider`) and GitHub, Facebook (small plain
 * OAuth 2 servers on node:http), for end-to-end tests of social sign-in.
 *
 * Latchkey reaches them only through `LATCHKEY_PROVIDER_ENDPOINTS` (see `endpointsJson()`).
 *
 * Sign-in is automatic: an authorization request is answered at once, as if the user were
 * already signed in at the provider and had consented before. For the OIDC providers the
 * harness drives oidc-provider's login and consent interactions itself (server side, with its
 * own cookie jar), so the user agent sees one response: a redirect to the redirect_uri, or for
 * Apple's `response_mode=form_post` an auto-submitting HTML form that POSTs to it.
 *
 * `next(account)` chooses who signs in from now on (accounts stick); `next('cancel' | 'down' |
 * 'garbage')` is a one-shot mishap for the next authorization request: 'cancel' answers it with
 * error=access_denied; 'down' and 'garbage' let it succeed (the current account signs in) and then
 * break the token endpoint request that follows it (503, or 200 with a non-JSON body).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportPKCS8, generateKeyPair, importPKCS8, jwtVerify, SignJWT } from 'jose';
import Provider, {
  type AdapterFactory,
  type AdapterPayload,
  type Configuration,
} from 'oidc-provider';

export type ProviderId = 'google' | 'microsoft' | 'apple' | 'github' | 'facebook';
export const PROVIDER_IDS: readonly ProviderId[] = [
  'google',
  'microsoft',
  'apple',
  'github',
  'facebook',
];

export interface ProviderAccount {
  /** The provider's user id. GitHub: a numeric string gives that numeric id (else one is derived). */
  sub: string;
  email?: string;
  /** Default true. Microsoft never asserts it; Facebook hides unconfirmed e-mails. */
  emailVerified?: boolean;
  name?: string;
  /** Microsoft: directory id for the `tid` claim (default: the server's `tenantId`). */
  tid?: string;
  /** Microsoft: user object id for the `oid` claim (default: derived from sub). */
  oid?: string;
  /** Apple: relay address (default: true for `@privaterelay.appleid.com` addresses). */
  isPrivateEmail?: boolean;
  /**
   * The account's picture URL, sent as is. Google: the `picture` claim (none when absent);
   * GitHub: `avatar_url` (default: the avatars.githubusercontent.com one of the id);
   * Facebook: `picture.data.url` of /me (default: a silhouette on platform-lookaside).
   */
  picture?: string;
}

export type ProviderOutcome = ProviderAccount | 'cancel' | 'garbage' | 'down';

export interface ProviderServer {
  id: ProviderId;
  /** The value for LATCHKEY_PROVIDER_ENDPOINTS[id]. */
  endpoints: Record<string, string>;
  /** What to register in Latchkey. Apple: a ready-made client secret JWT (valid 24 h); see AppleProviderServer. */
  clientId: string;
  clientSecret: string;
  /**
   * Who signs in at the next authorization request (and after it, until changed), or a one-shot
   * mishap for the next flow: 'cancel' (user denies: error=access_denied), 'garbage' (token
   * endpoint answers 200 with a non-JSON body) or 'down' (token endpoint answers 503).
   */
  next(outcome: ProviderOutcome): void;
  /** Requests from outside (the user agent, Latchkey), in order; path has no query. */
  requests: { path: string; method: string }[];
  close(): Promise<void>;
}

export interface MicrosoftProviderServer extends ProviderServer {
  id: 'microsoft';
  /** The directory id in the issuer `http://127.0.0.1:P/<tenantId>/v2.0`. */
  tenantId: string;
}

export interface AppleProviderServer extends ProviderServer {
  id: 'apple';
  teamId: string;
  keyId: string;
  /** PKCS#8 PEM of the EC P-256 key that signs client secrets (ES256). */
  privateKeyPem: string;
}

export type ProviderServerFor<I extends ProviderId> = I extends 'apple'
  ? AppleProviderServer
  : I extends 'microsoft'
    ? MicrosoftProviderServer
    : ProviderServer;

export type ProviderServers = { [I in ProviderId]: ProviderServerFor<I> } & {
  /** JSON for LATCHKEY_PROVIDER_ENDPOINTS. */
  endpointsJson(): string;
  close(): Promise<void>;
};

/** Who signs in until `next(account)` says otherwise. */
export const DEFAULT_ACCOUNTS: Record<ProviderId, ProviderAccount> = {
  google: { sub: '104812345678901234567', email: 'ada@example.com', name: 'Ada Lovelace' },
  microsoft: {
    sub: 'AAAAAAAAAAAAAAAAAAAAAMoV8t3Xa9lFkT3P1Hd2S0E',
    email: 'ada@contoso.example',
    name: 'Ada Lovelace',
  },
  apple: { sub: '001234.5f6e7d8c9b0a4f1e2d3c4b5a69788796.1234', email: 'ada@example.com' },
  github: { sub: '583231', email: 'ada@example.com', name: 'Ada Lovelace' },
  facebook: { sub: '10160123456789012', email: 'ada@example.com', name: 'Ada Lovelace' },
};

const MICROSOFT_TENANT_ID = '9188040d-6c67-4c5b-b112-36a304b66dad';

/** Makes an Apple client secret: an ES256 JWT signed with the team's key (as Latchkey must). */
export async function appleClientSecret(options: {
  teamId: string;
  keyId: string;
  privateKeyPem: string;
  clientId: string;
  /** The issuer (the real Apple: https://appleid.apple.com). */
  audience: string;
  expiresInSeconds?: number;
}): Promise<string> {
  const key = await importPKCS8(options.privateKeyPem, 'ES256');
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: options.keyId })
    .setIssuer(options.teamId)
    .setSubject(options.clientId)
    .setAudience(options.audience)
    .setIssuedAt(now)
    .setExpirationTime(now + (options.expiresInSeconds ?? 300))
    .sign(key);
}

// ---------------------------------------------------------------------------------------------
// Shared plumbing

type Mishap = 'cancel' | 'garbage' | 'down';

/** What the next flows do. */
class Script {
  account: ProviderAccount;
  readonly accounts = new Map<string, ProviderAccount>();
  private mishap: Mishap | undefined;
  private tokenFailure: 'garbage' | 'down' | undefined;

  constructor(account: ProviderAccount) {
    this.account = account;
    this.accounts.set(account.sub, account);
  }

  next(outcome: ProviderOutcome): void {
    if (typeof outcome === 'string') {
      if (!['cancel', 'garbage', 'down'].includes(outcome)) {
        throw new TypeError(`unknown outcome ${outcome}`);
      }
      this.mishap = outcome;
      return;
    }
    if (!outcome || typeof outcome.sub !== 'string' || !outcome.sub) {
      throw new TypeError('an account needs a non-empty sub');
    }
    this.account = { ...outcome };
    this.accounts.set(outcome.sub, this.account);
  }

  /** Taken by each authorization request. */
  takeAuthorization(): {
    account: ProviderAccount;
    cancel: boolean;
    breakToken?: 'garbage' | 'down';
  } {
    const mishap = this.mishap;
    this.mishap = undefined;
    if (mishap === 'cancel') return { account: this.account, cancel: true };
    return mishap
      ? { account: this.account, cancel: false, breakToken: mishap }
      : { account: this.account, cancel: false };
  }

  /** Called once an authorization response carrying a code went out. */
  armToken(failure: 'garbage' | 'down' | undefined): void {
    this.tokenFailure = failure;
  }

  /** Taken by each token endpoint request. */
  takeTokenFailure(): 'garbage' | 'down' | undefined {
    const failure = this.tokenFailure;
    this.tokenFailure = undefined;
    return failure;
  }
}

/** Answers a token request that the script breaks; true when it did. */
function breakToken(failure: 'garbage' | 'down' | undefined, res: ServerResponse): boolean {
  if (failure === 'down') {
    res.writeHead(503, { 'content-type': 'text/html; charset=utf-8', 'retry-after': '30' });
    res.end('<html><body><h1>503 Service Unavailable</h1></body></html>');
    return true;
  }
  if (failure === 'garbage') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<html><body>Something went wrong. Please try again later.</body></html>');
    return true;
  }
  return false;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 256 * 1024) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parameters from the query string, and from a form or JSON body. */
async function readParams(req: IncomingMessage, url: URL): Promise<URLSearchParams> {
  const params = new URLSearchParams(url.searchParams);
  if (req.method === 'POST') {
    const body = await readBody(req);
    const type = String(req.headers['content-type'] ?? '');
    if (type.includes('application/json')) {
      const parsed: unknown = body ? JSON.parse(body) : {};
      if (parsed && typeof parsed === 'object') {
        for (const [key, value] of Object.entries(parsed)) params.set(key, String(value));
      }
    } else {
      for (const [key, value] of new URLSearchParams(body)) params.set(key, value);
    }
  }
  return params;
}

/** HTTP Basic client credentials, when sent. */
function basicCredentials(req: IncomingMessage): { id: string; secret: string } | undefined {
  const header = req.headers.authorization;
  if (!header?.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return {
    id: decodeURIComponent(decoded.slice(0, colon)),
    secret: decodeURIComponent(decoded.slice(colon + 1)),
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
  });
  res.end(JSON.stringify(body));
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(text);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { location, 'cache-control': 'no-store' });
  res.end();
}

function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

function token(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

/** A deterministic UUID-looking id from a string. */
function uuidFrom(value: string): string {
  const hex = createHash('sha256').update(value).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function htmlEscape(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

interface Listening {
  server: Server;
  origin: string;
  close(): Promise<void>;
}

/** A node:http server on 127.0.0.1 with a free port, logging outside requests. */
async function listen(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<Listening> {
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      console.error('provider harness: request failed', error);
      if (!res.headersSent) sendText(res, 500, 'internal error in the provider harness');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    server,
    origin: `http://127.0.0.1:${port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// OpenID Connect providers (oidc-provider)

interface OidcShape {
  scopes: string[];
  claims: Record<string, string[]>;
  accountClaims(account: ProviderAccount): Record<string, unknown>;
  /** Apple: form_post required with scopes, `user` on the first sign-in, JWT client secrets. */
  apple: boolean;
}

const GOOGLE: OidcShape = {
  scopes: ['openid', 'email', 'profile'],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'given_name', 'family_name', 'picture'],
  },
  accountClaims(account) {
    const [given, ...family] = (account.name ?? '').split(' ');
    return {
      sub: account.sub,
      ...(account.email === undefined
        ? {}
        : { email: account.email, email_verified: account.emailVerified ?? true }),
      ...(account.name === undefined
        ? {}
        : { name: account.name, given_name: given, family_name: family.join(' ') || undefined }),
      ...(account.picture === undefined ? {} : { picture: account.picture }),
    };
  },
  apple: false,
};

function microsoftShape(tenantId: string): OidcShape {
  return {
    scopes: ['openid', 'email', 'profile', 'offline_access'],
    claims: {
      openid: ['sub', 'tid', 'oid', 'ver'],
      email: ['email'],
      profile: ['name', 'preferred_username'],
    },
    accountClaims(account) {
      // Microsoft never says whether the e-mail is verified: no email_verified claim.
      return {
        sub: account.sub,
        ver: '2.0',
        tid: account.tid ?? tenantId,
        oid: account.oid ?? uuidFrom(`oid:${account.sub}`),
        ...(account.email === undefined
          ? {}
          : { email: account.email, preferred_username: account.email }),
        ...(account.name === undefined ? {} : { name: account.name }),
      };
    },
    apple: false,
  };
}

function isPrivateRelay(account: ProviderAccount): boolean {
  return account.isPrivateEmail ?? account.email?.endsWith('@privaterelay.appleid.com') ?? false;
}

const APPLE: OidcShape = {
  scopes: ['openid', 'email', 'name'],
  claims: { openid: ['sub'], email: ['email', 'email_verified', 'is_private_email'], name: [] },
  accountClaims(account) {
    // Apple sends booleans as strings, and never puts the name in the ID token.
    return {
      sub: account.sub,
      ...(account.email === undefined
        ? {}
        : {
            email: account.email,
            email_verified: String(account.emailVerified ?? true),
            ...(isPrivateRelay(account) ? { is_private_email: 'true' } : {}),
          }),
    };
  },
  apple: true,
};

/** oidc-provider's storage: a Map per provider (the built-in one warns on every start). */
function memoryAdapter(): AdapterFactory {
  const store = new Map<string, { payload: AdapterPayload; expiresAt: number }>();
  const live = (key: string) => {
    const entry = store.get(key);
    if (entry && entry.expiresAt < Date.now()) store.delete(key);
    return entry && entry.expiresAt >= Date.now() ? entry.payload : undefined;
  };
  const findBy = (name: string, match: (payload: AdapterPayload) => boolean) => {
    for (const [key, entry] of store) {
      if (key.startsWith(`${name}:`) && match(entry.payload)) return live(key);
    }
    return undefined;
  };
  return (name) => ({
    async upsert(id, payload, expiresIn) {
      const expiresAt = expiresIn ? Date.now() + expiresIn * 1000 : Number.POSITIVE_INFINITY;
      store.set(`${name}:${id}`, { payload: { ...payload }, expiresAt });
    },
    async find(id) {
      return live(`${name}:${id}`);
    },
    async findByUid(uid) {
      return findBy(name, (payload) => payload.uid === uid);
    },
    async findByUserCode(userCode) {
      return findBy(name, (payload) => payload.userCode === userCode);
    },
    async consume(id) {
      const payload = live(`${name}:${id}`);
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    },
    async destroy(id) {
      store.delete(`${name}:${id}`);
    },
    async revokeByGrantId(grantId) {
      for (const [key, entry] of store) if (entry.payload.grantId === grantId) store.delete(key);
    },
  });
}

interface Flow {
  account: ProviderAccount;
  cancel: boolean;
}

async function startOidc(
  id: 'google' | 'microsoft' | 'apple',
  redirectUri: string,
): Promise<ProviderServer | AppleProviderServer | MicrosoftProviderServer> {
  const script = new Script(DEFAULT_ACCOUNTS[id]);
  const requests: ProviderServer['requests'] = [];
  const prefix = id === 'microsoft' ? `/${MICROSOFT_TENANT_ID}/v2.0` : '';
  const shape =
    id === 'google' ? GOOGLE : id === 'apple' ? APPLE : microsoftShape(MICROSOFT_TENANT_ID);
  const clientId =
    id === 'google'
      ? `${randomBytes(6).toString('hex')}-harness.apps.googleusercontent.com`
      : id === 'microsoft'
        ? randomUUID()
        : 'com.example.latchkey.signin';
  // Registered in oidc-provider. Apple's is never seen outside: clients send a JWT instead.
  const registeredSecret = token();
  const internalKey = token();
  const flows = new Map<string, Flow>();
  const signedInBefore = new Set<string>();

  let provider: Provider | undefined;
  let callback: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined;
  const apple = shape.apple
    ? {
        teamId: randomBytes(5).toString('hex').toUpperCase(),
        keyId: randomBytes(5).toString('hex').toUpperCase(),
        ...(await generateKeyPair('ES256', { extractable: true })),
      }
    : undefined;

  const listening = await listen(async (req, res) => {
    if (!provider || !callback) return sendText(res, 503, 'starting');
    const internal = req.headers['x-harness-internal'] === internalKey;
    const url = new URL(req.url ?? '/', listening.origin);
    if (!internal) requests.push({ path: url.pathname, method: req.method ?? 'GET' });
    if (prefix) {
      if (url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`)) {
        return sendText(res, 404, 'Not Found');
      }
      // Mounted under the prefix: oidc-provider reads the mount path from originalUrl.
      const original = req.url ?? '/';
      (req as IncomingMessage & { originalUrl?: string }).originalUrl = original;
      req.url = original.slice(prefix.length) || '/';
    }
    const path = new URL(req.url ?? '/', listening.origin).pathname;

    if (internal) {
      const interaction = /^\/interaction\/([^/]+)$/.exec(path);
      if (interaction) return finishInteraction(req, res);
      return callback(req, res);
    }
    if (path === '/auth' && (req.method === 'GET' || req.method === 'POST')) {
      return authorize(req, res, url);
    }
    if (path === '/token' && req.method === 'POST') {
      if (breakToken(script.takeTokenFailure(), res)) return;
      if (apple) return appleToken(req, res, url);
      return callback(req, res);
    }
    if (path.startsWith('/interaction/')) return sendText(res, 404, 'Not Found');
    return callback(req, res);
  });
  const issuer = `${listening.origin}${prefix}`;

  /** Login and consent at once, for the account of the flow. */
  async function finishInteraction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!provider) throw new Error('provider not started');
    const flow = flows.get(String(req.headers['x-harness-flow']));
    if (!flow) return sendText(res, 400, 'unknown flow');
    if (flow.cancel) {
      return provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'The user denied the request.' },
        { mergeWithLastSubmission: false },
      );
    }
    const details = await provider.interactionDetails(req, res);
    const accountId = flow.account.sub;
    const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope ?? 'openid'));
    const claimsParam = details.params.claims;
    if (typeof claimsParam === 'string') {
      const parsed = JSON.parse(claimsParam) as Record<string, Record<string, unknown> | null>;
      const names = new Set<string>();
      for (const member of Object.values(parsed)) {
        for (const name of Object.keys(member ?? {})) names.add(name);
      }
      grant.addOIDCClaims(names);
    }
    const grantId = await grant.save();
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  }

  /**
   * The authorization endpoint as seen from outside: runs oidc-provider's authorization request,
   * interaction and resume here, and hands the user agent the final answer.
   */
  async function authorize(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const params = new URLSearchParams(url.searchParams);
    if (body !== undefined)
      for (const [key, value] of new URLSearchParams(body)) params.set(key, value);
    const scopes = new Set((params.get('scope') ?? '').split(' '));
    if (shape.apple && (scopes.has('email') || scopes.has('name'))) {
      if (params.get('response_mode') !== 'form_post') {
        // As Apple: scopes need form_post, or the request fails on Apple's own page.
        return sendText(
          res,
          400,
          'invalid_request: response_mode must be form_post when name or email scope is requested',
        );
      }
    }
    const plan = script.takeAuthorization();
    const flowId = randomUUID();
    flows.set(flowId, { account: plan.account, cancel: plan.cancel });
    try {
      const jar = new Map<string, string>();
      let target = new URL(url.href);
      let method = req.method ?? 'GET';
      let sending = body;
      for (let hop = 0; hop < 10; hop++) {
        const headers: Record<string, string> = {
          'x-harness-internal': internalKey,
          'x-harness-flow': flowId,
        };
        if (jar.size) {
          headers.cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
        }
        if (sending !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
        const response = await fetch(target, {
          method,
          headers,
          redirect: 'manual',
          ...(sending === undefined ? {} : { body: sending }),
        });
        for (const cookie of response.headers.getSetCookie()) {
          const pair = cookie.split(';', 1)[0] ?? '';
          const eq = pair.indexOf('=');
          if (eq <= 0) continue;
          const name = pair.slice(0, eq).trim();
          const value = pair.slice(eq + 1).trim();
          if (value) jar.set(name, value);
          else jar.delete(name);
        }
        const location = response.headers.get('location');
        if (response.status >= 300 && response.status < 400 && location) {
          const nextUrl = new URL(location, target);
          if (nextUrl.origin === listening.origin && nextUrl.pathname.startsWith(`${prefix}/`)) {
            await response.arrayBuffer();
            target = nextUrl;
            method = 'GET';
            sending = undefined;
            continue;
          }
          // Leaving for the redirect_uri.
          if (nextUrl.searchParams.has('code')) signedIn(plan, scopes);
          res.writeHead(response.status, { location, 'cache-control': 'no-store' });
          res.end();
          await response.arrayBuffer();
          return;
        }
        let text = await response.text();
        if (response.ok && /<input type="hidden" name="code"/.test(text)) {
          const user = signedIn(plan, scopes);
          if (user) {
            text = text.replace(
              /(<input type="hidden" name="code"[^>]*\/>)/,
              `$1\n<input type="hidden" name="user" value="${htmlEscape(user)}"/>`,
            );
          }
        }
        // oidc-provider gives a form_post page carrying an error status 400; providers answer 200.
        const formPost = text.includes('<form method="post" action=');
        res.writeHead(formPost ? 200 : response.status, {
          'content-type': response.headers.get('content-type') ?? 'text/html; charset=utf-8',
          'cache-control': 'no-store',
        });
        res.end(text);
        return;
      }
      sendText(res, 500, 'too many redirects inside the provider harness');
    } finally {
      flows.delete(flowId);
    }
  }

  /** A code went out: arms a broken token endpoint if asked, and gives Apple's `user` value. */
  function signedIn(
    plan: ReturnType<Script['takeAuthorization']>,
    scopes: Set<string>,
  ): string | undefined {
    script.armToken(plan.breakToken);
    const first = !signedInBefore.has(plan.account.sub);
    signedInBefore.add(plan.account.sub);
    if (!shape.apple || !first) return undefined;
    const user: { name?: { firstName: string; lastName: string }; email?: string } = {};
    if (scopes.has('name') && plan.account.name) {
      const [firstName = '', ...rest] = plan.account.name.split(' ');
      user.name = { firstName, lastName: rest.join(' ') };
    }
    if (scopes.has('email') && plan.account.email) user.email = plan.account.email;
    return Object.keys(user).length ? JSON.stringify(user) : undefined;
  }

  /** Apple's token endpoint: client_secret must be an ES256 JWT from the team's key. */
  async function appleToken(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (!apple) throw new Error('not apple');
    const params = new URLSearchParams(await readBody(req));
    const secret = params.get('client_secret') ?? '';
    let valid = false;
    try {
      const { payload, protectedHeader } = await jwtVerify(secret, apple.publicKey, {
        algorithms: ['ES256'],
        issuer: apple.teamId,
        subject: params.get('client_id') ?? '',
        audience: issuer,
        requiredClaims: ['iat', 'exp'],
      });
      valid =
        protectedHeader.kid === apple.keyId &&
        payload.sub === clientId &&
        (payload.exp ?? 0) - (payload.iat ?? 0) <= 15_777_000;
    } catch {
      valid = false;
    }
    if (!valid) {
      return sendJson(res, 400, { error: 'invalid_client' });
    }
    params.set('client_secret', registeredSecret);
    const headers: Record<string, string> = {
      'x-harness-internal': internalKey,
      'content-type': 'application/x-www-form-urlencoded',
    };
    const response = await fetch(url, { method: 'POST', headers, body: params.toString() });
    const out: Record<string, string> = {};
    for (const name of ['content-type', 'cache-control', 'pragma', 'www-authenticate']) {
      const value = response.headers.get(name);
      if (value) out[name] = value;
    }
    res.writeHead(response.status, out);
    res.end(Buffer.from(await response.arrayBuffer()));
  }

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = {
    ...(await exportJWK(privateKey)),
    kid: token(8),
    alg: 'RS256',
    use: 'sig',
  };
  const configuration: Configuration = {
    adapter: memoryAdapter(),
    clients: [
      {
        client_id: clientId,
        client_secret: registeredSecret,
        redirect_uris: [redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: [token(32)] },
    pkce: { required: () => true },
    clientAuthMethods: shape.apple
      ? ['client_secret_post']
      : ['client_secret_post', 'client_secret_basic'],
    scopes: shape.scopes,
    claims: shape.claims,
    // Every granted claim goes into the ID token, as these providers do.
    conformIdTokenClaims: false,
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: false },
    },
    interactions: { url: (_ctx, interaction) => `${prefix}/interaction/${interaction.uid}` },
    async findAccount(_ctx, sub) {
      const account = script.accounts.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: () => ({ sub, ...shape.accountClaims(account) }) };
    },
    ttl: {
      AccessToken: 3600,
      AuthorizationCode: 600,
      IdToken: 3600,
      Interaction: 600,
      Session: 600,
      Grant: 600,
    },
    clientBasedCORS: () => false,
    async renderError(ctx, out) {
      ctx.type = 'json';
      ctx.body = out;
    },
  };
  provider = new Provider(issuer, configuration);
  provider.on('server_error', (_ctx: unknown, error: unknown) => {
    console.error(`provider harness (${id}): server_error`, error);
  });
  callback = provider.callback() as unknown as (
    req: IncomingMessage,
    res: ServerResponse,
  ) => Promise<void>;

  const base: ProviderServer = {
    id,
    endpoints: { issuer },
    clientId,
    clientSecret: registeredSecret,
    next: (outcome: ProviderOutcome) => script.next(outcome),
    requests,
    close: () => listening.close(),
  };
  if (id === 'microsoft') return { ...base, id, tenantId: MICROSOFT_TENANT_ID };
  if (apple) {
    const privateKeyPem = await exportPKCS8(apple.privateKey);
    return {
      ...base,
      id: 'apple',
      // A ready-made client secret for configurations that take one as is (valid for 24 h).
      clientSecret: await appleClientSecret({
        teamId: apple.teamId,
        keyId: apple.keyId,
        privateKeyPem,
        clientId,
        audience: issuer,
        expiresInSeconds: 24 * 3600,
      }),
      teamId: apple.teamId,
      keyId: apple.keyId,
      privateKeyPem,
    };
  }
  return base;
}

// ---------------------------------------------------------------------------------------------
// Plain OAuth 2 providers (node:http)

interface IssuedCode {
  account: ProviderAccount;
  redirectUri: string;
  scope: string;
  challenge: string | undefined;
  expiresAt: number;
}

interface IssuedToken {
  account: ProviderAccount;
  scope: string;
}

interface PlainShape {
  authorizePath: string;
  tokenPath: string;
  tokenMethods: string[];
  apiPrefix: string;
  /** The redirect for a user who said no. */
  denied(redirectUri: URL, state: string | null): string;
  tokenError(res: ServerResponse, error: string, description: string, req: IncomingMessage): void;
  tokenSuccess(res: ServerResponse, accessToken: string, scope: string, req: IncomingMessage): void;
  api(
    res: ServerResponse,
    path: string,
    url: URL,
    found: IssuedToken | undefined,
    req: IncomingMessage,
  ): void;
  /** Appended to redirects (Facebook's `#_=_`). */
  fragment: string;
}

function githubId(sub: string): number {
  if (/^\d{1,15}$/.test(sub)) return Number(sub);
  return Number.parseInt(createHash('sha256').update(sub).digest('hex').slice(0, 8), 16);
}

function githubLogin(account: ProviderAccount): string {
  const base = account.email?.split('@')[0] ?? account.name ?? `user${githubId(account.sub)}`;
  return (
    base.replace(/[^A-Za-z0-9-]+/g, '-').replace(/^-+|-+$/g, '') || `user${githubId(account.sub)}`
  );
}

const GITHUB: PlainShape = {
  authorizePath: '/login/oauth/authorize',
  tokenPath: '/login/oauth/access_token',
  tokenMethods: ['POST'],
  apiPrefix: '/api',
  fragment: '',
  denied(redirectUri, state) {
    redirectUri.searchParams.set('error', 'access_denied');
    redirectUri.searchParams.set(
      'error_description',
      'The user has denied your application access.',
    );
    redirectUri.searchParams.set(
      'error_uri',
      'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#access-denied',
    );
    if (state !== null) redirectUri.searchParams.set('state', state);
    return redirectUri.href;
  },
  // GitHub answers token errors with 200, in the format that Accept asks for.
  tokenError(res, error, description, req) {
    githubTokenAnswer(res, { error, error_description: description }, req);
  },
  tokenSuccess(res, accessToken, scope, req) {
    githubTokenAnswer(res, { access_token: accessToken, token_type: 'bearer', scope }, req);
  },
  api(res, path, _url, found, req) {
    if (!req.headers['user-agent']) {
      return sendText(
        res,
        403,
        'Request forbidden by administrative rules. Please make sure your request has a User-Agent header.',
      );
    }
    if (!found) {
      return sendJson(res, 401, {
        message: 'Bad credentials',
        documentation_url: 'https://docs.github.com/rest',
        status: '401',
      });
    }
    const { account } = found;
    const id = githubId(account.sub);
    const login = githubLogin(account);
    if (path === '/user') {
      return sendJson(res, 200, {
        login,
        id,
        node_id: Buffer.from(`04:User${id}`).toString('base64'),
        type: 'User',
        name: account.name ?? null,
        email: null,
        html_url: `https://github.com/${login}`,
        avatar_url: account.picture ?? `https://avatars.githubusercontent.com/u/${id}?v=4`,
      });
    }
    if (path === '/user/emails') {
      const scopes = found.scope.split(/[ ,]+/);
      if (!scopes.includes('user:email') && !scopes.includes('user')) {
        return sendJson(res, 404, {
          message: 'Not Found',
          documentation_url: 'https://docs.github.com/rest/users/emails',
          status: '404',
        });
      }
      const emails: {
        email: string;
        primary: boolean;
        verified: boolean;
        visibility: string | null;
      }[] = [];
      emails.push({
        email: `${login.toLowerCase()}.old@example.net`,
        primary: false,
        verified: false,
        visibility: null,
      });
      if (account.email) {
        emails.push({
          email: account.email,
          primary: true,
          verified: account.emailVerified ?? true,
          visibility: 'private',
        });
      }
      emails.push({
        email: `${id}+${login}@users.noreply.github.com`,
        primary: false,
        verified: true,
        visibility: null,
      });
      return sendJson(res, 200, emails);
    }
    return sendJson(res, 404, { message: 'Not Found', status: '404' });
  },
};

function githubTokenAnswer(
  res: ServerResponse,
  body: Record<string, string>,
  req: IncomingMessage,
): void {
  if (String(req.headers.accept ?? '').includes('application/json')) {
    sendJson(res, 200, body);
    return;
  }
  res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' });
  res.end(new URLSearchParams(body).toString());
}

function facebookError(res: ServerResponse, status: number, message: string, code: number): void {
  sendJson(res, status, {
    error: { message, type: 'OAuthException', code, fbtrace_id: token(8) },
  });
}

const FACEBOOK: PlainShape = {
  authorizePath: '/dialog/oauth',
  tokenPath: '/oauth/access_token',
  tokenMethods: ['GET', 'POST'],
  apiPrefix: '/graph',
  fragment: '#_=_',
  denied(redirectUri, state) {
    redirectUri.searchParams.set('error', 'access_denied');
    redirectUri.searchParams.set('error_code', '200');
    redirectUri.searchParams.set('error_description', 'Permissions error');
    redirectUri.searchParams.set('error_reason', 'user_denied');
    if (state !== null) redirectUri.searchParams.set('state', state);
    return `${redirectUri.href}#_=_`;
  },
  tokenError(res, _error, description) {
    facebookError(res, 400, description, 100);
  },
  tokenSuccess(res, accessToken) {
    sendJson(res, 200, { access_token: accessToken, token_type: 'bearer', expires_in: 5183944 });
  },
  api(res, path, url, found) {
    if (!found) {
      return facebookError(res, 400, 'Invalid OAuth access token - Cannot parse access token', 190);
    }
    if (path !== '/me') {
      return facebookError(res, 400, `Unknown path components: ${path}`, 2500);
    }
    const { account } = found;
    const fields = (url.searchParams.get('fields') ?? 'id,name').split(',').map((f) => f.trim());
    const scopes = found.scope.split(/[ ,]+/);
    const body: Record<string, unknown> = { id: account.sub };
    if (fields.includes('name') && account.name) body.name = account.name;
    // The Graph API's picture field: a small square, a silhouette when none was uploaded.
    if (fields.includes('picture')) {
      body.picture = {
        data: {
          height: 50,
          is_silhouette: account.picture === undefined,
          url:
            account.picture ??
            `https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=${account.sub}&height=50&width=50&ext=1767225600&hash=AbZ${createHash('sha256').update(account.sub).digest('base64url').slice(0, 16)}`,
          width: 50,
        },
      };
    }
    // Only a confirmed e-mail, only with the email permission, and only when asked for.
    if (
      fields.includes('email') &&
      scopes.includes('email') &&
      account.email &&
      account.emailVerified !== false
    ) {
      body.email = account.email;
    }
    return sendJson(res, 200, body);
  },
};

async function startPlain(id: 'github' | 'facebook', redirectUri: string): Promise<ProviderServer> {
  const shape = id === 'github' ? GITHUB : FACEBOOK;
  const script = new Script(DEFAULT_ACCOUNTS[id]);
  const requests: ProviderServer['requests'] = [];
  const clientId = id === 'github' ? `Iv1.${randomBytes(8).toString('hex')}` : String(Date.now());
  const clientSecret = randomBytes(20).toString('hex');
  const codes = new Map<string, IssuedCode>();
  const tokens = new Map<string, IssuedToken>();

  const listening = await listen(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    requests.push({ path: url.pathname, method });

    if (url.pathname === shape.authorizePath && method === 'GET') {
      const params = url.searchParams;
      if (params.get('client_id') !== clientId) {
        return sendText(res, 400, 'Unknown client_id.');
      }
      const asked = params.get('redirect_uri') ?? redirectUri;
      if (asked !== redirectUri) {
        return sendText(res, 400, 'The redirect_uri is not registered for this application.');
      }
      if (
        id === 'facebook' &&
        params.get('response_type') &&
        params.get('response_type') !== 'code'
      ) {
        return sendText(res, 400, 'Unsupported response_type.');
      }
      const challenge = params.get('code_challenge') ?? undefined;
      if (challenge && (params.get('code_challenge_method') ?? 'plain') !== 'S256') {
        return sendText(res, 400, 'code_challenge_method must be S256.');
      }
      const state = params.get('state');
      const plan = script.takeAuthorization();
      const target = new URL(redirectUri);
      if (plan.cancel) return redirect(res, shape.denied(target, state));
      const code = token(15);
      codes.set(code, {
        account: plan.account,
        redirectUri: asked,
        scope: params.get('scope') ?? '',
        challenge,
        expiresAt: Date.now() + 10 * 60_000,
      });
      script.armToken(plan.breakToken);
      target.searchParams.set('code', code);
      if (state !== null) target.searchParams.set('state', state);
      return redirect(res, `${target.href}${shape.fragment}`);
    }

    if (url.pathname === shape.tokenPath && shape.tokenMethods.includes(method)) {
      const params = await readParams(req, url);
      if (breakToken(script.takeTokenFailure(), res)) return;
      const basic = basicCredentials(req);
      const sentId = params.get('client_id') ?? basic?.id;
      const sentSecret = params.get('client_secret') ?? basic?.secret;
      if (sentId !== clientId || sentSecret !== clientSecret) {
        return shape.tokenError(
          res,
          'incorrect_client_credentials',
          'The client_id and/or client_secret passed are incorrect.',
          req,
        );
      }
      const code = params.get('code') ?? '';
      const issued = codes.get(code);
      codes.delete(code);
      if (!issued || issued.expiresAt < Date.now()) {
        return shape.tokenError(
          res,
          'bad_verification_code',
          id === 'facebook'
            ? 'This authorization code has been used or has expired.'
            : 'The code passed is incorrect or expired.',
          req,
        );
      }
      const sentRedirect = params.get('redirect_uri');
      if ((sentRedirect !== null || id === 'facebook') && sentRedirect !== issued.redirectUri) {
        return shape.tokenError(
          res,
          'redirect_uri_mismatch',
          'The redirect_uri MUST match the registered callback URL for this application.',
          req,
        );
      }
      const verifier = params.get('code_verifier');
      if (issued.challenge !== undefined || verifier !== null) {
        if (
          verifier === null ||
          issued.challenge === undefined ||
          s256(verifier) !== issued.challenge
        ) {
          return shape.tokenError(res, 'invalid_grant', 'The code_verifier does not match.', req);
        }
      }
      const accessToken = id === 'github' ? `gho_${token(27)}` : `EAA${token(60)}`;
      tokens.set(accessToken, { account: issued.account, scope: issued.scope });
      return shape.tokenSuccess(res, accessToken, issued.scope, req);
    }

    if (url.pathname.startsWith(`${shape.apiPrefix}/`) && method === 'GET') {
      const header = req.headers.authorization ?? '';
      const match = /^(?:Bearer|token|OAuth) (.+)$/i.exec(header);
      const accessToken =
        match?.[1] ?? (id === 'facebook' ? url.searchParams.get('access_token') : null) ?? '';
      const found = tokens.get(accessToken);
      return shape.api(res, url.pathname.slice(shape.apiPrefix.length), url, found, req);
    }

    return sendText(res, 404, 'Not Found');
  });

  const { origin } = listening;
  return {
    id,
    endpoints: {
      authorizationEndpoint: `${origin}${shape.authorizePath}`,
      tokenEndpoint: `${origin}${shape.tokenPath}`,
      apiBase: `${origin}${shape.apiPrefix}`,
    },
    clientId,
    clientSecret,
    next: (outcome) => script.next(outcome),
    requests,
    close: () => listening.close(),
  };
}

// ---------------------------------------------------------------------------------------------
// Public entry points

/** Starts one provider whose only client is registered with `redirectUri`. */
export async function startProvider<I extends ProviderId>(
  id: I,
  options: { redirectUri: string },
): Promise<ProviderServerFor<I>> {
  const server =
    id === 'github' || id === 'facebook'
      ? await startPlain(id, options.redirectUri)
      : await startOidc(id as 'google' | 'microsoft' | 'apple', options.redirectUri);
  return server as ProviderServerFor<I>;
}

/** Starts all five. */
export async function startProviders(options: {
  redirectUriFor(id: ProviderId): string;
}): Promise<ProviderServers> {
  const started = await Promise.allSettled(
    PROVIDER_IDS.map((id) => startProvider(id, { redirectUri: options.redirectUriFor(id) })),
  );
  const servers = started.flatMap((result) =>
    result.status === 'fulfilled' ? [result.value] : [],
  );
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) {
    await Promise.all(servers.map((server) => server.close()));
    throw failed.reason;
  }
  const byId = Object.fromEntries(servers.map((server) => [server.id, server]));
  return {
    ...(byId as { [I in ProviderId]: ProviderServerFor<I> }),
    endpointsJson: () =>
      JSON.stringify(Object.fromEntries(servers.map((server) => [server.id, server.endpoints]))),
    close: async () => {
      await Promise.all(servers.map((server) => server.close()));
    },
  };
}
