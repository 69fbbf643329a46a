import { CompiledQuery, type Compilable, type QueryResult } from 'kysely';
import type { Db } from './store.js';

/** A stand-in for the n-th argument while the query is built: a string no caller passes. */
const slot = (i: number): string => `\u0000libos-arg-${i}\u0000`;

interface Template {
  readonly compiled: CompiledQuery;
  /** For each compiled parameter: the argument it takes (>= 0), or -1 when it is a constant of the query. */
  readonly from: readonly number[];
}

/**
 * A kysely query built and compiled once per store adapter (the dialect, SQLite or PostgreSQL, and the Kysely
 * plugins) and run again with new arguments through `db.executeQuery`: building and compiling cost more than a hot
 * statement itself. `build` gets placeholders for the arguments and must use each as a whole value.
 *
 * @example
 * const byPid = preparedQuery(1, (db, [pid]) => db.selectFrom('cap_budget_accounts').selectAll().where('pid', '=', pid));
 * const { rows } = await byPid.execute(db, ['pid_1']);
 */
export function preparedQuery<R = unknown>(
  arity: number,
  build: (db: Db, args: readonly string[]) => Compilable<R>,
): { execute(db: Db, args: readonly unknown[]): Promise<QueryResult<R>> } {
  const slots = Array.from({ length: arity }, (_, i) => slot(i));
  const templates = new WeakMap<object, Template>();
  const compile = (db: Db): Template => {
    const compiled = build(db, slots).compile();
    const from = compiled.parameters.map((p) => (typeof p === 'string' ? slots.indexOf(p) : -1));
    return { compiled, from };
  };
  return {
    execute(db, args) {
      // The adapter is one per Kysely instance, shared by its transactions: one compile per store.
      const key = (db as { getExecutor?: () => { adapter: object } }).getExecutor?.().adapter;
      let t = key ? templates.get(key) : undefined;
      if (!t) {
        t = compile(db);
        if (key) templates.set(key, t);
      }
      const { compiled, from } = t;
      const parameters = from.map((i, at) => (i === -1 ? compiled.parameters[at] : args[i]));
      return db.executeQuery<R>({ ...CompiledQuery.raw(compiled.sql, parameters), query: compiled.query });
    },
  };
}
