// The fault suite (issue 14): real processes, real faults, one figure per line.
// `npm run faults` builds, then runs every fault; `node faults/run.mjs F3 F4` runs some.
// Exit status 0 when every goal is met, 1 otherwise. See faults/README.md.
import { f1, f2 } from './durability.mjs';
import { f8 } from './fuzz.mjs';
import { f4 } from './instances.mjs';
import { startWatchdog } from './lib/procs.mjs';
import { f3 } from './redis-outage.mjs';
import { f6 } from './rotation.mjs';
import { f5 } from './sigterm.mjs';
import { f7 } from './stuffing.mjs';

/** Hard limit of the whole run; the watchdog kills everything past it. */
const DEADLINE_MS = Number(process.env.FAULTS_DEADLINE_MS) || 420_000;
/** F6 waits out the signing key's 120 s activation, so it runs beside the others. */
const BACKGROUND = new Set(['F6']);
const FAULTS = {
  F1: ['pg_kill_restart', f1],
  F2: ['sqlite_sigkill', f2],
  F3: ['redis_stop_kill', f3],
  F4: ['two_instances', f4],
  F5: ['sigterm_under_load', f5],
  F6: ['signing_key_rotation', f6],
  F7: ['credential_stuffing', f7],
  F8: ['fuzz_json_endpoints', f8],
};

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    console.error(`faults: ${signal}, cleaning up`);
    process.exit(130);
  });
}

async function run(id) {
  const [name, fn] = FAULTS[id];
  const t0 = performance.now();
  let result;
  try {
    result = await fn();
  } catch (error) {
    result = { ok: false, line: `${id} ${name} ERROR ${String(error.message).split('\n')[0]}` };
    console.error(`faults: ${id} failed to run:\n${error.stack ?? error}`);
  }
  const seconds = (performance.now() - t0) / 1000;
  const line = `${result.line} ${result.ok ? 'PASS' : 'FAIL'} (${seconds.toFixed(0)} s)`;
  console.log(line);
  return { id, ok: result.ok };
}

const wanted = process.argv.slice(2).map((a) => a.toUpperCase());
const ids = Object.keys(FAULTS).filter((id) => wanted.length === 0 || wanted.includes(id));
const unknown = wanted.filter((id) => !FAULTS[id]);
if (unknown.length) {
  console.error(`faults: unknown ${unknown.join(', ')}; known: ${Object.keys(FAULTS).join(' ')}`);
  process.exit(2);
}

startWatchdog(DEADLINE_MS);
const t0 = performance.now();
const background = ids.filter((id) => BACKGROUND.has(id)).map(run);
const results = [];
for (const id of ids.filter((i) => !BACKGROUND.has(i))) results.push(await run(id));
results.push(...(await Promise.all(background)));
results.sort((a, b) => a.id.localeCompare(b.id));
const failed = results.filter((r) => !r.ok).map((r) => r.id);
const total = (performance.now() - t0) / 1000;
console.log(
  `faults: ${results.length - failed.length}/${results.length} goals met` +
    (failed.length ? `, failing: ${failed.join(' ')}` : '') +
    ` (${total.toFixed(0)} s)`,
);
process.exit(failed.length ? 1 : 0);
