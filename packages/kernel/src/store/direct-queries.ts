import type { CompiledQuery, ControlledTransaction, QueryResult } from 'kysely';
import type { KernelDatabase, KernelStore } from './kernel-database.js';

/** Runs a compiled query at once on the store's one connection: what kysely's driver would, without its queueing. */
export type DirectQuery = (compiled: CompiledQuery) => QueryResult<unknown>;

const direct = new WeakMap<object, DirectQuery>();

/**
 * Ties the root handle of a store with one in-process connection (SQLite) to a `DirectQuery`, so its units can run
 * compiled queries without kysely's executor (K-9.22). Only for a store without kysely plugins: a plugin may transform
 * a query's result, which only kysely's executor applies.
 */
export function bindDirectQueries(db: KernelStore, run: DirectQuery): void {
  direct.set(db, run);
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
  const run = direct.get(db);
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
