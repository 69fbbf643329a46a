import type { StoreMemo } from '@libos/sdk';

const memos = new WeakMap<object, StoreMemo>();

/**
 * The store memo behind a store handle (the root `Kysely` or a transaction begun from it), so code that is handed
 * only a handle reads through the memo too. Handles without one (another adapter, a test's bare Kysely) read the
 * store directly.
 *
 * @example
 * const trx = await db.startTransaction().execute();
 * bindMemo(trx, memoOf(db)); // the transaction shares its root handle's memo
 */
export const memoOf = (db: object): StoreMemo | undefined => memos.get(db);

/** Ties `handle` to `memo` (no-op without one). */
export function bindMemo(handle: object, memo: StoreMemo | undefined): void {
  if (memo) memos.set(handle, memo);
}

/**
 * `load()` through the memo of `db` (see `StoreMemo.read`), or straight `load()` when `db` has none.
 *
 * @example
 * const row = await readThrough(db, ['processes'], `process:${pid}`, () =>
 *   db.selectFrom('processes').selectAll().where('pid', '=', pid).executeTakeFirst(),
 * );
 */
export function readThrough<T>(db: object, tables: readonly string[], key: string, load: () => Promise<T>): Promise<T> {
  const memo = memos.get(db);
  return memo ? memo.read(key, tables, load) : load();
}
