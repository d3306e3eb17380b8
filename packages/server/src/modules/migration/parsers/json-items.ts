import type { Readable } from 'node:stream';
import { Tokenizer, TokenParser, TokenType } from '@streamparser/json';

/**
 * The elements of one JSON array inside a document, read as the bytes arrive (a million
 * users never sit in memory at once), each with the 1-based line its `{` or `[` opens on.
 * `path` is a JSONPath in @streamparser/json's syntax: `$.users.*` for Firebase's
 * `{"users": [...]}`, `$.*` for a top-level array.
 */
export async function* jsonArrayItems(
  input: Readable,
  path: string,
): AsyncIterable<{ line: number; value: unknown }> {
  // The elements sit one level below the array: `$.*` -> 2, `$.users.*` -> 3.
  const itemDepth = path.split('.').length;
  const tokenizer = new Tokenizer();
  const parser = new TokenParser({ paths: [path], keepStack: false });
  const starts: number[] = [];
  const ready: { line: number; value: unknown }[] = [];
  let depth = 0;
  let chunk: Buffer = Buffer.alloc(0);
  let chunkOffset = 0;
  // Where line counting has got to: `cursor` (a byte offset in the input) is on line `line`.
  let cursor = 0;
  let line = 1;
  const lineAt = (offset: number): number => {
    for (let i = cursor - chunkOffset; i < offset - chunkOffset; i++) if (chunk[i] === 0x0a) line++;
    cursor = offset;
    return line;
  };
  tokenizer.onToken = (t) => {
    if (t.token === TokenType.LEFT_BRACE || t.token === TokenType.LEFT_BRACKET) {
      depth++;
      if (depth === itemDepth) starts.push(lineAt(t.offset));
    } else if (t.token === TokenType.RIGHT_BRACE || t.token === TokenType.RIGHT_BRACKET) {
      depth--;
    }
    parser.write(t);
  };
  parser.onValue = ({ value }) => {
    // A scalar where an object belongs opened no container: it is on the current line.
    const isContainer = typeof value === 'object' && value !== null;
    ready.push({ line: (isContainer ? starts.shift() : undefined) ?? line, value });
  };
  tokenizer.onEnd = () => {
    if (!parser.isEnded) parser.end();
  };
  for await (const piece of input) {
    const bytes = typeof piece === 'string' ? Buffer.from(piece) : (piece as Buffer);
    // The rest of the previous chunk holds no token start any more: count its lines now.
    lineAt(chunkOffset + chunk.length);
    chunk = bytes;
    chunkOffset = cursor;
    try {
      tokenizer.write(bytes);
    } catch (error) {
      throw notJson(error, line);
    }
    yield* ready.splice(0);
  }
  try {
    if (!tokenizer.isEnded) tokenizer.end();
  } catch (error) {
    throw notJson(error, line);
  }
  yield* ready.splice(0);
}

/** A file that stops being JSON cannot be read on: say where (the line of the last token). */
const notJson = (error: unknown, line: number) =>
  new Error(`not valid JSON after line ${line}: ${(error as Error).message}`);
