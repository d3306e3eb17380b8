/**
 * `npm run bench` prints one verdict line per goal (bench/README.md). A figure rounded for
 * print must not read as the opposite of its verdict: 0.8973 against a goal of 0.90 printed
 * as "0.90 … FAIL", or a sign-up ratio of 0.844 as "0.8 (goal >= 0.85)".
 */
import { describe, expect, it } from 'vitest';

interface Figures {
  shownAtLeast(value: number, goal: number, digits?: number): string;
  shownBelow(value: number, goal: number, digits?: number): string;
}

// bench/ is plain JavaScript outside this package: loaded by URL, typed here.
const lib = (await import(new URL('../../../bench/lib.mjs', import.meta.url).href)) as Figures;

describe('a verdict line’s figure', () => {
  it('keeps two decimals when they tell the verdict truly', () => {
    expect(lib.shownAtLeast(0.9512, 0.9)).toBe('0.95');
    expect(lib.shownAtLeast(0.8412, 0.9)).toBe('0.84');
    expect(lib.shownAtLeast(0.9, 0.9)).toBe('0.90');
    expect(lib.shownBelow(4.47, 5)).toBe('4.47');
    expect(lib.shownBelow(6.761, 5)).toBe('6.76');
  });

  it('shows more decimals where two would read as meeting a goal it misses', () => {
    expect(lib.shownAtLeast(0.8973, 0.9)).toBe('0.897');
    expect(lib.shownAtLeast(0.84951, 0.85)).toBe('0.8495');
    expect(lib.shownBelow(5.004, 5)).toBe('5.00');
    expect(lib.shownBelow(4.9973, 5)).toBe('4.997');
  });

  it('never shows fewer decimals than its goal has, so it cannot read as missing a goal it meets', () => {
    expect(lib.shownAtLeast(0.7049, 0.7045)).toBe('0.7049');
    expect(lib.shownBelow(4.996, 4.999)).toBe('4.996');
    expect(lib.shownAtLeast(0.844, 0.85, 1)).toBe('0.84');
  });

  it('takes other precisions for figures printed with them', () => {
    expect(lib.shownBelow(7.44, 5, 1)).toBe('7.4');
    expect(lib.shownBelow(4.96, 5, 1)).toBe('4.96');
  });

  it('never hides a figure it cannot round truly', () => {
    expect(lib.shownAtLeast(0.89999999, 0.9)).toBe('0.89999999');
    expect(lib.shownAtLeast(Number.NaN, 0.9)).toBe('NaN');
  });
});
