import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

/** The non-blank lines of a text stream with their 1-based numbers, read as they arrive. */
export async function* numberedLines(
  input: Readable,
): AsyncIterable<{ line: number; text: string }> {
  let line = 0;
  for await (const text of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    line++;
    if (text.trim() !== '') yield { line, text };
  }
}
