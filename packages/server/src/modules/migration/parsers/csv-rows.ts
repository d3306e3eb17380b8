import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';

/**
 * The records of a CSV file with a header line (RFC 4180, as Clerk's dashboard and
 * PostgreSQL's `\copy … with csv header` write it), read as they arrive, each as a map from
 * column name to text, with the 1-based line the record starts on (a quoted field may span
 * lines). A record with the wrong number of fields comes back as an `error`, not a row;
 * a header without the `required` columns stops the read.
 */
export async function* csvRecords(
  input: Readable,
  required: { format: string; columns: string[] },
): AsyncIterable<{ line: number; record?: Record<string, string>; error?: string }> {
  const parser = input.pipe(
    parse({ bom: true, info: true, relax_column_count: true, skip_empty_lines: true }),
  );
  let header: string[] | undefined;
  for await (const { record, info } of parser as AsyncIterable<{
    record: string[];
    info: { lines: number };
  }>) {
    // `lines` is the line the record ends on; a quoted field may have carried it over lines.
    const line = info.lines - record.reduce((n, f) => n + (f.match(/\n/g)?.length ?? 0), 0);
    if (!header) {
      header = record.map((h) => h.trim());
      const missing = required.columns.filter((c) => !header?.includes(c));
      // Another file than the one expected: every row would be refused, so say it once.
      if (missing.length > 0)
        throw new Error(`not ${required.format}: the header line has no ${missing.join(', ')}`);
      continue;
    }
    if (record.length !== header.length) {
      yield { line, error: `has ${record.length} fields where the header has ${header.length}` };
      continue;
    }
    yield { line, record: Object.fromEntries(header.map((h, i) => [h, record[i] as string])) };
  }
}
