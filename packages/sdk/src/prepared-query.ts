/** A compiled query as kysely makes one (`CompiledQuery`): its SQL text and its parameters, in order. */
export interface CompiledLike {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/** A stand-in for the n-th argument while the query is built: a string no caller passes. */
const slot = (i: number): string => `\u0000libos-arg-${i}\u0000`;

interface Template<C> {
  readonly compiled: C;
  /** For each compiled parameter: the argument it takes (>= 0), or -1 when it is a constant of the query. */
  readonly from: readonly number[];
}

/** The store adapter of a kysely handle: one per Kysely instance, shared by its transactions (kysely's `getExecutor`). */
const adapterOf = (handle: object): object | undefined =>
  (handle as { getExecutor?: () => { readonly adapter?: object } }).getExecutor?.().adapter;

/**
 * A hot query built and compiled once per store adapter (its dialect, SQLite or PostgreSQL, and its kysely plugins),
 * then bound to new arguments: building and compiling a kysely query costs more than running a hot statement. `build`
 * gets one placeholder per argument and must use each as a whole value: one element of an `in` list is fine, a whole
 * list passed as one argument is not (its length is part of the SQL: use `preparedQueryPerSize`), nor is a computed text.
 * The result is a compiled query for `handle.executeQuery`, so every dialect runs it and every store adapter sees it.
 *
 * @example
 * const byPid = preparedQuery(1, (h: typeof db, [pid]) => h.selectFrom('processes').selectAll().where('pid', '=', pid!));
 * const { rows } = await db.executeQuery(byPid(db, ['pid_1']));
 */
export function preparedQuery<H extends object, C extends CompiledLike>(
  arity: number,
  build: (handle: H, args: readonly string[]) => { compile(): C },
): (handle: H, args: readonly unknown[]) => C {
  const slots = Array.from({ length: arity }, (_, i) => slot(i));
  const templates = new WeakMap<object, Template<C>>();
  const compile = (handle: H): Template<C> => {
    const compiled = build(handle, slots).compile();
    return { compiled, from: compiled.parameters.map((p) => (typeof p === 'string' ? slots.indexOf(p) : -1)) };
  };
  return (handle, args) => {
    const key = adapterOf(handle);
    let t = key ? templates.get(key) : undefined;
    if (!t) {
      t = compile(handle);
      if (key) templates.set(key, t);
    }
    const { compiled, from } = t;
    const parameters = new Array<unknown>(from.length);
    for (let at = 0; at < from.length; at++) {
      const i = from[at]!;
      parameters[at] = i === -1 ? compiled.parameters[at] : args[i];
    }
    return { ...compiled, parameters };
  };
}

/**
 * `preparedQuery` for a statement whose shape depends on a size (the length of an `in` list, the rows of a multi-row
 * insert): one prepared query per size, made on first use, each compiled once per store adapter.
 *
 * @example
 * const byOids = preparedQueryPerSize(
 *   (n) => n,
 *   (h: typeof db, oids) => h.selectFrom('om_objects').selectAll().where('oid', 'in', oids),
 * );
 * const { rows } = await db.executeQuery(byOids(2)(db, ['obj_1', 'obj_2']));
 */
export function preparedQueryPerSize<H extends object, C extends CompiledLike>(
  arity: (size: number) => number,
  build: (handle: H, args: readonly string[], size: number) => { compile(): C },
): (size: number) => (handle: H, args: readonly unknown[]) => C {
  const bySize = new Map<number, (handle: H, args: readonly unknown[]) => C>();
  return (size) => {
    let query = bySize.get(size);
    if (!query) bySize.set(size, (query = preparedQuery<H, C>(arity(size), (handle, args) => build(handle, args, size))));
    return query;
  };
}
