/**
 * Several instances: two real server processes on one PostgreSQL schema and one Redis.
 * A session revoked through one instance answers inactive on the other within a second,
 * although the other had the session's state cached.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../src/modules/keys/index.js';
import { createTenant } from '../src/modules/tenants/index.js';
import { migrateToLatest, openDatabase } from '../src/storage/index.js';
import { listeningUrl, MAIN } from './cli-run.js';
import {
  eventually,
  freshDatabaseUrl,
  HAVE_POSTGRES,
  HAVE_REDIS,
  METRICS_AUTH,
  METRICS_TOKEN,
  REDIS_URL,
  SECRET,
} from './support.js';

const execFileAsync = promisify(execFile);
const PASSWORD = 'correct horse battery staple';

interface Instance {
  url: string;
  child: ChildProcess;
  output: string[];
}

async function start(env: Record<string, string>): Promise<Instance> {
  const output: string[] = [];
  const child = spawn(process.execPath, [MAIN, 'serve'], {
    env: {
      ...process.env,
      ...env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      METRICS_TOKEN,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d) => output.push(String(d)));
  child.stderr?.on('data', (d) => output.push(String(d)));
  const url = await listeningUrl(child).catch(() => {
    throw new Error(`instance exited: ${output.join('')}`);
  });
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`instance exited: ${output.join('')}`);
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) return { url, child, output };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`instance did not become ready: ${output.join('')}`);
}

async function stop(instance: Instance | undefined) {
  if (!instance || instance.child.exitCode !== null) return;
  const exited = new Promise((r) => instance.child.once('exit', r));
  instance.child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (instance.child.exitCode === null) instance.child.kill('SIGKILL');
}

async function cacheHits(instance: Instance): Promise<number> {
  const text = await (await fetch(`${instance.url}/metrics`, { headers: METRICS_AUTH })).text();
  return Number(/latchkey_session_cache_total\{result="hit"\} (\d+)/.exec(text)?.[1] ?? 0);
}

describe.runIf(HAVE_POSTGRES && HAVE_REDIS)('two instances on one PostgreSQL and one Redis', () => {
  let a: Instance | undefined;
  let b: Instance | undefined;
  let drop: () => Promise<void>;
  let secretKey: string;
  let tenantId: string;
  let databaseUrl = '';
  let limitedKey: string;
  /** A tenant with a publishable key and an allowed origin, for the hosted page. */
  const hostedTenant = { id: '', secretKey: '', publishableKey: '' };
  const ORIGIN = 'http://localhost:5173';

  beforeAll(async () => {
    const fresh = await freshDatabaseUrl('postgres');
    drop = fresh.drop;
    const database = openDatabase(fresh.url, { poolSize: 1 });
    await migrateToLatest(database.db as never);
    const tenant = await createTenant(database.db, {
      name: 'Shared',
      plan: 'enterprise',
      rps: 1000,
      rpm: 100_000,
    });
    secretKey = (await createKey(database.db, tenant.id, { kind: 'secret' })).plaintext;
    tenantId = tenant.id;
    const limited = await createTenant(database.db, {
      name: 'Limited',
      plan: 'enterprise',
      rps: 1000,
      rpm: 4,
    });
    limitedKey = (await createKey(database.db, limited.id, { kind: 'secret' })).plaintext;
    const hosted = await createTenant(database.db, {
      name: 'Hosted',
      plan: 'enterprise',
      rps: 1000,
      rpm: 100_000,
      allowedOrigins: [ORIGIN],
    });
    hostedTenant.id = hosted.id;
    hostedTenant.secretKey = (
      await createKey(database.db, hosted.id, { kind: 'secret' })
    ).plaintext;
    hostedTenant.publishableKey = (
      await createKey(database.db, hosted.id, { kind: 'publishable' })
    ).plaintext;
    await database.close();
    databaseUrl = fresh.url;
    const env = {
      DATABASE_URL: fresh.url,
      REDIS_URL,
      LATCHKEY_SECRET: SECRET,
      PUBLIC_URL: 'http://127.0.0.1:1',
    };
    [a, b] = await Promise.all([start(env), start(env)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([stop(a), stop(b)]);
    await drop?.();
  });

  const post = (instance: Instance | undefined, path: string, body: unknown) =>
    fetch(`${instance?.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const introspect = async (instance: Instance | undefined, token: string) =>
    (await (await post(instance, '/api/auth/introspect', { token })).json()) as { active: boolean };

  async function signedIn(address: string) {
    expect((await post(a, '/v1/auth/sign-up', { email: address, password: PASSWORD })).status).toBe(
      201,
    );
    const res = await post(a, '/v1/auth/sign-in', { email: address, password: PASSWORD });
    expect(res.status).toBe(200);
    return (await res.json()) as { accessToken: string; sessionId: string; user: { id: string } };
  }

  /** Waits until `instance` answers inactive for `token` (how fast is the benchmark's concern). */
  const untilInactive = (instance: Instance | undefined, token: string) =>
    eventually(async () => ((await introspect(instance, token)).active ? undefined : true));

  it('a session revoked on A turns inactive on B, though B had it cached', async () => {
    const s = await signedIn(`multi-${Date.now()}@example.com`);
    expect((await introspect(b, s.accessToken)).active).toBe(true);
    const hitsBefore = await cacheHits(b as Instance);
    expect((await introspect(b, s.accessToken)).active).toBe(true);
    expect(await cacheHits(b as Instance)).toBe(hitsBefore + 1);

    const revoke = await fetch(`${a?.url}/v1/sessions/${s.sessionId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${secretKey}` },
    });
    expect(revoke.status).toBe(204);
    await untilInactive(b, s.accessToken);
    expect((await introspect(a, s.accessToken)).active).toBe(false);
  });

  it("a session ended on B ends, at once, A's hosted-page sign-in that opened it", async () => {
    const address = `hosted-${Date.now()}@example.com`;
    const up = await fetch(`${a?.url}/v1/auth/sign-up`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${hostedTenant.secretKey}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ email: address, password: PASSWORD }),
    });
    expect(up.status).toBe(201);
    const query = new URLSearchParams({
      pk: hostedTenant.publishableKey,
      redirect_url: `${ORIGIN}/cb`,
    });
    const jar = new Map<string, string>();
    const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const keep = (res: Response) => {
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const at = (pair as string).indexOf('=');
        jar.set((pair as string).slice(0, at), (pair as string).slice(at + 1));
      }
    };
    const visit = async () => {
      const res = await fetch(`${a?.url}/sign-in?${query}`, {
        redirect: 'manual',
        headers: { cookie: cookie() },
      });
      keep(res);
      return res;
    };
    const page = await visit();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] as string;
    const signIn = await fetch(`${a?.url}/sign-in?${query}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie() },
      body: new URLSearchParams({ _csrf: csrf, email: address, password: PASSWORD }),
    });
    keep(signIn);
    expect(signIn.status).toBe(303);
    const token = new URLSearchParams(
      new URL(signIn.headers.get('location') as string).hash.slice(1),
    ).get('access_token');
    const claims = (await (
      await fetch(`${b?.url}/api/auth/introspect`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${hostedTenant.secretKey}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ token }),
      })
    ).json()) as { sid: string };
    expect((await visit()).status).toBe(303);
    const revoke = await fetch(`${b?.url}/v1/sessions/${claims.sid}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${hostedTenant.secretKey}` },
    });
    expect(revoke.status).toBe(204);
    // At once: the very next visit on A, with no wait.
    const after = await visit();
    expect(after.status).toBe(200);
    expect(await after.text()).toContain('id="password"');
  });

  it('a user disabled on B turns inactive on A', async () => {
    const s = await signedIn(`disable-${Date.now()}@example.com`);
    expect((await introspect(a, s.accessToken)).active).toBe(true);
    expect((await introspect(a, s.accessToken)).active).toBe(true);
    const patch = await fetch(`${b?.url}/v1/users/${s.user.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ disabled: true }),
    });
    expect(patch.status).toBe(200);
    await untilInactive(a, s.accessToken);
  });

  it('a key revoked with the CLI stops at once on both instances, though both had it cached', async () => {
    const env = { ...process.env, DATABASE_URL: databaseUrl, REDIS_URL, LATCHKEY_SECRET: SECRET };
    const cli = (args: string[]) => execFileAsync(process.execPath, [MAIN, ...args], { env });
    const created = JSON.parse(
      (await cli(['keys', 'create', '--tenant', tenantId, '--json'])).stdout,
    );
    const use = (instance: Instance | undefined) =>
      fetch(`${instance?.url}/v1/users?limit=1`, {
        headers: { authorization: `Bearer ${created.plaintext}` },
      }).then((r) => r.status);
    expect([await use(a), await use(b), await use(a), await use(b)]).toEqual([200, 200, 200, 200]);
    await cli(['keys', 'revoke', '--tenant', tenantId, created.key.id]);
    expect([await use(a), await use(b)]).toEqual([401, 401]);
  });

  it('both instances sign with one tenant key and count one rate-limit budget', async () => {
    const fromA = await signedIn(`key-a-${Date.now()}@example.com`);
    const jwks = (await (await fetch(`${b?.url}/t/${tenantId}/.well-known/jwks.json`)).json()) as {
      keys: { kid: string }[];
    };
    const kid = JSON.parse(
      Buffer.from(fromA.accessToken.split('.')[0] as string, 'base64url').toString(),
    ).kid;
    expect(jwks.keys.map((k) => k.kid)).toContain(kid);

    const strict = (body: unknown, instance: Instance | undefined) =>
      fetch(`${instance?.url}/v1/auth/sign-up`, {
        method: 'POST',
        headers: { authorization: `Bearer ${limitedKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.status);
    const cheap = { email: 'not-an-address', password: 'x' };
    const statuses = [
      await strict(cheap, a),
      await strict(cheap, b),
      await strict(cheap, a),
      await strict(cheap, b),
    ];
    expect(statuses).toEqual([422, 422, 422, 422]);
    expect(await strict(cheap, a)).toBe(429);
    expect(await strict(cheap, b)).toBe(429);
  });
});
