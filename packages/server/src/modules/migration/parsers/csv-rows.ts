import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';

/**
 * The records of a CSV file with a header line (RFC 4180, as Clerk's dashboard and
 * PostgreSQL's `\copy … with csv header` write it), read as they arrive, each as a map from
 * column name to text, with the 1-based line the record starts on (a quoted field may span
 * lines). A record with the wrong number of fields comes back as an `error`, not a row.
 */
export async function* csvRecords(
  input: Readable,
): AsyncIterable<{ line: number; record?: Record<string, string>; error?: string }> {
  const parser = input.pipe(
    parse({
      columns: (header: string[]) => header.map((h) => h.trim()),
      bom: true,
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
    }),
  );
  let columns: number | undefined;
  let nextLine = 2;
  for await (const { record, info } of parser as AsyncIterable<{
    record: Record<string, string>;
    info: { lines: number; columns: boolean | { name: string }[] };
  }>) {
    const line = nextLine;
    nextLine = info.lines + 1;
    columns ??= Array.isArray(info.columns) ? info.columns.length : undefined;
    const fields = Object.keys(record).length;
    if (columns !== undefined && fields !== columns) {
      yield { line, error: `has ${fields} fields where the header has ${columns}` };
      continue;
    }
    yield { line, record };
  }
}
