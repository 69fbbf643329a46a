import type { ControlledTransaction } from 'kysely';
import { commitWithAppends } from './append-buffer.js';
import { beginTransaction, directUnitQueries } from './direct-queries.js';
import { bindMemo, memoForTransaction } from './memo-of.js';
import { undoAll } from './undo-hooks.js';
import type { KernelDatabase, KernelStore, KernelTransaction } from './kernel-database.js';

/**
 * A unit of work: one store transaction that groups the transactions a call or a phase of a quantum makes. Inside it,
 * each `inTransaction` is a SAVEPOINT: it still commits or rolls back on its own (a failed call's writes are undone,
 * its failure record kept), but nothing reaches the disk until the unit commits, once. So a call is one commit, and a
 * model turn two (before and after the model call), instead of one commit per step of the call path; and a crash
 * leaves a unit wholly there or wholly absent.
 *
 * The group keeps the semantics of separate transactions: work that completed inside the unit commits even when the
 * unit's body then throws (the error is rethrown after the commit). Effects that wait for a commit (`afterCommit`:
 * bus events to SSE and watchers) run when the unit commits; `onRollback` undo hooks of completed savepoints run if
 * the unit's commit fails.
 *
 * Events and audit records are buffered (`append-buffer.ts`), not written one statement per row: the rows of every
 * savepoint that ended well wait for the unit's COMMIT (or a read of those tables) and go as one multi-row insert per
 * table (K-9.27); a savepoint that rolls back drops its own. An insert that fails at the COMMIT fails the unit whole,
 * as a failed COMMIT does: nothing of it is stored, the undo hooks of its savepoints run, and the error is marked
 * (`isAppendFailure`) so a quantum fails its process for it as for a failure inside the unit.
 */
export interface UnitOfWork {
  /** Hooks of completed savepoints, run after the unit commits. */
  readonly commits: (() => void)[];
  /** Undo hooks of completed savepoints, run (newest first) if the unit itself rolls back. */
  readonly rollbacks: (() => void)[];
  /** The unit's transaction: each `inTransaction` inside the unit is a savepoint on it. */
  readonly trx: KernelTransaction;
  /** Savepoint names: `libos_sp_<n>`. */
  next: number;
  /** Savepoints open now (0: the next one opens directly in the unit). */
  depth: number;
  /**
   * The unit's body promises no store writes after a savepoint opened with `last` ends well (K-15.21), so that
   * savepoint's rows may carry the COMMIT. A write after it fails (`postgres/memo-driver.ts`); reads still run.
   */
  readonly endsAfterLast: boolean;
}

/** How a unit of work is opened. */
export interface UnitOptions {
  /** See `UnitOfWork.endsAfterLast`. Ignored when the handle already is a unit's (the enclosing unit decides). */
  readonly endsAfterLast?: boolean;
}

const units = new WeakMap<object, UnitOfWork>();

/** The unit a store handle belongs to, if it is a unit's transaction. */
export const unitOf = (db: KernelStore): UnitOfWork | undefined => units.get(db);

/**
 * Runs `fn` with a store handle bound to one new transaction (or, when `db` already is a unit's, inside that unit):
 * `fn` gets `withDb(trx)` and must use it for every store access (a query on the root handle would wait for the
 * unit's connection forever).
 *
 * @example
 * import { runCall } from '../call/pipeline.js';
 * import type { KernelDeps } from '../internal/kernel-deps.js';
 * const callInOneUnit = (deps: KernelDeps, tool: string) => inUnitOfWork(deps.db, (trx) => runCall({ ...deps, db: trx }, pid, tool, args));
 */
export async function inUnitOfWork<T>(db: KernelStore, fn: (trx: KernelStore) => Promise<T>, opts: UnitOptions = {}): Promise<T> {
  if (units.has(db)) return fn(db);
  const trx: ControlledTransaction<KernelDatabase> = await beginTransaction(db);
  bindMemo(trx, memoForTransaction(db));
  directUnitQueries(db, trx, () => units.has(trx));
  const unit: UnitOfWork = { commits: [], rollbacks: [], trx, next: 0, depth: 0, endsAfterLast: opts.endsAfterLast === true };
  units.set(trx, unit);
  let failure: { readonly error: unknown } | null = null;
  let result: T | undefined;
  try {
    result = await fn(trx);
  } catch (err) {
    failure = { error: err };
  }
  try {
    await commitWithAppends(db, trx);
  } catch (commitErr) {
    await rollbackUnit(trx, unit, failure?.error ?? commitErr);
    throw failure ? failure.error : commitErr;
  } finally {
    units.delete(trx);
  }
  for (const done of unit.commits) done();
  if (failure) throw failure.error;
  return result as T;
}

/** The unit's commit failed: roll it back (if SQLite has not already) and undo the in-memory effects of its work. */
async function rollbackUnit(trx: ControlledTransaction<KernelDatabase>, unit: UnitOfWork, cause: unknown): Promise<void> {
  const rollbackErrors: unknown[] = [];
  try {
    await trx.rollback().execute();
  } catch (err) {
    rollbackErrors.push(err);
  }
  undoAll(unit.rollbacks, cause, rollbackErrors);
}

/**
 * `inUnitOfWork` for anything that carries its store handle as `db` (the kernel's deps): `fn` gets a copy bound to
 * the unit's transaction.
 *
 * @example
 * import { runCall } from '../call/pipeline.js';
 * import type { KernelDeps } from '../internal/kernel-deps.js';
 * const callInOneUnit = (deps: KernelDeps, tool: string) => inDepsUnit(deps, (d) => runCall(d, pid, tool, args));
 */
export function inDepsUnit<D extends { readonly db: KernelStore }, T>(
  deps: D,
  fn: (bound: D) => Promise<T>,
  opts: UnitOptions = {},
): Promise<T> {
  return inUnitOfWork(deps.db, (db) => fn({ ...deps, db }), opts);
}
