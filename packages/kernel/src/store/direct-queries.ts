import type { CompiledQuery, ControlledTransaction, QueryResult } from 'kysely';
import type { KernelDatabase, KernelStore } from './kernel-database.js';

/** Runs a compiled query at once on the store's one connection: what kysely's driver would, without its queueing. */
export type DirectQuery = (compiled: CompiledQuery) => QueryResult<unknown>;

/** What a store with one in-process connection (SQLite) lets its units do without kysely's executor. */
export interface DirectStore {
  /** Runs a unit's compiled queries (K-9.22). */
  readonly run: DirectQuery;
  /** Begins a unit on the connection at once when it is free (K-9.25), else null: the unit then begins through kysely. */
  readonly beginUnit: () => ControlledTransaction<KernelDatabase> | null;
  /**
   * Commits a unit `beginUnit` began, on its connection at once (K-9.26), and releases the connection; a failed COMMIT
   * leaves it held, for the rollback. Null when `trx` is not such a unit: it then commits through kysely.
   */
  readonly commitUnit: (trx: ControlledTransaction<KernelDatabase>) => Promise<void> | null;
  /** Runs a compiled query at once when the connection is free (K-9.32), and frees it again; else null. */
  readonly runFree: (compiled: CompiledQuery) => QueryResult<unknown> | null;
}

const direct = new WeakMap<object, DirectStore>();

/**
 * Ties the root handle of a store with one in-process connection (SQLite) to its `DirectStore`, so its units begin and
 * run compiled queries without kysely's executor (K-9.22, K-9.25). Only for a store without kysely plugins: a plugin
 * may transform a query's result, which only kysely's executor applies.
 */
export function bindDirectQueries(db: KernelStore, store: DirectStore): void {
  direct.set(db, store);
}

/**
 * BEGIN on the root handle `db`: at once on its free connection when the store has a `DirectStore` (K-9.25), else (no
 * direct store, or its connection held or waited for) through kysely's `startTransaction`.
 *
 * @example
 * declare const db: KernelStore;
 * const trx = await beginTransaction(db);
 * await commitTransaction(db, trx);
 */
export function beginTransaction(db: KernelStore): ControlledTransaction<KernelDatabase> | Promise<ControlledTransaction<KernelDatabase>> {
  return direct.get(db)?.beginUnit() ?? db.startTransaction().execute();
}

/**
 * COMMIT of `trx`, begun on the root handle `db` by `beginTransaction`: at once on its connection when it was begun
 * so (K-9.26; `trx` then reads as committed, as after kysely's commit), else through kysely's `commit`.
 */
export function commitTransaction(db: KernelStore, trx: ControlledTransaction<KernelDatabase>): Promise<void> {
  return direct.get(db)?.commitUnit(trx) ?? trx.commit().execute();
}

/**
 * Runs `compiled` on the root handle `db` (outside any unit): at once on the store's connection when it is free
 * (K-9.32), as kysely's executor would run it less its connection provider's round of promises; else (no direct
 * store, a unit or query holding the connection, or one waiting for it) through kysely, which waits its turn. For
 * the reads a scheduling round makes on the root handle (the runnable set, the earliest timer). On a unit's handle
 * it is that handle's `executeQuery`.
 *
 * @example
 * declare const db: KernelStore;
 * const { rows } = await executeNow(db, db.selectFrom('processes').select('pid').where('status', '=', 'runnable').compile());
 */
export function executeNow<R>(db: KernelStore, compiled: CompiledQuery<R>): Promise<QueryResult<R>> {
  let now: QueryResult<unknown> | null;
  try {
    now = direct.get(db)?.runFree(compiled) ?? null;
  } catch (err) {
    return Promise.reject(err);
  }
  return now ? Promise.resolve(now as QueryResult<R>) : db.executeQuery(compiled);
}

/** What `executeQuery` takes: a compiled query, or a query builder kysely compiles first. */
type Executable = Parameters<ControlledTransaction<KernelDatabase>['executeQuery']>[0];

const isCompiled = (q: Executable): q is CompiledQuery =>
  typeof (q as { compile?: unknown }).compile !== 'function' && typeof (q as { sql?: unknown }).sql === 'string';

/**
 * Gives a unit's transaction `trx`, begun from `db`, an `executeQuery` that runs compiled queries directly while
 * `open()` (K-9.22). A unit's transaction holds the store's only connection from its BEGIN to its COMMIT, so nothing
 * else can run between, and a compiled query (every hot query is one: `preparedQuery`) needs none of what kysely's
 * executor does around it: a connection provider that queues queries (six promises a query), a state check, result
 * plugins. Builders, and any query once the unit has ended, still go through kysely. A store without a direct runner
 * (PostgreSQL, kysely plugins) is left as it is.
 *
 * @example
 * declare const db: KernelStore;
 * const trx = await db.startTransaction().execute();
 * directUnitQueries(db, trx, () => true);
 * await trx.executeQuery(trx.selectFrom('processes').selectAll().compile()); // runs on the connection at once
 */
export function directUnitQueries(db: KernelStore, trx: ControlledTransaction<KernelDatabase>, open: () => boolean): void {
  const run = direct.get(db)?.run;
  if (!run) return;
  const viaKysely = trx.executeQuery.bind(trx);
  const executeQuery = ((query: Executable, queryId?: unknown) => {
    if (!isCompiled(query) || !open()) return (viaKysely as (q: Executable, id?: unknown) => Promise<QueryResult<unknown>>)(query, queryId);
    try {
      return Promise.resolve(run(query));
    } catch (err) {
      return Promise.reject(err);
    }
  }) as ControlledTransaction<KernelDatabase>['executeQuery'];
  Object.defineProperty(trx, 'executeQuery', { value: executeQuery, configurable: true });
}
