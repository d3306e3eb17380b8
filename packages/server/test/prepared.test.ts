/**
 * Queries compiled once and run with each call's values (storage/prepared.ts): the same
 * SQL and rows as the query built anew, on both databases, inside transactions too; and a
 * builder whose value would not reach the parameters is refused before any statement.
 */
import { type InsertResult, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  columnValues,
  type Database,
  migrateToLatest,
  openDatabase,
  prepared,
} from '../src/storage/index.js';
import { DIALECTS, freshDatabaseUrl } from './support.js';

interface Note {
  id: string;
  owner: string;
  body: string | null;
  at: number;
}
const NOTE_COLUMNS: Record<keyof Note, true> = { id: true, owner: true, body: true, at: true };

describe.each(DIALECTS)('prepared queries on %s', (dialect) => {
  let database: Database;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const fresh = await freshDatabaseUrl(dialect);
    drop = fresh.drop;
    database = openDatabase(fresh.url, { poolSize: 2 });
    await migrateToLatest(database.db as never);
    await sql`create table notes (id text primary key, owner text not null, body text, at bigint not null)`.execute(
      database.db,
    );
  });
  afterAll(async () => {
    await database.close();
    await drop();
  });

  // The schema's types do not know the test's table.
  const db = () => database.db.withTables<{ notes: Note }>();
  const insertNote = prepared<Note, InsertResult>((kysely, value) =>
    (kysely as unknown as ReturnType<typeof db>)
      .insertInto('notes')
      .values(columnValues(NOTE_COLUMNS, value)),
  );
  const notesOf = prepared<{ owner: string; after: number }, Note>((kysely, value) =>
    (kysely as unknown as ReturnType<typeof db>)
      .selectFrom('notes')
      .selectAll()
      .where('owner', '=', value('owner'))
      .where('at', '>', value('after'))
      .where('body', 'is not', null)
      .orderBy('at'),
  );
  const built = (owner: string, after: number) =>
    db()
      .selectFrom('notes')
      .selectAll()
      .where('owner', '=', owner)
      .where('at', '>', after)
      .where('body', 'is not', null)
      .orderBy('at');

  it('runs as the query built anew does, each call with its own values', async () => {
    const rows: Note[] = [
      { id: 'a', owner: 'ann', body: 'one', at: 1 },
      { id: 'b', owner: 'ann', body: null, at: 2 },
      { id: 'c', owner: 'ann', body: 'three, with ünïcode 😀 and a \u2028', at: 3 },
      { id: 'd', owner: 'bob', body: "it's; drop table notes; --", at: 4 },
    ];
    for (const row of rows) await insertNote(database.db, row);
    for (const [owner, after] of [
      ['ann', 0],
      ['ann', 1],
      ['bob', 0],
      ['nobody', 0],
    ] as const) {
      const { rows: got } = await notesOf(database.db, { owner, after });
      const expected = await built(owner, after).execute();
      expect(got.map((r) => ({ ...r, at: Number(r.at) }))).toEqual(
        expected.map((r) => ({ ...r, at: Number(r.at) })),
      );
    }
    expect((await notesOf(database.db, { owner: 'ann', after: 0 })).rows.map((r) => r.id)).toEqual([
      'a',
      'c',
    ]);
  });

  it("uses a transaction's connection, and its rollback undoes the write", async () => {
    const failed = database.db.transaction().execute(async (trx) => {
      await insertNote(trx, { id: 'tx', owner: 'tx', body: 'inside', at: 9 });
      expect((await notesOf(trx, { owner: 'tx', after: 0 })).rows).toHaveLength(1);
      throw new Error('roll back');
    });
    await expect(failed).rejects.toThrow('roll back');
    expect((await notesOf(database.db, { owner: 'tx', after: 0 })).rows).toEqual([]);
  });

  it("runs a plugin's transformation of each query, as Kysely does without it", async () => {
    const seen: string[] = [];
    const watched = database.db.withPlugin({
      transformQuery: (args) => {
        seen.push(args.node.kind);
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    await notesOf(database.db, { owner: 'ann', after: 0 });
    const { rows } = await notesOf(watched, { owner: 'ann', after: 0 });
    await notesOf(watched, { owner: 'bob', after: 0 });
    expect(seen).toEqual(['SelectQueryNode', 'SelectQueryNode']);
    expect(rows.map((r) => r.id)).toEqual(['a', 'c']);
  });

  it('refuses what it cannot prepare, and writes nothing', async () => {
    // A value changed on its way (here made JSON) never reaches the parameters as itself.
    const changed = prepared<{ owner: string }, Note>((kysely, value) =>
      (kysely as unknown as ReturnType<typeof db>)
        .selectFrom('notes')
        .selectAll()
        .where('body', '=', JSON.stringify(value('owner'))),
    );
    await expect(changed(database.db, { owner: 'ann' })).rejects.toThrow(
      'prepared query: owner did not reach its parameters',
    );
    // An undefined column: Kysely would leave it out, a prepared insert cannot.
    await expect(
      insertNote(database.db, { id: 'u', owner: 'u', body: undefined as never, at: 1 }),
    ).rejects.toThrow('prepared query: body is undefined');
    expect((await notesOf(database.db, { owner: 'u', after: 0 })).rows).toEqual([]);
  });
});
