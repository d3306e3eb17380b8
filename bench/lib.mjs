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

/** Decimal places of a goal as written (0.85: 2; 5: 0). */
function places(goal) {
  const text = String(goal);
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}

/**
 * A figure as a verdict line prints it: `digits` decimals, and never fewer than its goal has,
 * more where the rounded figure would read as the opposite of its verdict (0.8973 against
 * a goal of 0.90 is "0.897", not "0.90"), its full value where four more do not settle it.
 */
function shown(value, goal, meets, digits) {
  const first = Math.max(digits, places(goal));
  for (let d = first; d < first + 4; d++) {
    const text = value.toFixed(d);
    if (meets(Number(text), goal) === meets(value, goal)) return text;
  }
  return String(value);
}

/** A figure whose goal is a floor (a ratio of at least `goal`). */
export function shownAtLeast(value, goal, digits = 2) {
  return shown(value, goal, (v, g) => v >= g, digits);
}

/** A figure whose goal is a ceiling (a latency or a cost under `goal`). */
export function shownBelow(value, goal, digits = 2) {
  return shown(value, goal, (v, g) => v < g, digits);
}
