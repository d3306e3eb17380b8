/**
 * The OpenAPI document as tools read it: Redocly's recommended rules find no error, and a
 * client generated from it (openapi-typescript types, openapi-fetch) signs a user up and
 * redeems a hosted sign-in's PKCE code with no hand-written request shapes.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import createClient from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestTenant } from '../../server/test/support.js';
import type { paths } from '../generated/latchkey-api.js';
import { PASSWORD, startLatchkey } from './latchkey.js';

const GENERATED = new URL('../generated/latchkey-api.d.ts', import.meta.url);
const REDOCLY = new URL('../../../node_modules/.bin/redocly', import.meta.url).pathname;
const ORIGIN = 'http://localhost:5173';

let app: TestApp;
let t: TestTenant;
let document: Record<string, unknown>;

beforeAll(async () => {
  app = await startLatchkey();
  t = await app.tenant({ allowedOrigins: [ORIGIN] });
  document = (await (await app.request('/v1/openapi.json')).json()) as Record<string, unknown>;
});
afterAll(() => app.dispose());

describe('the OpenAPI document', () => {
  it('passes `redocly lint` with the recommended rules, without errors', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'latchkey-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      await writeFile(file, JSON.stringify(document));
      // Offline: no telemetry, no update check.
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [REDOCLY, 'lint', '--extends', 'recommended', '--format', 'json', file],
        {
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        },
      ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
      const report = JSON.parse(stdout) as {
        totals: { errors: number };
        problems: { ruleId: string; severity: string; message: string }[];
      };
      expect(report.problems.filter((p) => p.severity === 'error')).toEqual([]);
      expect(report.totals.errors).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('generates the committed client types (regenerate: LATCHKEY_UPDATE_GENERATED=1)', async () => {
    const generated = astToString(await openapiTS(document as never));
    if (process.env.LATCHKEY_UPDATE_GENERATED === '1') await writeFile(GENERATED, generated);
    expect(await readFile(GENERATED, 'utf8')).toBe(generated);
  });
});

/** The hosted page's PKCE sign-in, as a browser does it; returns the redirect fragment. */
async function hostedSignIn(email: string, verifier: string): Promise<URLSearchParams> {
  const q = new URLSearchParams({
    pk: t.publishableKey,
    redirect_url: `${ORIGIN}/callback`,
    state: 'interop',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const page = await app.request(`/sign-in?${q}`);
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  const res = await app.request(`/sign-in?${q}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ _csrf: csrf, email, password: PASSWORD }).toString(),
  });
  return new URLSearchParams(new URL(res.headers.get('location') ?? '').hash.slice(1));
}

describe('a client generated with openapi-typescript and openapi-fetch', () => {
  it('signs a user up with the secret key and redeems a PKCE code with the publishable key', async () => {
    const api = createClient<paths>({ baseUrl: app.url });
    const email = `generated-${randomBytes(4).toString('hex')}@example.com`;
    const signUp = await api.POST('/v1/auth/sign-up', {
      headers: { authorization: `Bearer ${t.secretKey}` },
      body: { email, password: PASSWORD },
    });
    expect(signUp.response.status).toBe(201);
    expect(signUp.data?.email).toBe(email);

    const again = await api.POST('/v1/auth/sign-up', {
      headers: { authorization: `Bearer ${t.secretKey}` },
      body: { email, password: PASSWORD },
    });
    expect(again.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(again.error?.code).toBe('email_taken');

    const verifier = randomBytes(32).toString('base64url');
    const fragment = await hostedSignIn(email, verifier);
    const code = fragment.get('code') ?? '';
    expect(code).not.toBe('');
    const tokens = await api.POST('/v1/client/token', {
      // A browser adds Origin itself: the page the code was sent to.
      headers: { 'X-Latchkey-Publishable-Key': t.publishableKey, origin: ORIGIN },
      body: { grant_type: 'authorization_code', code, code_verifier: verifier },
    });
    expect(tokens.error).toBeUndefined();
    expect(tokens.response.status).toBe(200);
    expect(tokens.data?.refreshToken).toMatch(/^lkr_/);
    expect(tokens.data?.tokenType).toBe('Bearer');
  });
});
