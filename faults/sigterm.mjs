// F5: SIGTERM under load (sign-ups, slow with their argon2 hash, and introspection, fast).
// Goals: every request fully sent before the signal is answered with success, and no 5xx
// answer at all except 503 to requests sent after it (once the listener is closed).
import { setTimeout as sleep } from 'node:timers/promises';
import { describeExit } from './durability.mjs';
import { agent, client, lanes, PASSWORD } from './lib/http.mjs';
import { stop, tempDir } from './lib/procs.mjs';
import { createTenant, startServer } from './lib/services.mjs';
import { signedIn } from './redis-outage.mjs';

export async function f5() {
  const dir = tempDir('sigterm');
  const env = { DATABASE_URL: `sqlite:${dir}/latchkey.db` };
  const tenant = await createTenant(env);
  const server = await startServer(env);
  try {
    const [session] = await signedIn(client(server.url, tenant.secretKey), 1, 'f5');
    const results = [];
    let n = 0;
    let exitedAt = null;
    server.child.exited.then(() => {
      exitedAt = performance.now();
    });
    const lane = (api, call) => async () => {
      const r = await call(api);
      results.push(r);
      if (r.status === 0) await sleep(50);
    };
    const shouldStop = () => exitedAt !== null && performance.now() - exitedAt > 500;
    const signUps = client(server.url, tenant.secretKey, agent());
    const checks = client(server.url, tenant.secretKey, agent());
    const load = Promise.all([
      lanes(
        3,
        lane(signUps, (api) =>
          api.post(
            '/v1/auth/sign-up',
            { email: `f5-${n++}@faults.example`, password: PASSWORD },
            { timeoutMs: 15_000 },
          ),
        ),
        { shouldStop },
      ),
      lanes(
        3,
        lane(checks, (api) =>
          api.post('/api/auth/introspect', { token: session.accessToken }, { timeoutMs: 15_000 }),
        ),
        { shouldStop },
      ),
    ]);
    await sleep(3000);
    const termAt = performance.now();
    server.child.kill('SIGTERM');
    const exit = await Promise.race([server.child.exited.then(() => 'exited'), sleep(20_000)]);
    await load;

    // In flight: fully sent before the signal, not yet answered when it came.
    const inFlight = results.filter(
      (r) => r.sentAt !== null && r.sentAt < termAt && r.started + r.ms > termAt,
    );
    const unfinished = inFlight.filter((r) => r.status < 200 || r.status >= 300);
    const bad5xx = results.filter(
      (r) => r.status >= 500 && !(r.status === 503 && r.sentAt !== null && r.sentAt >= termAt),
    );
    const after = results.filter((r) => r.sentAt === null || r.sentAt >= termAt);
    const count = (list, pick) => {
      const out = {};
      for (const r of list) out[pick(r)] = (out[pick(r)] ?? 0) + 1;
      return JSON.stringify(out).replaceAll('"', '');
    };
    const exitMs = exitedAt === null ? null : Math.round(exitedAt - termAt);
    const ok =
      exit === 'exited' && inFlight.length > 0 && unfinished.length === 0 && bad5xx.length === 0;
    return {
      ok,
      line:
        `F5 sigterm_under_load in_flight=${inFlight.length} in_flight_not_completed=${unfinished.length} (goal 0)` +
        ` 5xx_other_than_503_after_close=${bad5xx.length} (goal 0)` +
        ` after_signal=${count(after, (r) => r.status || r.error)}` +
        ` exit=${exit === 'exited' ? describeExit(server.child) : 'none within 20 s'} exit_ms=${exitMs ?? '-'}`,
    };
  } finally {
    await stop(server.child);
  }
}
