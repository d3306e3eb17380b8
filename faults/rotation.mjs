// F6: `latchkey signing-key rotate` under load. Tokens are minted all along (refresh-token
// exchanges) and each is checked at once by @latchkey/node's verifyToken (local, against the
// JWKS, with one long-lived verifier as a customer's server holds it) and by introspection.
// The new key signs 120 s after the rotation, so this fault runs that long, beside the others.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { agent, client, lanes } from './lib/http.mjs';
import { stop, tempDir } from './lib/procs.mjs';
import { cli, createTenant, ROOT, startServer } from './lib/services.mjs';
import { signedIn } from './redis-outage.mjs';

const LANES = 2;
const PACE_MS = 150;
const ROTATE_AT_MS = 3000;
/** How long the load goes on once the new key signs. */
const AFTER_ACTIVATION_MS = 8000;

const kidOf = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[0], 'base64url').toString()).kid;

export async function f6() {
  const sdk = await import(pathToFileURL(join(ROOT, 'packages/node/dist/index.js')).href);
  const dir = tempDir('rotation');
  const env = { DATABASE_URL: `sqlite:${dir}/latchkey.db` };
  const tenant = await createTenant(env);
  const server = await startServer(env);
  try {
    const api = client(server.url, tenant.secretKey, agent());
    const latchkey = sdk.createLatchkey({
      apiUrl: server.url,
      tenantId: tenant.id,
      secretKey: tenant.secretKey,
    });
    const sessions = await signedIn(api, LANES, 'f6');
    const failures = { mint: 0, verifyToken: 0, introspect: 0 };
    const reasons = new Set();
    const kids = new Map();
    let activation = Number.POSITIVE_INFINITY;
    let verified = 0;
    const load = lanes(
      LANES,
      async (i) => {
        const session = sessions[i % LANES];
        const r = await api.post('/v1/auth/token', { refreshToken: session.refreshToken });
        if (r.status !== 200) {
          failures.mint++;
          reasons.add(`mint ${r.status || r.error}`);
          await sleep(PACE_MS);
          return;
        }
        session.refreshToken = r.json.refreshToken;
        const token = r.json.accessToken;
        kids.set(kidOf(token), (kids.get(kidOf(token)) ?? 0) + 1);
        const [local, remote] = await Promise.allSettled([
          latchkey.verifyToken(token),
          latchkey.introspect(token),
        ]);
        if (local.status === 'rejected') {
          failures.verifyToken++;
          reasons.add(`verifyToken ${local.reason?.code ?? local.reason}`);
        }
        if (remote.status === 'rejected' || remote.value?.active !== true) {
          failures.introspect++;
          reasons.add(`introspect ${remote.reason?.code ?? 'inactive'}`);
        }
        verified++;
        await sleep(PACE_MS);
      },
      { shouldStop: () => performance.now() > activation + AFTER_ACTIVATION_MS },
    );
    await sleep(ROTATE_AT_MS);
    const rotated = JSON.parse(
      await cli(['signing-key', 'rotate', '--tenant', tenant.id, '--json'], env),
    );
    activation = performance.now() + (Date.parse(rotated.activatesAt) - Date.now());
    await load;
    const newKidTokens = kids.get(rotated.kid) ?? 0;
    const failed = failures.mint + failures.verifyToken + failures.introspect;
    const ok = failed === 0 && newKidTokens > 0;
    return {
      ok,
      line:
        `F6 signing_key_rotation tokens_checked=${verified} failed_verifyToken=${failures.verifyToken}` +
        ` failed_introspection=${failures.introspect} (goal 0 each) failed_mint=${failures.mint}` +
        ` tokens_by_new_key=${newKidTokens} by_old_key=${verified - newKidTokens}` +
        (reasons.size ? ` reasons=${[...reasons].join(';').replaceAll(' ', '_')}` : ''),
    };
  } finally {
    await stop(server.child);
  }
}
