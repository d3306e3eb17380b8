import { parseArgs } from 'node:util';

export class UsageError extends Error {
  override name = 'UsageError';
}

type OptionSpec = Record<
  string,
  { type: 'string' | 'boolean'; multiple?: boolean; short?: string }
>;

/** node:util parseArgs, with unknown flags reported as usage errors. */
export function parse<T extends OptionSpec>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function integer(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a positive integer`);
  return Number(value);
}

/** `words` names the two answers as the flag's help does (`true or false`, `on or off`). */
export function bool(
  value: string | undefined,
  flag: string,
  words = 'true or false',
): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true' || value === 'on' || value === 'yes') return true;
  if (value === 'false' || value === 'off' || value === 'no') return false;
  throw new UsageError(`${flag} must be ${words}`);
}

export function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required`);
  return value;
}
