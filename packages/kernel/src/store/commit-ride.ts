import type { CompiledQuery } from 'kysely';

const RIDES_COMMIT = Symbol('libos.ridesCommit');

/**
 * A transaction's last statement, marked so the store driver may send the COMMIT in the same round trip (K-15.21):
 * PostgreSQL's driver (`postgres/memo-driver.ts`) then answers the following `commit()` without going to the server.
 * A driver that does not look for the mark runs the statement as it is, and the COMMIT after it as usual.
 *
 * @example
 * declare const insert: CompiledQuery;
 * ridesCommit(withCommit(insert)); // true
 */
export const withCommit = <R>(query: CompiledQuery<R>): CompiledQuery<R> => Object.assign({ ...query }, { [RIDES_COMMIT]: true });

/** Whether `query` was marked by `withCommit`. */
export const ridesCommit = (query: CompiledQuery): boolean => (query as { [RIDES_COMMIT]?: boolean })[RIDES_COMMIT] === true;
