/**
 * The real Latchkey server for the React suites (one per React version): a tenant that allows
 * happy-dom's origin, publishable keys, and browser sessions (hosted page and PKCE code).
 */
import type { TestProject } from 'vitest/node';
import { createKey } from '../../server/src/modules/keys/index.js';
import { browserSignIn, email, postJson, startApp } from '../../server/test/support.js';
import { PAGE_ORIGIN, PASSWORD, type ServerSession } from './shared.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const app = await startApp('sqlite');
  const t = await app.tenant({ allowedOrigins: [PAGE_ORIGIN] });
  const publishableKeys = [t.publishableKey];
  const sessions: ServerSession[] = [];
  for (let i = 0; i < 16; i++) {
    const key = await createKey(app.ctx.database.db, t.tenant.id, { kind: 'publishable' });
    publishableKeys.push(key.plaintext);
  }
  for (let i = 0; i < 10; i++) {
    const body = { email: email('react'), password: PASSWORD };
    const up = await postJson(app, '/v1/auth/sign-up', t.secretKey, body);
    if (up.status !== 201) throw new Error(`sign-up answered ${up.status}: ${await up.text()}`);
    // As the libraries hold them: a browser's session, from the hosted page and a PKCE code.
    const s = await browserSignIn(app, t, body, PAGE_ORIGIN);
    sessions.push({ email: body.email, ...pick(s) });
  }
  project.provide('authUrl', app.url);
  project.provide('publishableKeys', publishableKeys);
  project.provide('sessions', sessions);
  return () => app.dispose();
}

function pick(s: Record<string, unknown>): Omit<ServerSession, 'email'> {
  return {
    accessToken: s.accessToken as string,
    refreshToken: s.refreshToken as string,
    expiresIn: s.expiresIn as number,
  };
}
