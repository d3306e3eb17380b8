// F1 and F2: a sign-up that was answered 201 must survive the database or the server being
// killed. Sign-ups run on 4 lanes; the fault strikes mid-load; afterwards every acknowledged
// user is fetched back through the restarted service (GET /v1/users/{id}).
import { setTimeout as sleep } from 'node:timers/promises';
import { agent, client, lanes, PASSWORD } from './lib/http.mjs';
import { signalGroup, stop, tempDir } from './lib/procs.mjs';
import { cli, createTenant, ownPostgres, proxiedPostgres, startServer } from './lib/services.mjs';

const LANES = 4;
const CRASHES = 2;

/** Sign-ups until `state.stop`; every 201 is recorded with the user's id. */
function signUpLoad(api, state, tag) {
  let n = 0;
  return lanes(
    LANES,
    async () => {
      const email = `${tag}-${n++}-${Date.now()}@faults.example`;
      const r = await api().post(
        '/v1/auth/sign-up',
        { email, password: PASSWORD },
        { timeoutMs: 15_000 },
      );
      if (r.status === 201) state.acked.push({ id: r.json?.userId, email, at: performance.now() });
      else {
        state.failed[r.status || r.error] = (state.failed[r.status || r.error] ?? 0) + 1;
        await sleep(50); // a refused connection answers at once: do not spin
      }
      return r.status;
    },
    { shouldStop: () => state.stop },
  );
}

/** Acknowledged users the service cannot find any more (404), and ones it could not answer for. */
async function lostOf(api, acked) {
  let lost = 0;
  let unverified = 0;
  await lanes(
    8,
    async (i) => {
      const user = acked[i];
      for (let attempt = 0; attempt < 3; attempt++) {
        const r = await api.get(`/v1/users/${user.id}`);
        if (r.status === 200 && r.json?.email) return;
        if (r.status === 404) {
          lost++;
          return;
        }
        await sleep(200);
      }
      unverified++;
    },
    { count: acked.length },
  );
  return { lost, unverified };
}

export const describeExit = (child) => `${child.signalCode ?? `code_${child.exitCode}`}`;

const failedText = (failed) =>
  Object.entries(failed)
    .map(([k, v]) => `${k}:${v}`)
    .join(',') || 'none';

/** F1: the suite's own PostgreSQL is SIGKILLed (postmaster and backends) and restarted. */
export async function f1() {
  let cluster;
  let mode = 'own_cluster';
  try {
    cluster = await ownPostgres();
  } catch (error) {
    mode = `tcp_proxy_only(${error.message.split('\n')[0].replaceAll(' ', '_')})`;
    cluster = await proxiedPostgres();
  }
  const env = { DATABASE_URL: cluster.url };
  await cli(['migrate'], env);
  const tenant = await createTenant(env);
  let server = await startServer(env);
  const via = agent();
  const api = () => client(server.url, tenant.secretKey, via);
  const state = { acked: [], failed: {}, stop: false };
  try {
    const load = signUpLoad(api, state, 'f1');
    // Two crashes: whether one strikes while a connection is checked out is a matter of timing.
    const recoveries = [];
    for (let cycle = 0; cycle < CRASHES && server.child.alive(); cycle++) {
      await sleep(2500);
      await cluster.crash();
      await sleep(2000);
      await cluster.restart();
      const restartedAt = performance.now();
      // The load goes on until sign-ups are acknowledged again (at most 15 s).
      let recovered = null;
      while (
        recovered === null &&
        server.child.alive() &&
        performance.now() - restartedAt < 15_000
      ) {
        if (state.acked.filter((a) => a.at > restartedAt).length >= 5)
          recovered = (performance.now() - restartedAt) / 1000;
        else await sleep(100);
      }
      recoveries.push(recovered);
    }
    const recovered =
      recoveries.length === CRASHES && recoveries.every((r) => r !== null)
        ? Math.max(...recoveries)
        : null;
    state.stop = true;
    await load;
    const crashed = server.child.alive() ? 'no' : describeExit(server.child);
    if (crashed !== 'no') {
      // As a process manager would: start it again, to count what it had acknowledged.
      console.error(`faults: F1: the server exited:\n${server.child.output().slice(-1500)}`);
      server = await startServer(env, { port: server.port });
    }
    const { lost, unverified } = await lostOf(api(), state.acked);
    // The goal: nothing acknowledged is lost, and the server comes back by itself.
    const ok = lost === 0 && unverified === 0 && recovered !== null && crashed === 'no';
    return {
      ok,
      line:
        `F1 pg_kill_restart mode=${mode} crashes=${recoveries.length} acknowledged=${state.acked.length} acknowledged_lost=${lost} (goal 0, server recovers by itself)` +
        ` unverified=${unverified} recovered_after_s=${recovered?.toFixed(1) ?? 'never'} (worst)` +
        ` server_exited=${crashed}` +
        ` refused_during_outage=${failedText(state.failed)}`,
    };
  } finally {
    state.stop = true;
    await stop(server.child);
    if (cluster.child) await stop(cluster.child());
    else await cluster.close();
  }
}

/** F2: the server on SQLite is SIGKILLed mid-load, then started again on the same file. */
export async function f2() {
  const dir = tempDir('sqlite');
  const env = { DATABASE_URL: `sqlite:${dir}/latchkey.db` };
  const tenant = await createTenant(env);
  let server = await startServer(env);
  const via = agent();
  let current = server.url;
  const api = () => client(current, tenant.secretKey, via);
  const state = { acked: [], failed: {}, stop: false };
  try {
    const load = signUpLoad(api, state, 'f2');
    await sleep(3000);
    signalGroup(server.child, 'SIGKILL');
    await server.child.exited;
    state.stop = true;
    await load;
    via.destroy();
    const t0 = performance.now();
    let restart = 'clean';
    try {
      server = await startServer(env, { port: server.port, ready: '/readyz' });
    } catch (error) {
      restart = `failed (${error.message.split('\n')[0]})`;
    }
    const restartS = (performance.now() - t0) / 1000;
    current = server.url;
    const { lost, unverified } =
      restart === 'clean'
        ? await lostOf(api(), state.acked)
        : { lost: state.acked.length, unverified: 0 };
    // A clean restart also takes new sign-ups at once.
    const after = await api().post('/v1/auth/sign-up', {
      email: `f2-after-${Date.now()}@faults.example`,
      password: PASSWORD,
    });
    if (restart === 'clean' && after.status !== 201)
      restart = `no sign-up after restart (${after.status})`;
    const ok = lost === 0 && unverified === 0 && restart === 'clean' && state.acked.length > 0;
    return {
      ok,
      line:
        `F2 sqlite_sigkill acknowledged=${state.acked.length} acknowledged_lost=${lost} (goal 0)` +
        ` unverified=${unverified} restart=${restart} ready_after_s=${restartS.toFixed(1)}`,
    };
  } finally {
    state.stop = true;
    await stop(server.child);
  }
}
