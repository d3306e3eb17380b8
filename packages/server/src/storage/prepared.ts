import {
  type Compilable,
  type CompiledQuery,
  createQueryId,
  type DialectAdapter,
  type Kysely,
  type QueryResult,
  type RawBuilder,
} from 'kysely';
import type { Schema } from './schema.js';

/** Where a prepared query's value goes, while it is built and compiled once. */
class Slot {
  constructor(readonly name: string) {}
}

/** The value `name` of a prepared query, as its builder writes it (see `prepared`). */
export type Values<Params> = <K extends keyof Params & string>(name: K) => Params[K];

interface Template<Row> {
  query: CompiledQuery<Row>;
  /** Per parameter, the value it takes at each run; undefined: the compiled one. */
  slots: (string | undefined)[];
}

/**
 * A query built and compiled once per dialect, then run with each call's values. Kysely
 * builds every query anew (frozen nodes, parsed and visited into SQL), which costs more
 * than SQLite takes to run a small statement; on a path taken tens of times a second
 * that code is never optimised. A sign-in spent a fifth of its main thread there.
 *
 * `build` writes the query with `value('name')` wherever a value of the call goes. Each
 * must reach the compiled parameters as it is: a comparison's operand, an inserted
 * column's value, a `sql` template's value; not a list whose length varies, nor anything
 * the query's shape depends on (those make different SQL, so build them each time). A
 * value that does not arrive there is refused at the first run, before any statement.
 */
export function prepared<Params extends object, Row>(
  build: (db: Kysely<Schema>, value: Values<Params>) => Compilable<Row> | RawBuilder<Row>,
): (db: Kysely<Schema>, values: Params) => Promise<QueryResult<Row>> {
  // Keyed by the dialect's adapter: a transaction's Kysely is new each time, its SQL is not.
  const templates = new WeakMap<DialectAdapter, Template<Row>>();
  const templateFor = (db: Kysely<Schema>): Template<Row> => {
    const adapter = db.getExecutor().adapter;
    const known = templates.get(adapter);
    if (known) return known;
    const used = new Set<string>();
    const built = build(db, ((name: string) => {
      used.add(name);
      return new Slot(name);
    }) as Values<Params>);
    const query = compile(built, db);
    const slots = query.parameters.map((p) => (p instanceof Slot ? p.name : undefined));
    const lost = [...used].filter((name) => !slots.includes(name));
    if (lost.length)
      throw new Error(`prepared query: ${lost.join(', ')} did not reach its parameters`);
    const template = { query, slots };
    templates.set(adapter, template);
    return template;
  };
  return async (db, values) => {
    // A plugin transforms each query as it is compiled (the tests' query counter): built
    // and compiled anew, as without prepared().
    if (db.getExecutor().plugins.length > 0) {
      const value = (name: string) => (values as Record<string, unknown>)[name];
      return await db.executeQuery<Row>(compile(build(db, value as Values<Params>), db));
    }
    const { query, slots } = templateFor(db);
    const parameters = slots.map((name, i) => {
      if (name === undefined) return query.parameters[i];
      const value = (values as Record<string, unknown>)[name];
      // Kysely leaves out an undefined column; a prepared insert cannot.
      if (value === undefined) throw new TypeError(`prepared query: ${name} is undefined`);
      return value;
    });
    return await db.executeQuery<Row>({ ...query, parameters, queryId: createQueryId() });
  };
}

function compile<Row>(built: Compilable<Row> | RawBuilder<Row>, db: Kysely<Schema>) {
  return 'isRawBuilder' in built ? built.compile(db) : built.compile();
}

/** An insert's `values` of every column of `columns`, each a value of the call. */
export function columnValues<R>(columns: Record<keyof R & string, true>, value: Values<R>): R {
  const row: Record<string, unknown> = {};
  for (const name of Object.keys(columns)) row[name] = value(name as keyof R & string);
  return row as R;
}
