// What the pinned benches share: the load generator's CPU, and the median of their rounds.
import { spawnSync } from 'node:child_process';
import os from 'node:os';

/**
 * Moves this process (every thread: the load generator) to CPU 1, so that the server can run
 * on CPU 0 alone, as the goals are set. False (with a notice) on one core or without taskset:
 * then nothing is pinned.
 */
export function pinLoadToCpu1() {
  const pinned =
    os.availableParallelism() >= 2 &&
    spawnSync('taskset', ['-a', '-pc', '1', String(process.pid)]).status === 0;
  if (!pinned)
    console.log('notice: taskset unavailable or one core: server and load are not pinned');
  return pinned;
}

/** The median of the rounds' figures (the mean of the middle two for an even count). */
export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
