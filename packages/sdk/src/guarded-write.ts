import type { LibosError } from './errors.js';
import type { CompiledLike } from './prepared-query.js';

/** What a guarded write must do: change exactly `rows` rows, else the unit fails with `error()`. */
export interface WriteGuard {
  readonly rows: number;
  readonly error: () => LibosError;
}

const GUARD = Symbol.for('libos.writeGuard');

/** The guard `query` carries (`runGuarded` marks it), if any: what a store driver that defers guarded writes reads. */
export const writeGuardOf = (query: object): WriteGuard | undefined => (query as { [GUARD]?: WriteGuard })[GUARD];

/** A store handle `runGuarded` runs on (a kysely handle or transaction): what it answers of a write. */
export interface GuardedExecutor<Q> {
  executeQuery(query: Q): Promise<{ readonly numAffectedRows?: bigint }>;
}

/**
 * Runs an optimistic write (an UPDATE or DELETE whose WHERE holds what the caller read) and fails the unit with
 * `guard.error()` unless it changed exactly `guard.rows` rows. A store that needs a round trip per statement
 * (PostgreSQL) may defer the write to the unit's next round trip instead, checking it there on the server: the
 * mismatch then fails that round trip, and the unit, with the same error. So call it only where the unit is still
 * undone if the write misses: nothing outside the store may act on it before the unit's next statement or COMMIT
 * (the kernel sends deferred writes before a tool with `policy.sideEffects` runs).
 *
 * @example
 * declare const store: { executeQuery(q: CompiledLike): Promise<{ numAffectedRows?: bigint }> };
 * declare const setCounters: CompiledLike, conflict: () => LibosError;
 * await runGuarded(store, setCounters, { rows: 1, error: conflict }); // throws conflict() unless 1 row changed
 */
export async function runGuarded<Q extends CompiledLike>(db: GuardedExecutor<NoInfer<Q>>, query: Q, guard: WriteGuard): Promise<void> {
  const marked = Object.assign({ ...query }, { [GUARD]: guard });
  const r = await db.executeQuery(marked);
  if (Number(r.numAffectedRows ?? 0n) !== guard.rows) throw guard.error();
}
