// The fault suite's watchdog, started detached by procs.mjs: when the suite's process has
// died, or the deadline has passed, SIGKILL every process group in the registry (and the
// suite itself, past the deadline) and remove the temporary directory.
import { readFileSync, rmSync } from 'node:fs';

const [parent, registry, root, deadlineMs] = process.argv.slice(2);
const deadline = Date.now() + Number(deadlineMs);

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function sweep() {
  let pids = [];
  try {
    pids = readFileSync(registry, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {}
  for (const pid of pids) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {}
  }
  rmSync(root, { recursive: true, force: true });
}

const timer = setInterval(() => {
  const overdue = Date.now() > deadline;
  if (alive(Number(parent)) && !overdue) return;
  if (overdue && alive(Number(parent))) {
    console.error(`faults: watchdog: over the ${Number(deadlineMs) / 1000} s deadline, killing`);
    process.kill(Number(parent), 'SIGKILL');
  }
  sweep();
  clearInterval(timer);
}, 500);
